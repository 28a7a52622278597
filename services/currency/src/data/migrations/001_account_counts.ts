import type { Migration } from '@payments/service-kit';

export const accountCounts: Migration = {
  name: '001_account_counts',
  async up(knex) {
    await knex.schema.createTable('account_counts', (table) => {
      table.uuid('account_id').primary();
      table.uuid('user_id').notNullable().index();
      table.string('currency', 3).notNullable();
      table.timestamp('recorded_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    });
  },
  async down(knex) {
    await knex.schema.dropTable('account_counts');
  },
};
