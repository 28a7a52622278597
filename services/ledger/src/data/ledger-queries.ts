import type { Knex } from '@payments/service-kit';
import type { Page, PageRequest } from '../domain/history.js';
import type { Transaction } from '../domain/transaction.js';
import { toTransaction, type TransactionRow } from './records.js';

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
