import type { Migration } from '../database.js';

/** Every consuming service runs it after its other migrations: the retention's pruning reads by age. */
export const inboxByAgeMigration: Migration = {
  name: '000_processed_events_by_age',
  async up(knex) {
    // Building it blocks inserts into processed_events for a moment; a large inbox can get it first CONCURRENTLY.
    await knex.raw(
      'CREATE INDEX IF NOT EXISTS processed_events_processed_at ON processed_events (processed_at)',
    );
  },
  async down(knex) {
    await knex.raw('DROP INDEX processed_events_processed_at');
  },
};
