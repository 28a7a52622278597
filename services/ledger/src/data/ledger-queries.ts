import { toMinorUnits, type MinorUnits } from '@payments/contracts';
import type { Knex } from '@payments/service-kit';
import type { HistoryFilter, Page, PageRequest } from '../domain/history.js';
import type { Account, AccountFacts, Transaction } from '../domain/transaction.js';
import { countHistory, type HistoryOwner } from './history-counts.js';
import {
  ACCOUNT_COLUMNS,
  toAccount,
  toTransaction,
  USER_ACCOUNT,
  type AccountRow,
  type TransactionRow,
} from './records.js';

/** Whose history: everything a user sent or received, or everything that moved one account. */
export type HistoryScope = { userId: string } | { accountId: string };

/** A withdrawal the provider may have received that outlived its hold expiry, and since when it waits. */
export interface ReconciliationCase {
  transaction: Transaction;
  flaggedAt: Date;
}

/** The owner and currency of the user accounts among `accountIds` that exist. */
export async function findAccountFacts(knex: Knex, accountIds: string[]): Promise<AccountFacts[]> {
  const { rows }: { rows: { id: string; user_id: string; currency: string }[] } = await knex.raw(
    `SELECT id, user_id, currency FROM accounts WHERE id = ANY(?::uuid[]) AND ${USER_ACCOUNT}`,
    [accountIds],
  );
  return rows.map((row) => ({ id: row.id, userId: row.user_id, currency: row.currency }));
}

export async function findTransaction(knex: Knex, transactionId: string): Promise<Transaction | null> {
  const row: TransactionRow | undefined = await knex('transactions').where({ id: transactionId }).first();
  return row ? toTransaction(row) : null;
}

/**
 * Newest first. A transfer shows in the receiver's history once it has completed. Sent and received rows are
 * read as two index-ordered branches, each cut at offset + limit, so a page stays cheap for a busy account.
 * The total comes from the history counters, or, for a date range they cannot answer, from counting the rows.
 */
export async function listTransactions(
  knex: Knex,
  scope: HistoryScope,
  filter: HistoryFilter,
  page: PageRequest,
): Promise<Page<Transaction>> {
  const filtered = (query: Knex.QueryBuilder) => {
    if (filter.type) query.where('type', filter.type);
    if (filter.status) query.where('status', filter.status);
    if (filter.from) query.where('created_at', '>=', filter.from);
    if (filter.before) query.where('created_at', '<', filter.before);
    return query;
  };
  const owner: HistoryOwner =
    'accountId' in scope ? { kind: 'account', id: scope.accountId } : { kind: 'user', id: scope.userId };
  const [ownColumn, receivedColumn] =
    owner.kind === 'account'
      ? (['account_id', 'counterparty_account_id'] as const)
      : (['user_id', 'counterparty_user_id'] as const);
  const sent = () => filtered(knex('transactions').where(ownColumn, owner.id));
  // Transfers between a user's own accounts are already among the sent ones.
  const received = () =>
    filtered(
      knex('transactions')
        .where({ [receivedColumn]: owner.id, type: 'transfer', status: 'completed' })
        .where((q) => q.whereNot(ownColumn, owner.id).orWhereNull(ownColumn)),
    );
  const newestFirst = [
    { column: 'created_at', order: 'desc' as const },
    { column: 'id', order: 'desc' as const },
  ];
  const reach = page.offset + page.limit;
  const [rows, total] = await Promise.all([
    knex
      .select<TransactionRow[]>('*')
      .from(
        knex
          .unionAll(
            [
              sent().select('*').orderBy(newestFirst).limit(reach),
              received().select('*').orderBy(newestFirst).limit(reach),
            ],
            true,
          )
          .as('history'),
      )
      .orderBy(newestFirst)
      .limit(page.limit)
      .offset(page.offset),
    filter.from || filter.before ? countRows([sent(), received()]) : countHistory(knex, owner, filter),
  ]);
  return { data: rows.map(toTransaction), total };
}

async function countRows(queries: Knex.QueryBuilder[]): Promise<number> {
  const counts = await Promise.all(queries.map((query) => query.count<{ count: string }[]>('*')));
  return counts.reduce((sum, [row]) => sum + Number(row?.count ?? 0), 0);
}

/** Pending withdrawals awaiting reconciliation, longest waiting first. */
export async function listAwaitingReconciliation(
  knex: Knex,
  page: PageRequest,
): Promise<Page<ReconciliationCase>> {
  const flagged = () =>
    knex('transactions').where('status', 'pending').whereNotNull('reconciliation_required_at');
  const [rows, [count]] = await Promise.all([
    flagged()
      .select<(TransactionRow & { reconciliation_required_at: Date })[]>('*')
      .orderBy([{ column: 'reconciliation_required_at' }, { column: 'id' }])
      .limit(page.limit)
      .offset(page.offset),
    flagged().count<{ count: string }[]>('*'),
  ]);
  return {
    data: rows.map((row) => ({ transaction: toTransaction(row), flaggedAt: row.reconciliation_required_at })),
    total: Number(count?.count ?? 0),
  };
}

export async function countAwaitingReconciliation(knex: Knex): Promise<number> {
  const [count] = await knex('transactions')
    .where('status', 'pending')
    .whereNotNull('reconciliation_required_at')
    .count<{ count: string }[]>('*');
  return Number(count?.count ?? 0);
}

/**
 * Withdrawals and transfers still holding funds since before `cutoff`, oldest first; those already awaiting
 * reconciliation wait for the provider or an operator, not for a timer.
 */
export async function expiredHolds(knex: Knex, cutoff: Date, limit: number): Promise<string[]> {
  const rows: { id: string }[] = await knex('transactions')
    .where('status', 'pending')
    .whereIn('type', ['withdrawal', 'transfer'])
    .where('created_at', '<', cutoff)
    .whereNull('reconciliation_required_at')
    .orderBy('created_at')
    .limit(limit)
    .select('id');
  return rows.map((row) => row.id);
}

/** Pending deposits accepted before `cutoff`, oldest first: nothing paid them in time. */
export async function expiredDeposits(knex: Knex, cutoff: Date, limit: number): Promise<string[]> {
  const rows: { id: string }[] = await knex('transactions')
    .where('status', 'pending')
    .where('type', 'deposit')
    .where('created_at', '<', cutoff)
    .orderBy('created_at')
    .limit(limit)
    .select('id');
  return rows.map((row) => row.id);
}

export async function pendingTransfers(
  knex: Knex,
  acceptedBefore: Date,
  notBefore: Date,
  limit: number,
): Promise<string[]> {
  const rows: { id: string }[] = await knex('transactions')
    .where('status', 'pending')
    .where('type', 'transfer')
    .where('created_at', '<', acceptedBefore)
    .where('created_at', '>=', notBefore)
    .orderBy('created_at')
    .limit(limit)
    .select('id');
  return rows.map((row) => row.id);
}

export async function deleteIdempotencyKeysBefore(knex: Knex, cutoff: Date): Promise<number> {
  return knex('idempotency_keys').where('created_at', '<', cutoff).delete();
}

/** User accounts a reversal took below zero, furthest below first. */
export async function listOverdrawnAccounts(knex: Knex, page: PageRequest): Promise<Page<Account>> {
  // Below zero implies a shortfall (the accounts_user_balances check): the partial index accounts_overdrawn.
  const overdrawn = () =>
    knex('accounts')
      .where('kind', 'user')
      .where('reversal_shortfall', '>', 0)
      .where('available_balance', '<', 0);
  const [rows, [count]] = await Promise.all([
    overdrawn()
      .select<AccountRow[]>(ACCOUNT_COLUMNS)
      .orderBy([{ column: 'available_balance' }, { column: 'id' }])
      .limit(page.limit)
      .offset(page.offset),
    overdrawn().count<{ count: string }[]>('*'),
  ]);
  return { data: rows.map(toAccount), total: Number(count?.count ?? 0) };
}

/** Per currency: the overdrawn accounts, and how far below zero they are in all (minor units). */
export interface OverdrawnTotal {
  currency: string;
  accounts: number;
  overdrawnBy: MinorUnits;
}

export async function overdrawnTotals(knex: Knex): Promise<OverdrawnTotal[]> {
  const rows: { currency: string; accounts: string; overdrawn_by: string }[] = await knex('accounts')
    .where('kind', 'user')
    .where('reversal_shortfall', '>', 0)
    .where('available_balance', '<', 0)
    .groupBy('currency')
    .orderBy('currency')
    .select(
      'currency',
      knex.raw('count(*) AS accounts'),
      knex.raw('-sum(available_balance) AS overdrawn_by'),
    );
  return rows.map((row) => ({
    currency: row.currency,
    accounts: Number(row.accounts),
    overdrawnBy: toMinorUnits(row.overdrawn_by),
  }));
}

export async function countOverdrawnAccounts(knex: Knex): Promise<number> {
  const [count] = await knex('accounts')
    .where('kind', 'user')
    .where('reversal_shortfall', '>', 0)
    .where('available_balance', '<', 0)
    .count<{ count: string }[]>('*');
  return Number(count?.count ?? 0);
}
