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
