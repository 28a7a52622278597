import { startPoller, type EventBus, type Logger } from '@payments/service-kit';
import type { PublishableRecord, WebhookEventRepository } from '../data/webhook-event-repository.js';
import { envelopeIdOf } from '../domain/webhook-event.js';
import type { WebhookMetrics } from '../webhook-metrics.js';
import { publishPaymentProcessed } from './payment-processed-publisher.js';

export interface RepublisherOptions {
  events: WebhookEventRepository;
  bus: Pick<EventBus, 'publish'>;
  metrics: WebhookMetrics;
  logger: Logger;
  intervalMs: number;
  /** How long an event with an effect may stay unpublished before a pass publishes it. */
  afterSeconds: number;
}

export interface Republisher {
  /** One pass now; resolves with how many events it published. */
  runOnce(): Promise<number>;
  /** An event recorded then was left unpublished in this process: a pass once it is due, however idle. */
  leftUnpublished(receivedAt: Date): void;
  stop(): Promise<void>;
}

/** Events published per database transaction of a pass; a pass takes batches until one comes back short. */
const BATCH = 100;
/** A pass asked for by leftUnpublished comes this long after the event is due (`received_at` is the database's). */
const DUE_MARGIN_MS = 100;

/**
 * Publishes the events whose webhook call recorded them but did not see them published (the process died, or
 * the broker was down and the provider gave up after its 500), so no deposit waits on a provider's retry.
 * Every process runs one; a database lock lets one pass at a time through, so they do not publish the same rows.
 * Idle, it looks every few intervals: an event this process left unpublished asks for a pass when it is due, and
 * what only the poll finds is what a process that died left.
 */
export function startRepublisher(options: RepublisherOptions): Republisher {
  const { events, bus, metrics, logger } = options;
  let running: Promise<number> | null = null;
  let stopped = false;
  let failedPasses = 0;

  const republishOne = async (record: PublishableRecord) => {
    await publishPaymentProcessed({ bus, events }, record, `republish:${envelopeIdOf(record.eventId)}`);
    metrics.republished(record);
  };

  const republish = async (records: PublishableRecord[]): Promise<number> => {
    const outcomes = await Promise.allSettled(records.map(republishOne));
    const failures = outcomes.flatMap((outcome) => (outcome.status === 'rejected' ? [outcome.reason] : []));
    if (failures.length > 0) {
      throw new AggregateError(
        failures,
        `${failures.length} of ${records.length} events were not republished`,
      );
    }
    return records.length;
  };

  const pass = async (): Promise<number> => {
    let published = 0;
    while (!stopped) {
      const count = await events.withUnpublished(
        { olderThanSeconds: options.afterSeconds, limit: BATCH },
        republish,
      );
      // null: another process is on it.
      if (count === null) break;
      if (count > 0)
        logger.warn({ count }, 'published webhook events that their webhook call left unpublished');
      published += count;
      if (count < BATCH) break;
    }
    return published;
  };

  const runOnce = () => {
    running ??= pass().finally(() => {
      running = null;
    });
    return running;
  };

  const poller = startPoller({
    // Idle, up to five intervals between passes.
    intervalMs: options.intervalMs,
    // A pass already going (runOnce) is joined, not doubled.
    task: async () => {
      const published = await runOnce();
      failedPasses = 0;
      return published > 0;
    },
    onError: (error) => {
      failedPasses += 1;
      // A broker or database outage fails every pass; say so at its start and then now and again.
      if (failedPasses === 1 || failedPasses % 30 === 0) {
        logger.warn({ err: error, failedPasses }, 'republishing webhook events failed; will retry');
      }
    },
  });

  return {
    runOnce,
    leftUnpublished(receivedAt) {
      poller.wakeAt(receivedAt.getTime() + options.afterSeconds * 1000 + DUE_MARGIN_MS);
    },
    async stop() {
      stopped = true;
      await poller.stop();
      await running?.catch(() => undefined);
    },
  };
}
