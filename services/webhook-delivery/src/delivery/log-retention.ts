import type { Logger } from '@payments/service-kit';
import type { DeliveryRepository } from '../data/delivery-repository.js';

const BATCH = 1000;

/**
 * Keeps the delivery log bounded: finished deliveries (and their attempts) older than the retention go, in batches,
 * every `intervalMs`. Pending ones stay whatever their age.
 */
export function startLogRetention(options: {
  deliveries: DeliveryRepository;
  retentionMs: number;
  intervalMs: number;
  logger: Logger;
}): { stop(): void } {
  const prune = async () => {
    const before = new Date(Date.now() - options.retentionMs);
    let removed = 0;
    for (;;) {
      const batch = await options.deliveries.pruneFinished(before, BATCH);
      removed += batch;
      if (batch < BATCH) break;
    }
    if (removed > 0)
      options.logger.info({ removed }, 'pruned finished webhook deliveries past their retention');
  };
  const timer = setInterval(() => {
    prune().catch((error: unknown) =>
      options.logger.warn({ err: error }, 'could not prune webhook deliveries'),
    );
  }, options.intervalMs);
  timer.unref();
  return { stop: () => clearInterval(timer) };
}
