import type { Migration } from '@payments/service-kit';

export const revocationsMigration: Migration = {
  name: '002_revocations',
  async up(knex) {
    await knex.schema.createTable('revocations', (table) => {
      table.bigIncrements('id').primary();
      table.text('jti');
      table.uuid('user_id');
      table.bigInteger('issued_before');
      table.bigInteger('expires_at').notNullable();
      table.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
      table.index(['expires_at'], 'revocations_expires_at');
    });
    await knex.raw(`ALTER TABLE revocations ADD CONSTRAINT revocations_target_check
      CHECK (jti IS NOT NULL OR (user_id IS NOT NULL AND issued_before IS NOT NULL))`);
  },
  async down(knex) {
    await knex.schema.dropTable('revocations');
  },
};
