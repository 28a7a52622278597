import { toMinorUnits, type MinorUnits } from '@payments/contracts';
import { decideReversal, type Adjustment } from './reversal.js';
import type { Transaction } from './transaction.js';

/**
 * A deposit removed with its user, as the ledger kept it at removal: the deposit and the reversals it had then,
 * followed by the platform losses booked since, each counted as the completed reversal it stands in for.
 */
export interface RemovedDeposit {
  deposit: Transaction;
  reversals: Transaction[];
  /** The provider's payment for it (Stripe: `pi_…`), if one was made. */
  providerReference: string | null;
  removedAt: Date;
}

export type LossReason = 'refund' | 'dispute';

/** Money the provider took back from a removed user's deposit, booked against the platform loss account. */
export interface PlatformLoss {
  id: string;
  depositId: string;
  reason: LossReason;
  /** Unique per deposit, as a reversal's: `refund:<refunded total>` or `dispute:<provider dispute id>`. */
  key: string;
  currency: string;
  /** What the provider took back. */
  amount: MinorUnits;
  /** The deposit fee's share fee revenue gives back; the platform loses amount − fee. */
  fee: MinorUnits;
  /** The provider's refund or dispute. */
  reference: string;
  /** The event or reconciliation decision that booked it. */
  correlationId: string;
  createdAt: Date;
}

export type NewPlatformLoss = Omit<PlatformLoss, 'createdAt'>;

export type PlatformLossDecision =
  | { action: 'ignore'; reason: string }
  | { action: 'book'; loss: Pick<PlatformLoss, 'key' | 'reason' | 'amount' | 'fee'> };

/** What the platform lost: what the provider took back, less the fee revenue gave back. */
export const lossAmountOf = (loss: Pick<PlatformLoss, 'amount' | 'fee'>): MinorUnits =>
  toMinorUnits(loss.amount - loss.fee);

/** A loss as the completed reversal it stands in for, so that the reversal rules count it as one. */
export function lossAsReversal(loss: PlatformLoss, deposit: Transaction): Transaction {
  return {
    id: loss.id,
    accountId: deposit.accountId,
    userId: null,
    type: 'reversal',
    status: 'completed',
    amount: loss.amount,
    currency: loss.currency,
    fee: loss.fee,
    counterpartyAccountId: null,
    counterpartyUserId: null,
    exchangeRate: null,
    convertedAmount: null,
    convertedCurrency: null,
    paymentId: loss.reference,
    failureReason: null,
    originalTransactionId: loss.depositId,
    reversalReason: loss.reason,
    heldAmount: toMinorUnits(0n),
    metadata: {},
    reference: null,
    createdAt: loss.createdAt,
    updatedAt: loss.createdAt,
    completedAt: loss.createdAt,
  };
}

/**
 * What a refund or dispute of a removed user's deposit does: the reversal rules (decideReversal) decide how much is
 * taken back, once per refunded total or dispute and never more than the deposit credited in all, counting its
 * reversals before the removal and the losses booked since. With no account left to hold from or take from, an
 * opened dispute holds nothing and a won one takes nothing: a dispute is booked once lost, a refund at once.
 */
export function decidePlatformLoss(removed: RemovedDeposit, adjustment: Adjustment): PlatformLossDecision {
  if (adjustment.kind === 'dispute_opened')
    return { action: 'ignore', reason: 'no account is left to hold an open dispute; it is booked if lost' };
  if (adjustment.kind === 'dispute_won')
    return { action: 'ignore', reason: 'the dispute was won: nothing was taken back' };
  const decision = decideReversal(removed.deposit, removed.reversals, adjustment);
  if (decision.action === 'ignore') return decision;
  if (decision.action === 'create' && decision.reversal.status === 'completed') {
    const { key, reason, amount, fee } = decision.reversal;
    return { action: 'book', loss: { key, reason, amount, fee } };
  }
  // A deposit is removed only once settled and with no dispute open: nothing is left pending to retry or finish.
  return { action: 'ignore', reason: `the removed deposit is ${removed.deposit.status}` };
}
