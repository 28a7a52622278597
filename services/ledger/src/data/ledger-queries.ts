import { toMinorUnits, type MinorUnits } from '@payments/contracts';
import type { Knex } from '@payments/service-kit';
import type { Page, PageRequest } from '../domain/history.js';
import type { Account, Transaction } from '../domain/transaction.js';
import {
  ACCOUNT_COLUMNS,
  toAccount,
  toTransaction,
  type AccountRow,
  type TransactionRow,
} from './records.js';

/** A withdrawal the provider may have received that outlived its hold expiry, and since when it waits. */
export interface ReconciliationCase {
  transaction: Transaction;
  flaggedAt: Date;
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
