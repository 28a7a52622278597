import { toMinorUnits, type MinorUnits } from '@payments/contracts';
import type { Transaction } from './transaction.js';

/** What a provider said about a completed payment after the fact (PaymentAdjusted). */
export interface Adjustment {
  /** refund_succeeded / refund_failed: a refund the ledger asked for (refundId) ended at the provider. */
  kind: 'refund' | 'dispute_opened' | 'dispute_won' | 'dispute_lost' | 'refund_succeeded' | 'refund_failed';
  /** refund: the provider's refunded total for the payment so far; dispute: the disputed amount. */
  amount: MinorUnits;
  currency: string;
  /** The dispute id for disputes; for refunds, only a reference shown as the reversal's payment id. */
  reference: string;
  /** refund_succeeded / refund_failed: the pending reversal the ledger created when it asked for the refund. */
  refundId?: string;
  /** refund_failed: the provider's reason. */
  failureReason?: string;
}

/** A reversal to create: its gross amount, the part of the deposit fee it gives back, and how it starts. */
export interface NewReversal {
  key: string;
  reason: 'refund' | 'dispute';
  amount: MinorUnits;
  fee: MinorUnits;
  /** pending: an open dispute (holds); completed: booked now; canceled: a dispute already won, booked never. */
  status: 'pending' | 'completed' | 'canceled';
}

export type ReversalDecision =
  | { action: 'ignore'; reason: string }
  /** The deposit is not settled yet: the event is retried later rather than lost. */
  | { action: 'retry'; reason: string }
  | { action: 'create'; reversal: NewReversal }
  | { action: 'finish'; reversal: Transaction; status: 'completed' | 'canceled' }
  /** A refund the ledger asked for that the provider could not make: its hold is released. */
  | { action: 'fail'; reversal: Transaction; reason: string };

export const disputeKey = (disputeId: string) => `dispute:${disputeId}`;
const refundKey = (refundedTotal: bigint) => `refund:${refundedTotal}`;
/** The key of a refund asked for through the API (POST /transaction/{id}/refund), by its reversal's id. */
export const refundRequestKey = (refundId: string) => `refund_request:${refundId}`;

/**
 * What the provider's refunded total already counts, as the ledger sees it: the refunds booked, and those it asked
 * for, pending or failed (the provider counts a refund from its creation, and the ledger books it when the provider
 * confirms it: refund_succeeded). So a charge.refunded's total never books a requested refund twice, nor one that
 * failed when its total arrives late, after the failure (events come in any order). The price: a refund made
 * elsewhere after a requested one failed is counted short by the failed amount, which reconciliation reports,
 * rather than a user ever losing money the provider did not give back.
 */
export const refundsCounted = (reversals: readonly Transaction[]) =>
  sum(reversals.filter((t) => t.reversalReason === 'refund' && t.status !== 'canceled'));

const sum = (transactions: Transaction[]) => transactions.reduce((total, t) => total + t.amount, 0n);
/** A refund or dispute reversal that took (or holds) money back; credits linked to the deposit are not. */
const isActive = (t: Transaction) =>
  (t.reversalReason === 'refund' || t.reversalReason === 'dispute') &&
  (t.status === 'completed' || t.status === 'pending');

/** What the refunds and disputes against a deposit have taken back, or hold while pending. */
export const takenBack = (reversals: readonly Transaction[]) => sum(reversals.filter(isActive));

/**
 * Whether the ledger credited the deposit: it completed, or (paid after it ended) its late payment was credited,
 * amount and fee as the deposit would have been.
 */
function wasCredited(original: Transaction, reversals: readonly Transaction[]): boolean {
  return (
    original.status === 'completed' ||
    reversals.some((t) => t.reversalReason === 'late_payment' && t.status === 'completed')
  );
}

/**
 * The part of the deposit fee a reversal of `amount` gives back, when `before` was already reversed: taken from
 * the cumulative share, so the shares of a deposit reversed in full add up to its fee exactly.
 */
export function feeShareOf(original: Transaction, before: bigint, amount: bigint): MinorUnits {
  const share = (reversed: bigint) => (original.fee * reversed) / original.amount;
  return toMinorUnits(share(before + amount) - share(before));
}

/**
 * Whether an adjustment can reverse `original` at all: a deposit the ledger credited (itself, or as a late
 * payment), in the currency it reports.
 */
export function isReversible(
  original: Transaction,
  reversals: readonly Transaction[],
  adjustment: Pick<Adjustment, 'currency'>,
): boolean {
  return (
    original.type === 'deposit' &&
    wasCredited(original, reversals) &&
    adjustment.currency.toUpperCase() === original.currency
  );
}

/**
 * Decides what an adjustment does to a completed deposit, given every reversal it already has (read under the
 * deposit's row lock). Each takes effect once, whatever the duplicates and the order:
 * - a refund reverses only what its refunded total adds to the refunds already reversed, so a repeat or an older
 *   total is a no-op and a partial refund followed by another reverses the difference;
 * - a dispute is one reversal per dispute id: opened → pending with a hold; won → canceled; lost → completed.
 *   A close seen before the opening creates the reversal in its final state, and the late opening is a no-op;
 * - nothing ever reverses more, in total, than the deposit credited.
 */
export function decideReversal(
  original: Transaction | null,
  reversals: Transaction[],
  adjustment: Adjustment,
): ReversalDecision {
  if (!original) return { action: 'ignore', reason: 'no such transaction' };
  if (original.type !== 'deposit')
    return { action: 'ignore', reason: `a ${original.type} is not reversible` };
  if (original.status === 'pending') return { action: 'retry', reason: 'the deposit is not settled yet' };
  if (!wasCredited(original, reversals)) {
    return { action: 'ignore', reason: `the deposit is ${original.status}; nothing was credited` };
  }
  if (adjustment.currency.toUpperCase() !== original.currency) {
    return {
      action: 'ignore',
      reason: `the provider reported ${adjustment.currency.toUpperCase()}; the deposit is in ${original.currency}`,
    };
  }
  const taken = takenBack(reversals);
  const remaining = original.amount - taken;
  if (adjustment.kind === 'refund_succeeded' || adjustment.kind === 'refund_failed') {
    const requested = reversals.find((t) => t.id === adjustment.refundId && t.reversalReason === 'refund');
    if (!requested) return { action: 'ignore', reason: 'no refund the ledger asked for has this id' };
    // Only a refund the ledger asked for is ever pending: those the provider reports are booked at once.
    if (requested.status !== 'pending')
      return { action: 'ignore', reason: `the refund is already ${requested.status}` };
    return adjustment.kind === 'refund_succeeded'
      ? { action: 'finish', reversal: requested, status: 'completed' }
      : {
          action: 'fail',
          reversal: requested,
          reason: adjustment.failureReason ?? 'the provider could not make the refund',
        };
  }
  const create = (
    key: string,
    reason: NewReversal['reason'],
    amount: bigint,
    status: NewReversal['status'],
  ) =>
    ({
      action: 'create',
      reversal: {
        key,
        reason,
        status,
        amount: toMinorUnits(amount),
        // A reversal that will never be booked gives back no fee.
        fee: status === 'canceled' ? toMinorUnits(0n) : feeShareOf(original, taken, amount),
      },
    }) as const;

  if (adjustment.kind === 'refund') {
    const refunded = refundsCounted(reversals);
    const added = adjustment.amount - refunded;
    if (added <= 0n) return { action: 'ignore', reason: 'this refunded total is already reversed' };
    const amount = added < remaining ? added : remaining;
    if (amount <= 0n) return { action: 'ignore', reason: 'the deposit is already reversed in full' };
    return create(refundKey(refunded + amount), 'refund', amount, 'completed');
  }

  const existing = reversals.find(
    (t) => t.reversalReason === 'dispute' && t.paymentId === adjustment.reference,
  );
  if (existing) {
    if (existing.status !== 'pending' || adjustment.kind === 'dispute_opened') {
      return { action: 'ignore', reason: `the dispute is already ${existing.status}` };
    }
    return {
      action: 'finish',
      reversal: existing,
      status: adjustment.kind === 'dispute_lost' ? 'completed' : 'canceled',
    };
  }
  const key = disputeKey(adjustment.reference);
  if (adjustment.kind === 'dispute_won') {
    // Recorded so that a late opening of the same dispute holds nothing.
    const amount = adjustment.amount < original.amount ? adjustment.amount : original.amount;
    if (amount <= 0n) return { action: 'ignore', reason: 'the dispute is for nothing' };
    return create(key, 'dispute', amount, 'canceled');
  }
  const amount = adjustment.amount < remaining ? adjustment.amount : remaining;
  if (amount <= 0n) return { action: 'ignore', reason: 'the deposit is already reversed in full' };
  return create(key, 'dispute', amount, adjustment.kind === 'dispute_lost' ? 'completed' : 'pending');
}

/** What an open dispute holds: its net amount, or as much of it as the account still has available. */
export function disputeHoldOf(net: bigint, available: bigint): MinorUnits {
  if (available <= 0n) return toMinorUnits(0n);
  return toMinorUnits(net < available ? net : available);
}
