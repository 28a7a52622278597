import type { Knex } from 'knex';
import type { Migration } from './database.js';

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
  return knex.transaction(async (trx) => {
    const inserted = await trx('processed_events')
      .insert({ event_id: eventId, consumer })
      .onConflict(['event_id', 'consumer'])
      .ignore()
      .returning('event_id');
    if (inserted.length === 0) return 'duplicate';
    await effect(trx);
    return 'processed';
  });
}
