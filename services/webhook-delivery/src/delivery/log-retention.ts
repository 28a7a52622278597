import type { Logger } from '@payments/service-kit';
import type { DeliveryRepository } from '../data/delivery-repository.js';
import type { EventRepository } from '../data/event-repository.js';

const BATCH = 1000;

/** How long the events API keeps an event, as Stripe keeps them: 30 days. */
export const EVENT_RETENTION_MS = 30 * 86_400_000;

/** Deletes in batches until a batch comes back short; how many in all. */
async function pruneAll(batch: (limit: number) => Promise<number>): Promise<number> {
  let removed = 0;
  for (;;) {
    const n = await batch(BATCH);
    removed += n;
    if (n < BATCH) return removed;
  }
}

/**
 * Keeps the delivery log and the events bounded, every `intervalMs`, in batches: finished deliveries (and their
 * attempts) older than the retention go, pending ones stay whatever their age; events go after 30 days.
 */
export function startLogRetention(options: {
  deliveries: DeliveryRepository;
  events: EventRepository;
  retentionMs: number;
  intervalMs: number;
  logger: Logger;
}): { stop(): void } {
  const prune = async () => {
    const eventsBefore = new Date(Date.now() - EVENT_RETENTION_MS);
    const events = await pruneAll((limit) => options.events.pruneOlderThan(eventsBefore, limit));
    if (events > 0) options.logger.info({ removed: events }, 'pruned events older than 30 days');
    const before = new Date(Date.now() - options.retentionMs);
    const removed = await pruneAll((limit) => options.deliveries.pruneFinished(before, limit));
    if (removed > 0)
      options.logger.info({ removed }, 'pruned finished webhook deliveries past their retention');
  };
  const timer = setInterval(() => {
    prune().catch((error: unknown) =>
      options.logger.warn({ err: error }, 'could not prune webhook deliveries or events'),
    );
  }, options.intervalMs);
  timer.unref();
  return { stop: () => clearInterval(timer) };
}
