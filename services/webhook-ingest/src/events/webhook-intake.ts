import { createEvent } from '@payments/contracts';
import type { EventBus } from '@payments/service-kit';
import type { WebhookEventRepository } from '../data/webhook-event-repository.js';
import { envelopeIdOf, type IncomingWebhookEvent } from '../domain/webhook-event.js';
import type { WebhookMetrics } from '../webhook-metrics.js';

/** `published` now; `recorded` without effect; `duplicate`: seen and handled before, nothing done. */
export type IntakeResult = 'published' | 'recorded' | 'duplicate';

export interface WebhookIntake {
  /** Records the event, publishes its PaymentProcessed with a broker confirm and marks it published. */
  ingest(event: IncomingWebhookEvent, correlationId: string): Promise<IntakeResult>;
}

export interface WebhookIntakeDeps {
  events: WebhookEventRepository;
  bus: EventBus;
  metrics: WebhookMetrics;
}

/**
 * The delivery guarantee: an event is recorded before anything else, answered 200 only once published, and a
 * redelivery publishes only what is still unpublished. Any failure throws, the caller answers 500, and the
 * provider's retry picks up where this left off.
 */
export function createWebhookIntake({ events, bus, metrics }: WebhookIntakeDeps): WebhookIntake {
  return {
    async ingest(event, correlationId) {
      metrics.received(event);
      const { record, isNew } = await events.record(event);
      const payment = record.payment;
      if (!payment || record.publishedAt) {
        if (!isNew) metrics.duplicate(event);
        return isNew ? 'recorded' : 'duplicate';
      }
      const outcome = await events.publishOnce(record.eventId, (locked) =>
        bus.publish(
          createEvent('PaymentProcessed', payment, {
            id: envelopeIdOf(locked.eventId),
            correlationId,
            occurredAt: locked.receivedAt,
          }),
        ),
      );
      if (outcome === 'already-published') {
        metrics.duplicate(event);
        return 'duplicate';
      }
      metrics.published(event);
      return 'published';
    },
  };
}
