import { randomUUID } from 'node:crypto';
import { createEvent, type AnyEvent } from '@payments/contracts';
import type { Account, Transaction } from '../domain/transaction.js';

const REQUESTED = {
  deposit: 'DepositRequested',
  withdrawal: 'WithdrawalRequested',
  transfer: 'TransferRequested',
} as const;

function movement(transaction: Transaction) {
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

/** DepositRequested, WithdrawalRequested or TransferRequested for a newly accepted transaction. */
export function requestedEvent(transaction: Transaction, correlationId: string): AnyEvent {
  const options = { id: randomUUID(), correlationId };
  const data = movement(transaction);
  switch (transaction.type) {
    case 'transfer':
      return createEvent(
        REQUESTED.transfer,
        { ...data, to_account_id: transaction.counterpartyAccountId as string },
        options,
      );
    case 'withdrawal':
      return createEvent(REQUESTED.withdrawal, data, options);
    case 'deposit':
      return createEvent(REQUESTED.deposit, data, options);
  }
}

/** TransactionCompleted, TransactionFailed or TransactionCanceled, by the transaction's final status. */
export function settledEvent(transaction: Transaction, correlationId: string): AnyEvent {
  const options = { id: randomUUID(), correlationId };
  const data = { ...movement(transaction), type: transaction.type };
  if (transaction.status === 'completed') return createEvent('TransactionCompleted', data, options);
  const reason = transaction.failureReason ?? transaction.status;
  const type = transaction.status === 'canceled' ? 'TransactionCanceled' : 'TransactionFailed';
  return createEvent(type, { ...data, failure_reason: reason.slice(0, 500) }, options);
}

export function accountOpenedEvent(account: Account, correlationId: string): AnyEvent {
  return createEvent(
    'AccountOpened',
    { account_id: account.id, user_id: account.userId, currency: account.currency },
    { id: randomUUID(), correlationId },
  );
}
