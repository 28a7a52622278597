import { randomUUID } from 'node:crypto';
import type { IncomingWebhookEvent } from '../src/domain/webhook-event.js';

/** A provider's payment_intent.succeeded as the routes hand it to the intake: an event with an effect. */
export function completedPayment(payload: unknown = {}): IncomingWebhookEvent {
  const transactionId = randomUUID();
  return {
    eventId: `evt_${randomUUID()}`,
    source: 'provider',
    type: 'payment_intent.succeeded',
    payload,
    payment: {
      transaction_id: transactionId,
      payment_id: transactionId,
      status: 'completed',
      source: 'provider',
      amount: 1000,
      currency: 'USD',
    },
  };
}

/** A pending status: recorded, with no effect. */
export function pendingPayment(): IncomingWebhookEvent {
  return {
    eventId: `payment:${randomUUID()}:pending`,
    source: 'payment',
    type: 'pending',
    payload: {},
    payment: null,
  };
}

/** A provider's charge.refunded as the routes hand it to the intake: published as PaymentAdjusted. */
export function refundedCharge(refundedTotal = 2500): IncomingWebhookEvent {
  const eventId = `evt_${randomUUID()}`;
  return {
    eventId,
    source: 'provider',
    type: 'charge.refunded',
    payload: {},
    payment: null,
    adjustment: {
      transaction_id: randomUUID(),
      adjustment: 'refund',
      amount: refundedTotal,
      currency: 'USD',
      reference: `re_${randomUUID()}`,
      provider_event_id: eventId,
      provider_event_type: 'charge.refunded',
    },
  };
}
