import { Type, type Static } from '@sinclair/typebox';
import { compileSchema } from '@payments/contracts';
import { failureReason, type IncomingWebhookEvent, type WebhookSource } from './webhook-event.js';

const PaymentStatus = Type.Union([
  Type.Literal('completed'),
  Type.Literal('failed'),
  Type.Literal('pending'),
]);
const PaymentId = Type.String({ minLength: 1, maxLength: 200 });

/** /webhook/payment: `{ payment_id, status }`, the payment id being the transaction id given at creation. */
const PaymentWebhookBody = Type.Object({ payment_id: PaymentId, status: PaymentStatus });

/** /webhook/payment-status: the same, plus what the provider says about the money (amount in minor units). */
const PaymentStatusWebhookBody = Type.Object({
  payment_id: PaymentId,
  status: PaymentStatus,
  amount: Type.Optional(Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER })),
  currency: Type.Optional(Type.String({ pattern: '^[A-Za-z]{3}$' })),
  metadata: Type.Optional(
    Type.Object({
      transaction_id: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
      failure_reason: Type.Optional(Type.String({ maxLength: 1000 })),
    }),
  ),
});

type PaymentStatusWebhookBody = Static<typeof PaymentStatusWebhookBody>;

const checkPaymentWebhook = compileSchema(PaymentWebhookBody);
const checkPaymentStatusWebhook = compileSchema(PaymentStatusWebhookBody);

const DEFAULT_FAILURE_REASON = 'the payment provider reported the payment as failed';

function toIncomingEvent(source: WebhookSource, body: PaymentStatusWebhookBody): IncomingWebhookEvent {
  const { payment_id, status } = body;
  return {
    // These calls carry no event id of their own: the same (payment_id, status) is the same event.
    eventId: `${source}:${payment_id}:${status}`,
    source,
    type: status,
    payload: body,
    payment:
      status === 'pending'
        ? null
        : {
            transaction_id: body.metadata?.transaction_id ?? payment_id,
            payment_id,
            status,
            source,
            ...(body.amount !== undefined && { amount: body.amount }),
            ...(body.currency !== undefined && { currency: body.currency.toUpperCase() }),
            ...(status === 'failed' && {
              failure_reason: failureReason(body.metadata?.failure_reason, DEFAULT_FAILURE_REASON),
            }),
          },
  };
}

/** A /webhook/payment body as an event, or null when it is not a valid one. */
export function parsePaymentWebhook(body: unknown): IncomingWebhookEvent | null {
  const checked = checkPaymentWebhook(body);
  return checked.ok ? toIncomingEvent('payment', checked.value) : null;
}

/** A /webhook/payment-status body as an event, or null when it is not a valid one. */
export function parsePaymentStatusWebhook(body: unknown): IncomingWebhookEvent | null {
  const checked = checkPaymentStatusWebhook(body);
  return checked.ok ? toIncomingEvent('payment-status', checked.value) : null;
}
