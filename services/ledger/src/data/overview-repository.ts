import type { Knex } from '@payments/service-kit';
import type { CountRow, MovementRow, MovementType } from '../domain/overview.js';
import type { OverviewStore } from '../use-cases/overview.js';

// The bucket of a timestamp: its start, on a grid of `step` seconds from the epoch.
const BUCKET = (column: string) => `to_timestamp(floor(extract(epoch FROM ${column}) / :step) * :step)`;

/** The overview's reads of the books, each one bounded statement over an index (035_overview_and_exposure). */
export function createOverviewRepository(knex: Knex): OverviewStore {
  return {
    async activity(bucketSeconds, buckets) {
      const { rows: bounds } = await knex.raw<{ rows: { from: Date; to: Date }[] }>(
        `SELECT to_timestamp(floor(extract(epoch FROM now()) / :step) * :step - :span) AS "from", now() AS "to"`,
        { step: bucketSeconds, span: (buckets - 1) * bucketSeconds },
      );
      const { from, to } = bounds[0] as { from: Date; to: Date };
      const bindings = { step: bucketSeconds, from };
      const [movements, declines, payments] = await Promise.all([
        knex.raw<{
          rows: { start: Date; type: MovementType; created: string; completed: string; failed: string }[];
        }>(
          `SELECT ${BUCKET('created_at')} AS start, type, count(*) AS created,
                  count(*) FILTER (WHERE status = 'completed') AS completed,
                  count(*) FILTER (WHERE status = 'failed') AS failed
           FROM transactions
           WHERE created_at >= :from AND type IN ('deposit', 'withdrawal', 'transfer')
           GROUP BY 1, 2`,
          bindings,
        ),
        knex.raw<{ rows: { start: Date; count: string }[] }>(
          `SELECT ${BUCKET('f.failed_at')} AS start, count(*) AS count
           FROM payment_attempt_failures AS f JOIN transactions AS t ON t.id = f.transaction_id
           WHERE f.failed_at >= :from AND t.type = 'deposit'
           GROUP BY 1`,
          bindings,
        ),
        // Card payments the provider took: deposits completed that the ledger asked the provider for.
        knex.raw<{ rows: { start: Date; count: string }[] }>(
          `SELECT ${BUCKET('t.completed_at')} AS start, count(*) AS count
           FROM transactions AS t JOIN provider_payments AS p ON p.transaction_id = t.id AND p.kind = 'payment'
           WHERE t.type = 'deposit' AND t.status = 'completed' AND t.completed_at >= :from
           GROUP BY 1`,
          bindings,
        ),
      ]);
      const counted = (rows: { start: Date; count: string }[]): CountRow[] =>
        rows.map((row) => ({ start: row.start, count: Number(row.count) }));
      return {
        from,
        to,
        movements: movements.rows.map((row): MovementRow => ({
          start: row.start,
          type: row.type,
          created: Number(row.created),
          completed: Number(row.completed),
          failed: Number(row.failed),
        })),
        declines: counted(declines.rows),
        payments: counted(payments.rows),
      };
    },

    async openCaseCounts() {
      const rows: { kind: string; count: string }[] = await knex('reconciliation_cases')
        .where({ status: 'open' })
        .groupBy('kind')
        .select('kind', knex.raw('count(*) AS count'));
      return new Map(rows.map((row) => [row.kind, Number(row.count)]));
    },

    async countUnconfirmedWithdrawals() {
      const [row] = await knex('transactions')
        .where('status', 'pending')
        .whereNotNull('reconciliation_required_at')
        .count<{ count: string }[]>('*');
      return Number(row?.count ?? 0);
    },

    async providerBacklog() {
      const row: { waiting: string; oldest: string | null } = await knex('provider_payments')
        .whereNotNull('next_attempt_at')
        .first(
          knex.raw('count(*) AS waiting'),
          knex.raw('extract(epoch FROM now() - min(created_at)) AS oldest'),
        );
      return { waiting: Number(row.waiting), oldestSeconds: Math.max(0, Number(row.oldest ?? 0)) };
    },

    async outboxAgeSeconds() {
      // The partial index outbox_unpublished finds the first row at once, however long the backlog.
      const { rows } = await knex.raw<{ rows: { age: number | string | null }[] }>(
        `SELECT extract(epoch FROM now() - created_at) AS age FROM outbox
         WHERE published_at IS NULL ORDER BY seq LIMIT 1`,
      );
      return Math.max(0, Number(rows[0]?.age ?? 0));
    },
  };
}
