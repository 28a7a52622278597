import type { Static } from '@sinclair/typebox';
import { compileSchema, PaymentStatusWebhookBody, PaymentWebhookBody } from '@payments/contracts';
import { failureReason, type IncomingWebhookEvent, type WebhookSource } from './webhook-event.js';

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
