import { randomUUID } from 'node:crypto';
import { createEvent, type AnyEvent } from '@payments/contracts';
import type { Account, Transaction } from '../domain/transaction.js';

type Movement = Pick<Transaction, 'id' | 'type' | 'accountId' | 'userId' | 'amount' | 'currency'>;

function movement(transaction: Movement) {
  // Only completed transfers lose their owner, and they never change again.
  if (transaction.userId === null) throw new Error(`transaction ${transaction.id} has no owner left`);
  return {
    transaction_id: transaction.id,
    account_id: transaction.accountId,
    user_id: transaction.userId,
    amount: Number(transaction.amount),
    currency: transaction.currency,
  };
}

/**
 * DepositRequested or WithdrawalRequested for a newly accepted transaction: what the provider is asked to do.
 * A transfer asks nobody (the ledger settles it itself) and announces nothing until it is settled: null. A deposit
 * paid with a payment method named in its request carries it.
 */
export function requestedEvent(
  transaction: Movement,
  correlationId: string,
  paymentMethod: string | null = null,
): AnyEvent | null {
  const options = { id: randomUUID(), correlationId };
  switch (transaction.type) {
    case 'transfer':
      return null;
    case 'withdrawal':
      return createEvent('WithdrawalRequested', movement(transaction), options);
    case 'deposit':
      return createEvent(
        'DepositRequested',
        { ...movement(transaction), ...(paymentMethod ? { payment_method: paymentMethod } : {}) },
        options,
      );
    case 'reversal':
      throw new Error(`reversal ${transaction.id} is never requested; it comes from the provider`);
  }
}

/** TransactionCompleted, TransactionFailed or TransactionCanceled by final status; reversals announce themselves apart. */
export function settledEvent(transaction: Transaction, correlationId: string): AnyEvent {
  const options = { id: randomUUID(), correlationId };
  const { type } = transaction;
  if (type === 'reversal') throw new Error(`reversal ${transaction.id} is announced by reversedEvent`);
  const data = { ...movement(transaction), type };
  if (transaction.status === 'completed') return createEvent('TransactionCompleted', data, options);
  const reason = transaction.failureReason ?? transaction.status;
  const event = transaction.status === 'canceled' ? 'TransactionCanceled' : 'TransactionFailed';
  return createEvent(event, { ...data, failure_reason: reason.slice(0, 500) }, options);
}

/** TransactionUpdated: a pending transaction recorded a failed payment attempt (its failure reason says why). */
export function updatedEvent(transaction: Transaction, correlationId: string): AnyEvent {
  const data = { ...movement(transaction), type: transaction.type as 'deposit' | 'withdrawal' | 'transfer' };
  const reason = transaction.failureReason ?? undefined;
  return createEvent(
    'TransactionUpdated',
    { ...data, ...(reason ? { failure_reason: reason.slice(0, 500) } : {}) },
    { id: randomUUID(), correlationId },
  );
}

export function accountOpenedEvent(account: Account, correlationId: string): AnyEvent {
  return createEvent(
    'AccountOpened',
    { account_id: account.id, user_id: account.userId, currency: account.currency },
    { id: randomUUID(), correlationId },
  );
}

/** TransactionReversed, for a reversal as it completed: a refund, or a dispute lost. */
export function reversedEvent(reversal: Transaction, correlationId: string): AnyEvent {
  if (reversal.originalTransactionId === null) throw new Error(`transaction ${reversal.id} reverses nothing`);
  return createEvent(
    'TransactionReversed',
    {
      ...movement(reversal),
      original_transaction_id: reversal.originalTransactionId,
      reason: reversal.reversalReason === 'dispute' ? 'dispute_lost' : (reversal.reversalReason ?? 'refund'),
    },
    { id: randomUUID(), correlationId },
  );
}
