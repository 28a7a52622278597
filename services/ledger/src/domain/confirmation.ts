import type { Transaction } from './transaction.js';

/** What a payment provider said about a deposit or payout (PaymentProcessed). */
export interface Confirmation {
  /** attempt_failed: one attempt to pay failed, and the payment may still succeed (another method, a retry). */
  status: 'completed' | 'failed' | 'canceled' | 'attempt_failed';
  /** Minor units; a completion without it (or without the currency) credits nothing. */
  amount?: number;
  currency?: string;
  movement?: 'payment' | 'payout';
  failureReason?: string;
  /** The provider's id for the payment or payout, when it gave one. */
  reference?: string;
}

export type ConfirmationDecision =
  | { action: 'complete' }
  | { action: 'fail'; reason: string }
  /** The provider canceled the payment: it ends, and no money moved. */
  | { action: 'cancel'; reason: string }
  /** A failed attempt: the transaction stays pending, and its failure reason says what went wrong. */
  | { action: 'note'; reason: string }
  /**
   * The provider gave money back against what the ledger booked: a paid payout that came back (`payout_returned`),
   * or a payment captured after its deposit ended (`late_payment`). The user is credited through a new reversal
   * linked to the transaction, which stays as it ended.
   */
  | { action: 'credit_back'; kind: 'payout_returned' | 'late_payment'; reason: string }
  /**
   * `contradicts`: the provider reports another outcome than the one the ledger booked, one that took money from
   * the platform (a payout paid after the ledger gave the hold back) or that does not say what it captured: money
   * may have moved otherwise than the books say, which an operator must settle; nothing here changes.
   */
  | { action: 'ignore'; reason: string; contradicts?: boolean };

/**
 * Decides what a confirmation does to a transaction. A completion credits only the amount and currency it names,
 * so a missing or disagreeing amount or currency never credits; it fails the transaction.
 */
export function decideConfirmation(
  transaction: Transaction,
  confirmation: Confirmation,
): ConfirmationDecision {
  if (transaction.type === 'transfer') {
    return { action: 'ignore', reason: 'transfers are settled by the ledger, not by a payment provider' };
  }
  if (transaction.type === 'reversal') {
    return {
      action: 'ignore',
      reason: 'reversals are settled by refunds and disputes, not by confirmations',
    };
  }
  const expected = transaction.type === 'deposit' ? 'payment' : 'payout';
  if (confirmation.movement && confirmation.movement !== expected) {
    return { action: 'ignore', reason: `a ${confirmation.movement} confirmation for a ${transaction.type}` };
  }
  if (confirmation.status === 'attempt_failed') {
    if (transaction.status !== 'pending') {
      return { action: 'ignore', reason: `a failed attempt for a transaction already ${transaction.status}` };
    }
    return {
      action: 'note',
      reason: confirmation.failureReason || 'A payment attempt failed at the provider',
    };
  }
  if (transaction.status !== 'pending') {
    const reason = `the transaction is already ${transaction.status}`;
    // Failed and canceled alike moved no money: only a disagreement about whether money moved contradicts.
    const moved = transaction.status === 'completed';
    if ((confirmation.status === 'completed') === moved) return { action: 'ignore', reason };
    const contradiction = `${reason}; the provider reports it ${confirmation.status}`;
    if (transaction.type === 'withdrawal' && moved) {
      return { action: 'credit_back', kind: 'payout_returned', reason: contradiction };
    }
    if (transaction.type === 'deposit' && !moved && confirmation.status === 'completed') {
      const problem = termsProblem(transaction, confirmation);
      if (!problem) return { action: 'credit_back', kind: 'late_payment', reason: contradiction };
      return { action: 'ignore', reason: `${contradiction}; ${problem}`, contradicts: true };
    }
    return { action: 'ignore', reason: contradiction, contradicts: true };
  }
  if (confirmation.status === 'failed') {
    return {
      action: 'fail',
      reason: confirmation.failureReason || 'The payment provider reported a failure',
    };
  }
  if (confirmation.status === 'canceled') {
    return {
      action: 'cancel',
      reason: confirmation.failureReason || 'The payment provider canceled the payment',
    };
  }
  const problem = termsProblem(transaction, confirmation);
  return problem ? { action: 'fail', reason: problem } : { action: 'complete' };
}

/** Why a completion does not confirm what the transaction is for, or null when it names its amount and currency. */
function termsProblem(transaction: Transaction, confirmation: Confirmation): string | null {
  // Whoever can publish a PaymentProcessed must also know what the payment was for.
  if (confirmation.amount === undefined || !confirmation.currency) {
    return 'The payment confirmation did not say which amount and currency were paid';
  }
  if (BigInt(confirmation.amount) !== transaction.amount) {
    return `The provider confirmed ${confirmation.amount} minor units; the transaction is for ${transaction.amount}`;
  }
  if (confirmation.currency.toUpperCase() !== transaction.currency) {
    return `The provider confirmed ${confirmation.currency.toUpperCase()}; the transaction is in ${transaction.currency}`;
  }
  return null;
}
