import type { Migration } from '../database.js';

/** The outbox (outbox.ts): events written in the transaction of their effect, then published by the relay. */
export const outboxMigration: Migration = {
  name: '000_outbox',
  async up(knex) {
    await knex.schema.createTable('outbox', (table) => {
      table.bigIncrements('seq').primary();
      table.uuid('event_id').notNullable().unique();
      table.jsonb('event').notNullable();
      table.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
      table.timestamp('published_at', { useTz: true });
    });
    await knex.raw('CREATE INDEX outbox_unpublished ON outbox (seq) WHERE published_at IS NULL');
  },
  async down(knex) {
    await knex.schema.dropTable('outbox');
  },
};
