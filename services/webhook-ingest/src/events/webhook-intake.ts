import type { EventBus } from '@payments/service-kit';
import { isPublishable, type WebhookEventRepository } from '../data/webhook-event-repository.js';
import type { LedgerPayments } from '../data/ledger-payments.js';
import { lacksPaymentTerms, withPaymentTerms, type IncomingWebhookEvent } from '../domain/webhook-event.js';
import type { WebhookMetrics } from '../webhook-metrics.js';
import { publishPaymentProcessed } from './payment-processed-publisher.js';

/** `published` now; `recorded` without effect; `duplicate`: already published, or published by a concurrent call. */
export type IntakeResult = 'published' | 'recorded' | 'duplicate';

export interface WebhookIntake {
  /** Records the event, publishes its PaymentProcessed with a broker confirm and marks it published. */
  ingest(event: IncomingWebhookEvent, correlationId: string): Promise<IntakeResult>;
}

export interface WebhookIntakeDeps {
  events: WebhookEventRepository;
  bus: Pick<EventBus, 'publish'>;
  metrics: WebhookMetrics;
  payments: Pick<LedgerPayments, 'termsOf'>;
  /** Told when an event it recorded is left unpublished (the republisher then looks once that event is due). */
  onUnpublished?: (receivedAt: Date) => void;
}

/**
 * The delivery guarantee: an event is recorded before anything else and answered 200 only once its
 * PaymentProcessed is confirmed by the broker: published at least once, and the ledger's inbox makes it take
 * effect once. A redelivery publishes again whatever is still unpublished, even if another process may be
 * publishing it at that moment. Any failure throws, the caller answers 500, and the provider's retry (or the
 * republisher) picks up where this left off.
 */
export function createWebhookIntake({
  events,
  bus,
  metrics,
  payments,
  onUnpublished,
}: WebhookIntakeDeps): WebhookIntake {
  // Deliveries of one event that overlap in this process wait for the first one and share its outcome.
  const inProgress = new Map<string, Promise<IntakeResult>>();

  const handle = async (given: IncomingWebhookEvent, correlationId: string): Promise<IntakeResult> => {
    // Every completion published says what was paid; the ledger fails one that does not.
    const event =
      given.payment && lacksPaymentTerms(given)
        ? withPaymentTerms(given, await payments.termsOf(given.payment.transaction_id, correlationId))
        : given;
    const { record, isNew } = await events.record(event);
    if (!isPublishable(record) || record.publishedAt) {
      if (!isNew) metrics.duplicate(event);
      return isNew ? 'recorded' : 'duplicate';
    }
    try {
      await publishPaymentProcessed({ bus, events }, record, correlationId);
    } catch (error) {
      onUnpublished?.(record.receivedAt);
      throw error;
    }
    metrics.published(event);
    return 'published';
  };

  return {
    async ingest(event, correlationId) {
      metrics.received(event);
      const first = inProgress.get(event.eventId);
      if (first) {
        await first;
        metrics.duplicate(event);
        return 'duplicate';
      }
      const handling = handle(event, correlationId).finally(() => inProgress.delete(event.eventId));
      inProgress.set(event.eventId, handling);
      return handling;
    },
  };
}
