import type { Migration } from '@payments/service-kit';

export const webhookEvents: Migration = {
  name: '001_webhook_events',
  async up(knex) {
    await knex.schema.createTable('webhook_events', (table) => {
      table.text('event_id').primary();
      table.text('source').notNullable();
      table.text('event_type').notNullable();
      table.jsonb('payload').notNullable();
      /** `completed`, `failed`, or `ignored` for events recorded without effect. */
      table.text('outcome').notNullable();
      /** The PaymentProcessed data to publish; null when ignored. */
      table.jsonb('event_data');
      table.timestamp('received_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
      table.timestamp('published_at', { useTz: true });
    });
    await knex.raw(
      'CREATE INDEX webhook_events_unpublished ON webhook_events (received_at) ' +
        "WHERE published_at IS NULL AND outcome <> 'ignored'",
    );
  },
  async down(knex) {
    await knex.schema.dropTable('webhook_events');
  },
};
