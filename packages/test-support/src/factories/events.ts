import { randomUUID } from 'node:crypto';
import { createEvent, type EventEnvelope } from '@payments/contracts';

/**
 * The confirmation webhook-ingest publishes when the provider says a deposit was paid: `amount` minor units of
 * `currency`, correlated as a confirmation stranded on its way would be.
 */
export const aPaymentConfirmation = (
  transactionId: string,
  amount: number,
  currency = 'USD',
): EventEnvelope<'PaymentProcessed'> =>
  createEvent(
    'PaymentProcessed',
    {
      transaction_id: transactionId,
      payment_id: transactionId,
      status: 'completed',
      source: 'payment',
      amount,
      currency,
    },
    { id: randomUUID(), correlationId: `stranded-${transactionId}` },
  );
