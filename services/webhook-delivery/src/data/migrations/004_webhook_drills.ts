import type { Migration } from '@payments/service-kit';

/**
 * When each drill was started, so drills are limited per endpoint and per user across every process. No foreign
 * key: deleting an endpoint and making another must not reset its owner's allowance.
 */
export const webhookDrills: Migration = {
  name: '004_webhook_drills',
  async up(knex) {
    await knex.schema.createTable('webhook_drills', (table) => {
      table.text('id').primary();
      table.uuid('endpoint_id').notNullable();
      table.uuid('user_id').notNullable();
      table.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
      table.index(['endpoint_id', 'created_at']);
      table.index(['user_id', 'created_at']);
    });
  },
  async down(knex) {
    await knex.schema.dropTable('webhook_drills');
  },
};
