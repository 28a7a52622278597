import type { OperationExamples } from '../operation.js';
import type { PROVIDER_WEBHOOK_OPERATIONS } from '../provider-webhook-operations.js';
import { CHARGE, DEPOSIT, PAYMENT_INTENT, REFUND } from './samples.js';

/** Examples of what a payment provider sends. */
export const PROVIDER_WEBHOOK_EXAMPLES = {
  confirmPayment: { request: { payment_id: PAYMENT_INTENT, status: 'completed' } },
  reportPaymentStatus: {
    request: {
      payment_id: PAYMENT_INTENT,
      status: 'failed',
      amount: 2000,
      currency: 'usd',
      metadata: { transaction_id: DEPOSIT, failure_reason: 'Your card was declined.' },
    },
  },
  receiveProviderEvent: {
    request: {
      id: 'evt_3PqR8sLkdIwHu7ix1mN2oP3q',
      type: 'charge.refunded',
      data: {
        object: {
          id: CHARGE,
          amount: 2000,
          amount_refunded: 200,
          currency: 'usd',
          payment_intent: PAYMENT_INTENT,
          metadata: { transaction_id: DEPOSIT },
          refunds: { data: [{ id: REFUND }] },
        },
      },
    },
  },
} satisfies { [K in keyof typeof PROVIDER_WEBHOOK_OPERATIONS]?: OperationExamples };
