import { MISMATCH_KINDS } from '@payments/contracts';
import type { ProviderRecord } from '../provider/payment-provider.js';
import { providerNet } from '../provider/payment-provider.js';
import type { Transaction } from './transaction.js';

/** How the provider's records and the books can disagree about one payment or payout (see compareRecord). */
export { MISMATCH_KINDS };
export type MismatchKind = (typeof MISMATCH_KINDS)[number];

/** Whether the provider may still change a record without anyone acting (a payer, a dispute, a bank). */
export const isFinal = (record: ProviderRecord) =>
  record.kind === 'payment'
    ? record.settled
    : // A transfer taken back whole with no payout (the payout was refused) is over too.
      record.status !== 'open' || (record.payout === null && record.reversed === record.amount);

/** What the ledger asked the provider for a transaction, as reconciliation reads it. */
export interface AskedOfProvider {
  state: string;
  /** The object the provider made for it, once recorded: a payment's `pi_…`, a payout's transfer `tr_…`. */
  reference: string | null;
}

/** A transaction as reconciliation reads it: its reversals, and whether an undo at the provider is under way. */
export interface LedgerSide {
  transaction: Transaction;
  reversals: Transaction[];
  /** Its payment's cancellation or its payout's transfer reversal is asked for and not yet made. */
  undoPending: boolean;
  /** What the ledger asked the provider for it; null when it never asked (SPEC's stand-ins confirm those). */
  asked: AskedOfProvider | null;
  /**
   * A deposit removed with its user, as kept at removal: what the provider took back since is booked as platform
   * losses, counted among its reversals.
   */
  removed?: boolean;
}

export interface Mismatch {
  kind: MismatchKind;
  /** The provider's reference the case is about (Stripe: `pi_…`, or the payout's transfer `tr_…`). */
  reference: string;
  transactionId: string | null;
  currency: string;
  /** Net minor units by the provider's records, and by the books. */
  providerAmount: bigint;
  ledgerAmount: bigint;
}

export type Comparison =
  | { outcome: 'agree' }
  /** Something may still be on its way (an event, an undo, a bank's answer): compared again at the next run. */
  | { outcome: 'unsettled' }
  | { outcome: 'mismatch'; mismatch: Mismatch };

const sumOf = (reversals: Transaction[], reason: Transaction['reversalReason']) =>
  reversals
    .filter((r) => r.reversalReason === reason && r.status === 'completed')
    .reduce((sum, r) => sum + r.amount, 0n);

/** What the books credited for a deposit, net of what was taken back since. */
function creditedFor({ transaction, reversals }: LedgerSide): bigint {
  const credited = transaction.status === 'completed' ? transaction.amount : 0n;
  return (
    credited + sumOf(reversals, 'late_payment') - sumOf(reversals, 'refund') - sumOf(reversals, 'dispute')
  );
}

/** What the books credited for a deposit's payment before anything was taken back: the capture as booked. */
function capturedFor({ transaction, reversals }: LedgerSide): bigint {
  return (transaction.status === 'completed' ? transaction.amount : 0n) + sumOf(reversals, 'late_payment');
}

/** What the books debited for a withdrawal, net of a returned payout credited back. */
function debitedFor({ transaction, reversals }: LedgerSide): bigint {
  const debited = transaction.status === 'completed' ? transaction.amount : 0n;
  return debited - sumOf(reversals, 'payout_returned');
}

/**
 * Whether a record is the object the ledger asked the provider for its transaction: the one recorded, or, while
 * none is recorded (the answer was lost, its keys expired), the one that names it. Null: it cannot be told yet.
 */
function isAskedObject(record: ProviderRecord, asked: AskedOfProvider | null): boolean | null {
  if (!asked) return false;
  if (asked.reference) return asked.reference === record.reference;
  return asked.state === 'requested' ? null : true;
}

/**
 * Compares one of the provider's records with the transaction it names (null: the ledger has none), as part of
 * the provider's whole picture of that transaction: a record that is not the object the ledger asked for (a second
 * capture or transfer, an object made without the ledger) is money the books never took in. Amounts are
 * compared net: for a payment, what the provider kept (captured less refunds and lost disputes) against what the
 * ledger credited for it (the deposit, a late payment, less its refund and dispute reversals); for a payout, what
 * stayed paid out (the transfer less its reversals) against what the ledger debited (the withdrawal less a
 * returned payout). Anything that changed within `graceMs` of `now` is left for a later run: its events may be on
 * their way.
 *
 * - captured_not_credited: the provider kept more than the ledger credited; credited_not_captured: the reverse
 *   (never captured, or refunded or lost in a dispute since); either also when the net agrees and the captures do
 *   not (captured and then taken back in full, the deposit still pending: amounts are then the captures);
 *   dispute_still_held: the provider decided a dispute and the deposit still holds its amount (amounts: the
 *   provider's open disputes, the ledger's held ones);
 * - amount_differs: the payment or payout is for another amount or currency than its transaction;
 * - paid_out_still_held, failed_still_held: the payout ended and the withdrawal still holds the money;
 * - paid_out_not_debited: paid, and the ledger debited less; returned_not_credited: its money came back and the
 *   ledger still debits it; transfer_not_reversed: the ledger gave a failed payout's money back and its transfer
 *   was never taken back;
 * - payout_amount_differs: the payout paid another amount than its transfer moved;
 * - duplicate_capture, duplicate_transfer: money moved for a transaction by another object than the one the ledger
 *   asked for (amounts: that object's net, and 0);
 * - foreign_object: an object naming a transaction that never asked the provider, or one of another type;
 * - unknown_to_ledger: money moved at the provider for no transaction of the ledger.
 */
export function compareRecord(
  record: ProviderRecord,
  side: LedgerSide | null,
  now: Date,
  graceMs: number,
): Comparison {
  const provider = providerNet(record);
  const expected = record.kind === 'payment' ? 'deposit' : 'withdrawal';
  const mismatch = (kind: MismatchKind, ledger: bigint, providerAmount = provider): Comparison => ({
    outcome: 'mismatch',
    mismatch: {
      kind,
      reference: record.reference,
      transactionId: side?.transaction.id ?? record.transactionId,
      currency: side?.transaction.currency ?? record.currency,
      providerAmount,
      ledgerAmount: ledger,
    },
  });
  const cutoff = now.getTime() - graceMs;
  if (!side || side.transaction.type !== expected) {
    if (provider === 0n) return { outcome: 'agree' };
    return mismatch(side ? 'foreign_object' : 'unknown_to_ledger', 0n);
  }
  const asked = isAskedObject(record, side.asked);
  if (asked === null) return { outcome: 'unsettled' };
  if (!asked) {
    if (provider === 0n) return { outcome: 'agree' };
    if (record.created.getTime() > cutoff) return { outcome: 'unsettled' };
    if (!side.asked) return mismatch('foreign_object', 0n);
    return mismatch(record.kind === 'payment' ? 'duplicate_capture' : 'duplicate_transfer', 0n);
  }
  const recent = [side.transaction, ...side.reversals].some((t) => t.updatedAt.getTime() > cutoff);
  if (recent || record.created.getTime() > cutoff || side.undoPending) return { outcome: 'unsettled' };
  const { transaction } = side;
  if (record.currency !== transaction.currency || record.amount !== transaction.amount)
    return mismatch('amount_differs', transaction.amount, record.amount);

  if (record.kind === 'payment') {
    // An open dispute counts on neither side (the ledger holds it pending, the provider has not decided it).
    const credited = creditedFor(side);
    if (provider !== credited)
      return mismatch(provider > credited ? 'captured_not_credited' : 'credited_not_captured', credited);
    // Net agreement can hide a capture never booked: captured, then refunded or lost in a dispute in full, while
    // the deposit still waits (its events lost). Compared as captured, so booking it ends the deposit.
    const captured = capturedFor(side);
    if (record.captured !== captured)
      return mismatch(
        record.captured > captured ? 'captured_not_credited' : 'credited_not_captured',
        captured,
        record.captured,
      );
    const held = side.reversals
      .filter((r) => r.reversalReason === 'dispute' && r.status === 'pending')
      .reduce((sum, r) => sum + r.amount, 0n);
    const open = record.disputes
      .filter((dispute) => dispute.outcome === 'open')
      .reduce((sum, dispute) => sum + dispute.amount, 0n);
    return held > open ? mismatch('dispute_still_held', held, open) : { outcome: 'agree' };
  }

  const debited = debitedFor(side);
  if (record.payout && record.payoutAmount !== record.amount)
    return mismatch('payout_amount_differs', transaction.amount, record.payoutAmount ?? 0n);
  if (record.status === 'open') {
    // No payout was made (refused), the withdrawal ended, and its transfer was not (all) taken back: the money is
    // left on the user's connected account.
    if (record.payout !== null || transaction.status === 'pending') return { outcome: 'unsettled' };
    return provider > debited ? mismatch('transfer_not_reversed', debited) : { outcome: 'agree' };
  }
  if (transaction.status === 'pending')
    return mismatch(record.status === 'paid' ? 'paid_out_still_held' : 'failed_still_held', 0n);
  if (record.status === 'paid') {
    if (provider > debited) return mismatch('paid_out_not_debited', debited);
    if (provider < debited) return mismatch('returned_not_credited', debited);
    return { outcome: 'agree' };
  }
  // Failed: the books should debit nothing, and the provider should have its transfer back.
  if (debited > 0n) return mismatch('returned_not_credited', debited);
  if (provider > 0n) return mismatch('transfer_not_reversed', debited);
  return { outcome: 'agree' };
}
