import type { Knex } from '@payments/service-kit';
import type { PendingTransactionStore } from '../use-cases/pending-transactions.js';

/** Both read the partial index transactions_pending, so a scrape costs little however large the table. */
export function createPendingTransactionRepository(knex: Knex): PendingTransactionStore {
  return {
    async countPendingByType() {
      const rows = await knex('transactions')
        .where({ status: 'pending' })
        .groupBy('type')
        .select('type')
        .count<{ type: string; count: string }[]>('* as count');
      return new Map(rows.map((row) => [row.type, Number(row.count)]));
    },
    async oldestPendingSeconds() {
      const result = await knex.raw<{ rows: { age: string | number | null }[] }>(
        `SELECT extract(epoch FROM now() - min(created_at)) AS age FROM transactions WHERE status = 'pending'`,
      );
      return Math.max(0, Number(result.rows[0]?.age ?? 0));
    },
  };
}
