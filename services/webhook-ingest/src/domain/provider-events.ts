import type { Static } from '@sinclair/typebox';
import { compileSchema, ProviderEventEnvelope, ProviderObject } from '@payments/contracts';
import { failureReason, type IncomingWebhookEvent } from './webhook-event.js';

type ProviderObject = Static<typeof ProviderObject>;

interface ProviderEventEffect {
  status: 'completed' | 'failed';
  movement: 'payment' | 'payout';
  failureReason?: (object: ProviderObject) => string;
}

/**
 * What each provider event type does. Adding a type is one row here, plus a subscription where the
 * PaymentProcessed event takes effect. Types not listed are recorded and acknowledged with no effect.
 */
const PROVIDER_EVENT_EFFECTS = {
  'payment_intent.succeeded': { status: 'completed', movement: 'payment' },
  'payment_intent.payment_failed': {
    status: 'failed',
    movement: 'payment',
    failureReason: (object) =>
      failureReason(object.last_payment_error?.message, 'the payment failed at the provider'),
  },
  'payout.paid': { status: 'completed', movement: 'payout' },
  'payout.failed': {
    status: 'failed',
    movement: 'payout',
    failureReason: (object) => failureReason(object.failure_message, 'the payout failed at the provider'),
  },
} satisfies Record<string, ProviderEventEffect>;

export type HandledProviderEventType = keyof typeof PROVIDER_EVENT_EFFECTS;

export function isHandledProviderEventType(type: string): type is HandledProviderEventType {
  return Object.hasOwn(PROVIDER_EVENT_EFFECTS, type);
}

const checkEnvelope = compileSchema(ProviderEventEnvelope);
const checkObject = compileSchema(ProviderObject);

/** A provider event as an incoming event, or null when it is not a valid one. */
export function parseProviderEvent(body: unknown): IncomingWebhookEvent | null {
  const envelope = checkEnvelope(body);
  if (!envelope.ok) return null;
  const { id, type } = envelope.value;
  if (!isHandledProviderEventType(type)) {
    return { eventId: id, source: 'provider', type, payload: body, payment: null };
  }
  const checked = checkObject(envelope.value.data.object);
  if (!checked.ok) return null;
  const object = checked.value;
  const effect: ProviderEventEffect = PROVIDER_EVENT_EFFECTS[type];
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
    },
  };
}
