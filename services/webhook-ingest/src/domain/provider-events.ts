import type { Static } from '@sinclair/typebox';
import {
  compileSchema,
  ProviderChargeObject,
  ProviderDisputeObject,
  ProviderEventEnvelope,
  ProviderObject,
  ProviderRefundObject,
} from '@payments/contracts';
import { parseAccountEvent } from './account-events.js';
import { failureReason, type IncomingWebhookEvent, type PaymentAdjustedData } from './webhook-event.js';

type ProviderObject = Static<typeof ProviderObject>;
type ProviderCharge = Static<typeof ProviderChargeObject>;
type ProviderDispute = Static<typeof ProviderDisputeObject>;
type ProviderRefund = Static<typeof ProviderRefundObject>;

interface ProviderEventEffect {
  status: 'completed' | 'failed' | 'canceled' | 'attempt_failed';
  movement: 'payment' | 'payout';
  failureReason?: (object: ProviderObject) => string;
}

/**
 * What each provider event type does. Adding a type is one row here, plus a subscription where the
 * PaymentProcessed event takes effect. Types not listed are recorded and acknowledged with no effect.
 */
const PROVIDER_EVENT_EFFECTS = {
  'payment_intent.succeeded': { status: 'completed', movement: 'payment' },
  // Not final at Stripe: the customer may pay again, with another method. The deposit stays pending.
  'payment_intent.payment_failed': {
    status: 'attempt_failed',
    movement: 'payment',
    failureReason: (object) =>
      failureReason(object.last_payment_error?.message, 'a payment attempt failed at the provider'),
  },
  'payment_intent.canceled': {
    status: 'canceled',
    movement: 'payment',
    failureReason: (object) =>
      failureReason(
        object.cancellation_reason && `canceled at the provider (${object.cancellation_reason})`,
        'the payment was canceled at the provider',
      ),
  },
  'payout.paid': { status: 'completed', movement: 'payout' },
  'payout.failed': {
    status: 'failed',
    movement: 'payout',
    failureReason: (object) => failureReason(object.failure_message, 'the payout failed at the provider'),
  },
} satisfies Record<string, ProviderEventEffect>;

type Adjustment = Pick<
  PaymentAdjustedData,
  | 'transaction_id'
  | 'payment_reference'
  | 'adjustment'
  | 'amount'
  | 'currency'
  | 'reference'
  | 'refund_id'
  | 'failure_reason'
>;

/**
 * The deposit a refund or dispute is about: the payment it adjusts (its payment intent, else `charge`), which the
 * ledger finds by the reference it recorded, and the transaction its metadata names, a hint that must agree.
 */
const depositOf = (
  object: { metadata?: { transaction_id?: string }; payment_intent?: string | null },
  charge: string,
) => {
  const payment = object.payment_intent ?? charge;
  return { transaction_id: object.metadata?.transaction_id ?? payment, payment_reference: payment };
};

const disputeAdjustment = (dispute: ProviderDispute, adjustment: Adjustment['adjustment']): Adjustment => ({
  ...depositOf(dispute, dispute.charge ?? dispute.id),
  adjustment,
  amount: dispute.amount,
  currency: dispute.currency.toUpperCase(),
  reference: dispute.id,
});

/** What happened to a dispute when it closed; null (recorded, no effect) for a status it cannot close with. */
const CLOSED_DISPUTES: Record<string, Adjustment['adjustment']> = {
  lost: 'dispute_lost',
  won: 'dispute_won',
  // An inquiry that closed without a chargeback: nothing is taken back.
  warning_closed: 'dispute_won',
};

/**
 * A refund the ledger asked for (its metadata.refund_id) that ended at the provider: succeeded books it, failed or
 * canceled releases its hold. Any other refund, or one still pending, is recorded with no effect: refunds made
 * elsewhere count through charge.refunded's total.
 */
const refundOutcome = (refund: ProviderRefund): Adjustment | null => {
  const refundId = refund.metadata?.refund_id;
  if (!refundId) return null;
  const failed = refund.status === 'failed' || refund.status === 'canceled';
  if (refund.status !== 'succeeded' && !failed) return null;
  return {
    ...depositOf(refund, refund.charge ?? refund.id),
    adjustment: failed ? 'refund_failed' : 'refund_succeeded',
    amount: refund.amount,
    currency: refund.currency.toUpperCase(),
    reference: refund.id,
    refund_id: refundId,
    ...(failed && {
      failure_reason: failureReason(
        refund.failure_reason && `the provider could not refund (${refund.failure_reason})`,
        'the provider could not refund',
      ),
    }),
  };
};
const refundEvent = { schema: compileSchema(ProviderRefundObject), adjust: refundOutcome };

/**
 * Refunds and disputes of a completed payment, published as PaymentAdjusted: the ledger reverses the deposit (see
 * its decideReversal). A refund carries the charge's cumulative `amount_refunded`, not the one refund's amount, so
 * the ledger reverses only what a total adds: a redelivery, a second event for the same refund or an older total
 * arriving late changes nothing, and a partial refund followed by another reverses the difference. Stripe has
 * sent charges without their `refunds` list since API version 2022-11-15, and pages it; the total is always there.
 */
const PROVIDER_ADJUSTMENTS = {
  'charge.refunded': {
    schema: compileSchema(ProviderChargeObject),
    adjust: (charge: ProviderCharge): Adjustment | null => ({
      ...depositOf(charge, charge.id),
      adjustment: 'refund',
      amount: charge.amount_refunded,
      currency: charge.currency.toUpperCase(),
      reference: charge.refunds?.data[0]?.id ?? charge.id,
    }),
  },
  'refund.created': refundEvent,
  'refund.updated': refundEvent,
  'refund.failed': refundEvent,
  'charge.refund.updated': refundEvent,
  'charge.dispute.created': {
    schema: compileSchema(ProviderDisputeObject),
    adjust: (dispute: ProviderDispute): Adjustment | null => disputeAdjustment(dispute, 'dispute_opened'),
  },
  'charge.dispute.closed': {
    schema: compileSchema(ProviderDisputeObject),
    adjust: (dispute: ProviderDispute): Adjustment | null => {
      const closed = Object.hasOwn(CLOSED_DISPUTES, dispute.status)
        ? CLOSED_DISPUTES[dispute.status]
        : undefined;
      return closed ? disputeAdjustment(dispute, closed) : null;
    },
  },
} as const;

/** A connected account's readiness (domain/account-events.ts). */
const ACCOUNT_UPDATED = 'account.updated';

export type HandledProviderEventType =
  keyof typeof PROVIDER_EVENT_EFFECTS | keyof typeof PROVIDER_ADJUSTMENTS | 'account.updated';

export function isHandledProviderEventType(type: string): type is HandledProviderEventType {
  return (
    Object.hasOwn(PROVIDER_EVENT_EFFECTS, type) ||
    Object.hasOwn(PROVIDER_ADJUSTMENTS, type) ||
    type === ACCOUNT_UPDATED
  );
}

type Envelope = Static<typeof ProviderEventEnvelope>;

/** The mode and connected account an event names, which the ledger compares with what it asked for. */
const scopeOf = ({ livemode, account }: Envelope) => ({
  ...(livemode !== undefined && { livemode }),
  ...(account && { account }),
});

function parseAdjustment(
  envelope: Envelope,
  type: keyof typeof PROVIDER_ADJUSTMENTS,
  body: unknown,
): IncomingWebhookEvent | null {
  const { schema, adjust } = PROVIDER_ADJUSTMENTS[type];
  const checked = schema(envelope.data.object);
  if (!checked.ok) return null;
  const adjustment = (adjust as (value: unknown) => Adjustment | null)(checked.value);
  const { id } = envelope;
  return {
    eventId: id,
    source: 'provider',
    type,
    payload: body,
    payment: null,
    adjustment: adjustment && {
      ...adjustment,
      provider_event_id: id,
      provider_event_type: type,
      ...scopeOf(envelope),
    },
  };
}

const checkEnvelope = compileSchema(ProviderEventEnvelope);
const checkObject = compileSchema(ProviderObject);

/** A provider event as an incoming event, or null when it is not a valid one. */
export function parseProviderEvent(body: unknown): IncomingWebhookEvent | null {
  const envelope = checkEnvelope(body);
  if (!envelope.ok) return null;
  const { id, type } = envelope.value;
  if (type === ACCOUNT_UPDATED) return parseAccountEvent(body);
  if (Object.hasOwn(PROVIDER_ADJUSTMENTS, type)) {
    return parseAdjustment(envelope.value, type as keyof typeof PROVIDER_ADJUSTMENTS, body);
  }
  if (!Object.hasOwn(PROVIDER_EVENT_EFFECTS, type)) {
    return { eventId: id, source: 'provider', type, payload: body, payment: null };
  }
  const checked = checkObject(envelope.value.data.object);
  if (!checked.ok) return null;
  const object = checked.value;
  const effect: ProviderEventEffect = PROVIDER_EVENT_EFFECTS[type as keyof typeof PROVIDER_EVENT_EFFECTS];
  return {
    eventId: id,
    source: 'provider',
    type,
    payload: body,
    payment: {
      transaction_id: object.metadata?.transaction_id ?? object.id,
      payment_id: object.id,
      status: effect.status,
      source: 'provider',
      amount: object.amount,
      currency: object.currency.toUpperCase(),
      movement: effect.movement,
      ...(effect.failureReason && { failure_reason: effect.failureReason(object) }),
      provider_event_id: id,
      provider_event_type: type,
      ...scopeOf(envelope.value),
    },
  };
}

/**
 * The trace a provider's event belongs to: the one the ledger asked for the payment in, which the provider returns
 * in the object's metadata (ADR 0112); null when it names none.
 */
export function traceCarrierOf(payload: unknown): Record<string, string> | null {
  const metadata = (payload as { data?: { object?: { metadata?: unknown } } } | null)?.data?.object?.metadata;
  if (!metadata || typeof metadata !== 'object') return null;
  const { traceparent, tracestate } = metadata as Record<string, unknown>;
  if (typeof traceparent !== 'string') return null;
  return typeof tracestate === 'string' ? { traceparent, tracestate } : { traceparent };
}
