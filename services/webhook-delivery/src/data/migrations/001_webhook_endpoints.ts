import type { Migration } from '@payments/service-kit';

export const webhookEndpoints: Migration = {
  name: '001_webhook_endpoints',
  async up(knex) {
    await knex.schema.createTable('webhook_endpoints', (table) => {
      table.uuid('id').primary();
      table.uuid('user_id').notNullable().index();
      table.text('url').notNullable();
      table.specificType('events', 'text[]').notNullable();
      table.text('description');
      table.boolean('enabled').notNullable().defaultTo(true);
      table.text('api_version').notNullable();
      table.text('secret').notNullable();
      /** Still signs deliveries, beside the new one, until it expires (rotation grace period). */
      table.text('previous_secret');
      table.timestamp('previous_secret_expires_at', { useTz: true });
      table.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
      table.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    });
    await knex.schema.createTable('webhook_deliveries', (table) => {
      table.uuid('id').primary();
      table
        .uuid('endpoint_id')
        .notNullable()
        .references('id')
        .inTable('webhook_endpoints')
        .onDelete('CASCADE');
      table.uuid('event_id').notNullable();
      table.text('event_type').notNullable();
      /** The bus event and the API version its object is rendered at, on the first attempt. */
      table.jsonb('event').notNullable();
      table.text('api_version').notNullable();
      /** The exact bytes sent on every attempt; null until the first attempt rendered them. */
      table.text('payload');
      /** pending, succeeded or failed. */
      table.text('status').notNullable();
      table.integer('attempts').notNullable().defaultTo(0);
      table.timestamp('next_attempt_at', { useTz: true });
      /** A worker holds the delivery until then; after a crash it is due again. */
      table.timestamp('locked_until', { useTz: true });
      table.timestamp('retry_until', { useTz: true }).notNullable();
      table.integer('last_status_code');
      table.integer('last_latency_ms');
      table.text('last_error');
      table.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
      table.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
      table.timestamp('delivered_at', { useTz: true });
      table.unique(['endpoint_id', 'event_id']);
      table.index(['endpoint_id', 'created_at']);
    });
    await knex.raw(
      "CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at) WHERE status = 'pending'",
    );
    await knex.schema.createTable('webhook_delivery_attempts', (table) => {
      table.bigIncrements('id');
      table
        .uuid('delivery_id')
        .notNullable()
        .references('id')
        .inTable('webhook_deliveries')
        .onDelete('CASCADE');
      table.integer('attempt').notNullable();
      table.integer('status_code');
      table.integer('latency_ms').notNullable();
      table.text('error');
      table.text('response_body_prefix');
      table.timestamp('attempted_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
      table.timestamp('next_attempt_at', { useTz: true });
      table.index(['delivery_id', 'attempt']);
    });
  },
  async down(knex) {
    await knex.schema.dropTable('webhook_delivery_attempts');
    await knex.schema.dropTable('webhook_deliveries');
    await knex.schema.dropTable('webhook_endpoints');
  },
};
