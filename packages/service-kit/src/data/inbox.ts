import type { Knex } from 'knex';
import type { Logger } from '../logger.js';
import type { RuntimePrivileges } from './database.js';
import { startRetention, type Retention } from './retention.js';

/**
 * How long an event is remembered as processed, so that a copy of it delivered again takes no effect: well past
 * any redelivery (a provider's retries, a broker's, a dead letter replayed), Stripe's 3 days and 30 days included.
 */
export const DEFAULT_INBOX_RETENTION_DAYS = 35;

/**
 * What a service's runtime role does to the inbox: records an event as processed (RETURNING reads it back), and
 * deletes the records past their retention.
 */
export const inboxPrivileges = {
  processed_events: ['SELECT', 'INSERT', 'DELETE'],
} as const satisfies RuntimePrivileges;

/**
 * Deletes up to `limit` inbox records older than `retentionDays` (by the database's clock), in one statement.
 * A copy of one of those events delivered afterwards would take effect again: the retention outlasts redelivery.
 */
export async function pruneProcessedEvents(
  knex: Knex,
  retentionDays: number,
  limit: number,
): Promise<number> {
  const { rowCount } = await knex.raw<{ rowCount: number | null }>(
    `DELETE FROM processed_events WHERE (event_id, consumer) IN (
       SELECT event_id, consumer FROM processed_events
       WHERE processed_at < now() - make_interval(days => ?) LIMIT ?)`,
    [retentionDays, limit],
  );
  return rowCount ?? 0;
}

/** Prunes the inbox past `retentionDays`, in batches, on a poller (see startRetention). */
export function startInboxRetention(
  knex: Knex,
  options: { retentionDays: number; logger: Logger; intervalMs?: number },
): Retention {
  return startRetention({
    what: 'processed events',
    pruneBatch: (limit) => pruneProcessedEvents(knex, options.retentionDays, limit),
    logger: options.logger,
    intervalMs: options.intervalMs,
  });
}

/**
 * Runs `effect` and records the event as processed in one transaction, so an event takes effect at most once
 * per consumer. A concurrent duplicate waits on the primary key and then finds the row: it does nothing.
 */
export async function processOnce(
  knex: Knex,
  consumer: string,
  eventId: string,
  effect: (trx: Knex.Transaction) => Promise<void>,
): Promise<'processed' | 'duplicate'> {
  const fresh = await processBatchOnce(knex, consumer, [eventId], (trx) => effect(trx));
  return fresh.size > 0 ? 'processed' : 'duplicate';
}

/**
 * `processOnce` for many events in one transaction: records them all, then runs `effect` with the ids that were
 * new (neither processed before nor repeated earlier in the list). The events take effect together or not at all.
 */
export async function processBatchOnce(
  knex: Knex,
  consumer: string,
  eventIds: string[],
  effect: (trx: Knex.Transaction, fresh: ReadonlySet<string>) => Promise<void>,
): Promise<ReadonlySet<string>> {
  return knex.transaction(async (trx) => {
    // In one order everywhere, so two consumers claiming overlapping redeliveries cannot deadlock.
    const unique = [...new Set(eventIds)].sort();
    const inserted: { event_id: string }[] = await trx('processed_events')
      .insert(unique.map((eventId) => ({ event_id: eventId, consumer })))
      .onConflict(['event_id', 'consumer'])
      .ignore()
      .returning('event_id');
    const fresh = new Set(inserted.map((row) => row.event_id));
    if (fresh.size > 0) await effect(trx, fresh);
    return fresh;
  });
}
