import type { Migration } from '../database.js';

/** The inbox (inbox.ts): each event a consumer processed, so that a copy delivered again takes no effect. */
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
