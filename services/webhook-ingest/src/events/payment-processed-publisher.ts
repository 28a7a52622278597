import { createEvent } from '@payments/contracts';
import type { EventBus } from '@payments/service-kit';
import type { PublishableRecord, WebhookEventRepository } from '../data/webhook-event-repository.js';
import { envelopeIdOf } from '../domain/webhook-event.js';

export interface PaymentProcessedPublisherDeps {
  bus: Pick<EventBus, 'publish'>;
  events: Pick<WebhookEventRepository, 'markPublished'>;
}

/**
 * Publishes a recorded event's PaymentProcessed (a refund's or dispute's PaymentAdjusted, an account.updated's
 * PayoutAccountUpdated), waits for the broker's
 * confirm, then marks the record published.
 * Publishing one event again is harmless: its envelope id comes from the event id, and the ledger's inbox drops
 * the copy.
 */
export async function publishPaymentProcessed(
  { bus, events }: PaymentProcessedPublisherDeps,
  record: PublishableRecord,
  correlationId: string,
): Promise<void> {
  const options = { id: envelopeIdOf(record.eventId), correlationId, occurredAt: record.receivedAt };
  if (record.payment) await bus.publish(createEvent('PaymentProcessed', record.payment, options));
  else if ('adjustment' in record && record.adjustment)
    await bus.publish(createEvent('PaymentAdjusted', record.adjustment, options));
  else if ('payoutAccount' in record && record.payoutAccount)
    await bus.publish(createEvent('PayoutAccountUpdated', record.payoutAccount, options));
  await events.markPublished(record.eventId);
}
