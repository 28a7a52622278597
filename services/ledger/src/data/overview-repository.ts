import { oldestUnpublishedSeconds, type Knex } from '@payments/service-kit';
import type { CountRow, MovementRow, MovementType } from '../domain/overview.js';
import type { OverviewStore } from '../use-cases/overview.js';
import type { ProviderRequestStore } from '../use-cases/provider-requests.js';
import type { ReconciliationStore } from '../use-cases/reconciliation.js';

// The bucket of a timestamp: its start, on a grid of `step` seconds from the epoch.
const BUCKET = (column: string) => `to_timestamp(floor(extract(epoch FROM ${column}) / :step) * :step)`;

/**
 * The overview's reads of the books, each one bounded statement over an index (035_overview_and_exposure); the
 * reconciliation figures and the provider backlog are their own stores'.
 */
export function createOverviewRepository(
  knex: Knex,
  {
    reconciliation,
    providerRequests,
  }: {
    reconciliation: Pick<ReconciliationStore, 'openCaseCounts' | 'countAwaitingReconciliation'>;
    providerRequests: Pick<ProviderRequestStore, 'backlog'>;
  },
): OverviewStore {
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

    openCaseCounts: () => reconciliation.openCaseCounts(),
    countUnconfirmedWithdrawals: () => reconciliation.countAwaitingReconciliation(),

    async providerBacklog() {
      const { waiting, oldestSeconds } = await providerRequests.backlog();
      return { waiting, oldestSeconds: Math.max(0, oldestSeconds) };
    },

    outboxAgeSeconds: () => oldestUnpublishedSeconds(knex),
  };
}
