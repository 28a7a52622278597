import {
  REVERSAL_REASONS,
  toMinorUnits,
  TRANSACTION_STATUSES,
  TRANSACTION_TYPES,
  type MinorUnits,
  type RefundReason,
} from '@payments/contracts';
import type { Viewer } from './viewer.js';

export { REVERSAL_REASONS, TRANSACTION_STATUSES, TRANSACTION_TYPES };
export type TransactionType = (typeof TRANSACTION_TYPES)[number];
export type ReversalReason = (typeof REVERSAL_REASONS)[number];
/** What a user asks for; reversals come only from the provider. */
export type RequestedType = Exclude<TransactionType, 'reversal'>;

export type TransactionStatus = (typeof TRANSACTION_STATUSES)[number];
export type TerminalStatus = Exclude<TransactionStatus, 'pending'>;

export interface Account {
  id: string;
  userId: string;
  currency: string;
  balance: MinorUnits;
  availableBalance: MinorUnits;
  metadata: Record<string, unknown>;
  createdAt: Date;
  updatedAt: Date;
}

/** What never changes about an account: its owner and currency (it can only disappear). */
export type AccountFacts = Pick<Account, 'id' | 'userId' | 'currency'>;

export interface Transaction {
  id: string;
  accountId: string;
  /** Null once its owner was deleted: a completed transfer lives on in the receiver's history. */
  userId: string | null;
  type: TransactionType;
  status: TransactionStatus;
  amount: MinorUnits;
  currency: string;
  fee: MinorUnits;
  counterpartyAccountId: string | null;
  counterpartyUserId: string | null;
  /** Cross-currency transfers: the rate used, the amount credited and its currency. */
  exchangeRate: string | null;
  convertedAmount: MinorUnits | null;
  convertedCurrency: string | null;
  paymentId: string | null;
  failureReason: string | null;
  /** Reversals only: the completed deposit reversed, why, and what an open dispute holds (null otherwise). */
  originalTransactionId: string | null;
  reversalReason: ReversalReason | null;
  heldAmount: MinorUnits | null;
  /**
   * Refunds only, where read with it: the reason the refund was asked for with (POST /transaction/{id}/refund),
   * null when none was given or the provider reported the refund itself.
   */
  refundReason?: RefundReason | null;
  /** The owner's own: string keys and values, shown to the owner alone (and admins). */
  metadata: Record<string, string>;
  /** The owner's unique name for it, if they gave one: shown to the owner alone (and admins). */
  reference: string | null;
  createdAt: Date;
  updatedAt: Date;
  completedAt: Date | null;
}

/** What a new transaction carries; the database assigns the timestamps and it starts pending. */
export type NewTransaction = Omit<
  Pick<
    Transaction,
    | 'id'
    | 'accountId'
    | 'userId'
    | 'type'
    | 'amount'
    | 'currency'
    | 'fee'
    | 'counterpartyAccountId'
    | 'counterpartyUserId'
    | 'exchangeRate'
    | 'convertedAmount'
    | 'convertedCurrency'
    | 'paymentId'
  >,
  'userId'
> & { userId: string } & Partial<
    Pick<
      Transaction,
      'originalTransactionId' | 'reversalReason' | 'heldAmount' | 'metadata' | 'reference'
    > & {
      reversalKey: string;
    }
  >;

/** Only a pending transaction moves, and only into a terminal state; terminal states never change. */
export function canTransition(from: TransactionStatus, to: TransactionStatus): to is TerminalStatus {
  return from === 'pending' && to !== 'pending';
}

/**
 * Money set aside while pending: withdrawals and transfers hold amount plus fee; deposits hold nothing; an open
 * dispute (a pending reversal) holds what it could of its net amount.
 */
export function holdOf(
  transaction: Pick<Transaction, 'type' | 'amount' | 'fee'> & { heldAmount?: MinorUnits | null },
): MinorUnits {
  if (transaction.type === 'deposit') return toMinorUnits(0n);
  if (transaction.type === 'reversal') return transaction.heldAmount ?? toMinorUnits(0n);
  return toMinorUnits(transaction.amount + transaction.fee);
}

/** Who may read a transaction: its owner, an admin, and the receiving side of a completed transfer. */
/** The owner's own fields (metadata, reference) are the owner's and the admins' to see, not the other side's. */
export function seesOwnFields(transaction: Pick<Transaction, 'userId'>, viewer: Viewer): boolean {
  return viewer.role === 'admin' || transaction.userId === viewer.userId;
}

export function canRead(
  transaction: Pick<Transaction, 'userId' | 'counterpartyUserId' | 'status' | 'type'>,
  viewer: { userId: string; role: 'user' | 'admin' },
): boolean {
  if (viewer.role === 'admin' || transaction.userId === viewer.userId) return true;
  return (
    transaction.type === 'transfer' &&
    transaction.status === 'completed' &&
    transaction.counterpartyUserId === viewer.userId
  );
}
