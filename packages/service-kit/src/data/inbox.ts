import type { Knex } from 'knex';
import type { Migration, RuntimePrivileges } from './database.js';

/** What a service's runtime role does to the inbox: records an event as processed (RETURNING reads it back). */
export const inboxPrivileges = {
  processed_events: ['SELECT', 'INSERT'],
} as const satisfies RuntimePrivileges;

export const inboxMigration: Migration = {
  name: '000_processed_events',
  async up(knex) {
    await knex.schema.createTable('processed_events', (table) => {
      table.text('event_id').notNullable();
      table.text('consumer').notNullable();
      table.timestamp('processed_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
      table.primary(['event_id', 'consumer']);
    });
  },
  async down(knex) {
    await knex.schema.dropTable('processed_events');
  },
};

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
