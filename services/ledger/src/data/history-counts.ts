import type { Knex } from '@payments/service-kit';
import type { HistoryFilter } from '../domain/history.js';

/**
 * Whose history is counted. The `transactions` triggers (migration 005) record counts per owner, direction,
 * type and status as deltas in history_count_deltas; compaction folds them into history_counts.
 */
export interface HistoryOwner {
  kind: 'user' | 'account';
  id: string;
}

/** The advisory lock behind compaction: one ledger process compacts at a time, the others skip their pass. */
export const HISTORY_COMPACTION_LOCK = 'ledger-history-count-compaction';

/**
 * How many of the owner's transactions match `filter`, exactly, without scanning them: one statement, so one
 * snapshot, sees each delta either still pending or already folded in, never both.
 */
export async function countHistory(
  knex: Knex,
  owner: HistoryOwner,
  filter: Pick<HistoryFilter, 'type' | 'status'>,
): Promise<number> {
  const matching = (table: string, column: string) => {
    const query = knex(table).where({ owner_kind: owner.kind, owner_id: owner.id }).select({ n: column });
    if (filter.type) query.where('type', filter.type);
    if (filter.status) query.where('status', filter.status);
    return query;
  };
  const [row] = await knex
    .sum<{ total: string | null }[]>({ total: 'n' })
    .from(
      knex
        .unionAll([matching('history_counts', 'count'), matching('history_count_deltas', 'delta')], true)
        .as('counted'),
    );
  return Number(row?.total ?? 0);
}

/**
 * Folds up to `limit` deltas into history_counts in one database transaction, dropping the counters that
 * reach zero. Resolves with how many deltas it folded: 0 when another process holds the compaction lock.
 */
export async function compactHistoryCounts(knex: Knex, limit: number): Promise<number> {
  return knex.transaction(async (trx) => {
    const { rows: locks } = await trx.raw<{ rows: { locked: boolean }[] }>(
      'SELECT pg_try_advisory_xact_lock(hashtextextended(?, 0)) AS locked',
      [HISTORY_COMPACTION_LOCK],
    );
    if (!locks[0]?.locked) return 0;
    // Under the lock no one else writes history_counts, so the counts read here stay current until commit.
    // Deltas are never updated, so their ctids stay valid between picking and deleting them.
    const { rows } = await trx.raw<{ rows: { moved: string }[] }>(
      `WITH moved AS (
         DELETE FROM history_count_deltas
         WHERE ctid = ANY (ARRAY (SELECT ctid FROM history_count_deltas LIMIT ?))
         RETURNING owner_kind, owner_id, direction, type, status, delta
       ), summed AS (
         SELECT owner_kind, owner_id, direction, type, status, sum(delta) AS delta FROM moved
         GROUP BY owner_kind, owner_id, direction, type, status
         HAVING sum(delta) <> 0
       ), merged AS (
         SELECT owner_kind, owner_id, direction, type, status, coalesce(kept.count, 0) + summed.delta AS count
         FROM summed LEFT JOIN history_counts kept USING (owner_kind, owner_id, direction, type, status)
       ), upserted AS (
         INSERT INTO history_counts (owner_kind, owner_id, direction, type, status, count)
         SELECT * FROM merged WHERE count <> 0
         ON CONFLICT (owner_kind, owner_id, direction, type, status) DO UPDATE SET count = EXCLUDED.count
       ), emptied AS (
         DELETE FROM history_counts kept USING merged
         WHERE merged.count = 0
           AND (kept.owner_kind, kept.owner_id, kept.direction, kept.type, kept.status)
             = (merged.owner_kind, merged.owner_id, merged.direction, merged.type, merged.status)
       )
       SELECT count(*) AS moved FROM moved`,
      [limit],
    );
    return Number(rows[0]?.moved ?? 0);
  });
}
