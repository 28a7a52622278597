import type { Transaction } from './transaction.js';

/** What a payment provider said about a deposit or payout (PaymentProcessed). */
export interface Confirmation {
  status: 'completed' | 'failed';
  /** Minor units, when the provider reported an amount. */
  amount?: number;
  currency?: string;
  movement?: 'payment' | 'payout';
  failureReason?: string;
}

export type ConfirmationDecision =
  { action: 'complete' } | { action: 'fail'; reason: string } | { action: 'ignore'; reason: string };

/** Decides what a confirmation does to a transaction. A disagreeing amount or currency never credits; it fails. */
export function decideConfirmation(
  transaction: Transaction,
  confirmation: Confirmation,
): ConfirmationDecision {
  if (transaction.type === 'transfer') {
    return { action: 'ignore', reason: 'transfers are settled by the ledger, not by a payment provider' };
  }
  if (transaction.status !== 'pending') {
    return { action: 'ignore', reason: `the transaction is already ${transaction.status}` };
  }
  const expected = transaction.type === 'deposit' ? 'payment' : 'payout';
  if (confirmation.movement && confirmation.movement !== expected) {
    return { action: 'ignore', reason: `a ${confirmation.movement} confirmation for a ${transaction.type}` };
  }
  if (confirmation.status === 'failed') {
    return {
      action: 'fail',
      reason: confirmation.failureReason || 'The payment provider reported a failure',
    };
  }
  if (confirmation.amount !== undefined && BigInt(confirmation.amount) !== transaction.amount) {
    return {
      action: 'fail',
      reason: `The provider confirmed ${confirmation.amount} minor units; the transaction is for ${transaction.amount}`,
    };
  }
  if (confirmation.currency && confirmation.currency.toUpperCase() !== transaction.currency) {
    return {
      action: 'fail',
      reason: `The provider confirmed ${confirmation.currency.toUpperCase()}; the transaction is in ${transaction.currency}`,
    };
  }
  return { action: 'complete' };
}
