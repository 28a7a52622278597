import { v5 as uuidv5 } from 'uuid';
import type { EventData } from '@payments/contracts';

/** Which endpoint an event came in on. */
export type WebhookSource = 'payment' | 'payment-status' | 'provider';

export type PaymentProcessedData = EventData<'PaymentProcessed'>;
export type PaymentAdjustedData = EventData<'PaymentAdjusted'>;
export type PayoutAccountUpdatedData = EventData<'PayoutAccountUpdated'>;

/** A verified and validated webhook call: what is recorded, and what it publishes. */
export interface IncomingWebhookEvent {
  /** Unique per event: the provider's event id, or derived from (payment_id, status) when there is none. */
  eventId: string;
  source: WebhookSource;
  /** The payment status or the provider event type. */
  type: string;
  /** The event as received, kept for the record. */
  payload: unknown;
  /** What to publish; null when the event is recorded and changes nothing (pending, unhandled types). */
  payment: PaymentProcessedData | null;
  /** A refund or dispute of a payment: published as PaymentAdjusted instead (then `payment` is null). */
  adjustment?: PaymentAdjustedData | null;
  /** A connected account's readiness (Stripe's account.updated): published as PayoutAccountUpdated instead. */
  payoutAccount?: PayoutAccountUpdatedData | null;
}

const ENVELOPE_NAMESPACE = '6f1d6a3e-4b8c-5d2a-9e61-0c7f3b9a2d45';

/** The PaymentProcessed (or PaymentAdjusted) envelope id of a webhook event: the same on every redelivery, so consumers dedupe. */
export function envelopeIdOf(eventId: string): string {
  return uuidv5(eventId, ENVELOPE_NAMESPACE);
}

export const FAILURE_REASON_MAX_LENGTH = 500;

export function failureReason(given: string | null | undefined, fallback: string): string {
  return (given?.trim() || fallback).slice(0, FAILURE_REASON_MAX_LENGTH);
}

/**
 * A completion that does not say what was paid (`/webhook/payment`, a `/webhook/payment-status` without amount or
 * currency). The ledger credits nothing on such a PaymentProcessed, so the intake asks the ledger first.
 */
export function lacksPaymentTerms(event: IncomingWebhookEvent): boolean {
  const { payment } = event;
  return payment?.status === 'completed' && (payment.amount === undefined || payment.currency === undefined);
}

/**
 * The event completed with the ledger's amount and currency where the caller gave none; what the caller did say
 * stays, so a disagreement still fails the payment. Unknown to the ledger (null): unchanged.
 */
export function withPaymentTerms(
  event: IncomingWebhookEvent,
  terms: { amount: number; currency: string } | null,
): IncomingWebhookEvent {
  if (!event.payment || !terms) return event;
  return {
    ...event,
    payment: {
      ...event.payment,
      amount: event.payment.amount ?? terms.amount,
      currency: event.payment.currency ?? terms.currency,
    },
  };
}
