import { toMinorUnits, type RefundReason } from '@payments/contracts';
import type { Knex } from '@payments/service-kit';
import type {
  Account,
  NewTransaction,
  ReversalReason,
  Transaction,
  TransactionStatus,
  TransactionType,
} from '../domain/transaction.js';

/** Row shapes as pg returns them: BIGINT and NUMERIC arrive as strings. */
export interface AccountRow {
  id: string;
  user_id: string;
  currency: string;
  balance: string;
  available_balance: string;
  metadata: Record<string, unknown>;
  created_at: Date;
  updated_at: Date;
}

export interface TransactionRow {
  id: string;
  account_id: string;
  user_id: string | null;
  type: TransactionType;
  status: TransactionStatus;
  amount: string;
  currency: string;
  fee: string;
  counterparty_account_id: string | null;
  counterparty_user_id: string | null;
  exchange_rate: string | null;
  converted_amount: string | null;
  converted_currency: string | null;
  payment_id: string | null;
  failure_reason: string | null;
  original_transaction_id: string | null;
  reversal_reason: ReversalReason | null;
  held_amount: string | null;
  metadata: Record<string, string>;
  reference: string | null;
  created_at: Date;
  updated_at: Date;
  completed_at: Date | null;
}

/**
 * "A user account", for look-ups by id. Written so that the planner cannot match it with the partial index
 * accounts_user_created (user_id, created_at, id) WHERE kind = 'user': without statistics (autovacuum off) it
 * otherwise prefers that index and walks every account of the user instead of one primary-key entry.
 */
export const USER_ACCOUNT = `(kind = 'user') IS TRUE`;

export const ACCOUNT_COLUMNS = [
  'id',
  'user_id',
  'currency',
  'balance',
  'available_balance',
  'metadata',
  'created_at',
  'updated_at',
];

export function toAccount(row: AccountRow): Account {
  return {
    id: row.id,
    userId: row.user_id,
    currency: row.currency,
    balance: toMinorUnits(row.balance),
    availableBalance: toMinorUnits(row.available_balance),
    metadata: row.metadata,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

export function toTransaction(row: TransactionRow): Transaction {
  return {
    id: row.id,
    accountId: row.account_id,
    userId: row.user_id,
    type: row.type,
    status: row.status,
    amount: toMinorUnits(row.amount),
    currency: row.currency,
    fee: toMinorUnits(row.fee),
    counterpartyAccountId: row.counterparty_account_id,
    counterpartyUserId: row.counterparty_user_id,
    exchangeRate: row.exchange_rate,
    convertedAmount: row.converted_amount === null ? null : toMinorUnits(row.converted_amount),
    convertedCurrency: row.converted_currency,
    paymentId: row.payment_id,
    failureReason: row.failure_reason,
    // Snapshots taken before reversals existed lack these.
    originalTransactionId: row.original_transaction_id ?? null,
    reversalReason: row.reversal_reason ?? null,
    heldAmount:
      row.held_amount === null || row.held_amount === undefined ? null : toMinorUnits(row.held_amount),
    metadata: row.metadata ?? {},
    reference: row.reference ?? null,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    completedAt: row.completed_at,
  };
}

/**
 * The transactions, each refund with the reason it was asked for with (refund_requests; null for one the provider
 * reported itself): one read, and only when there are refunds among them.
 */
export async function withRefundReasons(knex: Knex, transactions: Transaction[]): Promise<Transaction[]> {
  const refunds = transactions
    .filter((transaction) => transaction.reversalReason === 'refund')
    .map((transaction) => transaction.id);
  if (refunds.length === 0) return transactions;
  const rows: { transaction_id: string; reason: RefundReason | null }[] = await knex('refund_requests')
    .whereIn('transaction_id', refunds)
    .select('transaction_id', 'reason');
  const reasons = new Map(rows.map((row) => [row.transaction_id, row.reason]));
  return transactions.map((transaction) =>
    transaction.reversalReason === 'refund'
      ? { ...transaction, refundReason: reasons.get(transaction.id) ?? null }
      : transaction,
  );
}

/** The columns of what a transaction carries from its creation on, as they are written: bigints as strings. */
export function transactionColumns(
  transaction: Omit<NewTransaction, 'userId'> & Pick<Transaction, 'userId'>,
): Omit<TransactionRow, 'status' | 'failure_reason' | 'created_at' | 'updated_at' | 'completed_at'> {
  return {
    id: transaction.id,
    account_id: transaction.accountId,
    user_id: transaction.userId,
    type: transaction.type,
    amount: transaction.amount.toString(),
    currency: transaction.currency,
    fee: transaction.fee.toString(),
    counterparty_account_id: transaction.counterpartyAccountId,
    counterparty_user_id: transaction.counterpartyUserId,
    exchange_rate: transaction.exchangeRate,
    converted_amount: transaction.convertedAmount?.toString() ?? null,
    converted_currency: transaction.convertedCurrency,
    payment_id: transaction.paymentId,
    original_transaction_id: transaction.originalTransactionId ?? null,
    reversal_reason: transaction.reversalReason ?? null,
    held_amount: transaction.heldAmount?.toString() ?? null,
    metadata: transaction.metadata ?? {},
    reference: transaction.reference ?? null,
  };
}

/** A transaction as JSON (idempotent replays keep the first answer): bigints as strings, dates as ISO strings. */
export function transactionSnapshot(transaction: Transaction): TransactionRow {
  return {
    ...transactionColumns(transaction),
    status: transaction.status,
    failure_reason: transaction.failureReason,
    created_at: transaction.createdAt,
    updated_at: transaction.updatedAt,
    completed_at: transaction.completedAt,
  };
}

export function fromSnapshot(snapshot: Record<string, unknown>): Transaction {
  const row = snapshot as unknown as TransactionRow & {
    created_at: string;
    updated_at: string;
    completed_at: string | null;
  };
  return toTransaction({
    ...row,
    created_at: new Date(row.created_at),
    updated_at: new Date(row.updated_at),
    completed_at: row.completed_at === null ? null : new Date(row.completed_at),
  });
}
