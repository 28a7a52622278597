import type { Migration } from '@payments/service-kit';

export const revocationsExceptJtiMigration: Migration = {
  name: '003_revocations_except_jti',
  async up(knex) {
    await knex.schema.alterTable('revocations', (table) => {
      table.text('except_jti');
    });
  },
  async down(knex) {
    await knex.schema.alterTable('revocations', (table) => {
      table.dropColumn('except_jti');
    });
  },
};
