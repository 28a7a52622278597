import type { Migration } from '@payments/service-kit';

/**
 * A transaction's timeline asks which events name it (ADR 0126): by the transaction id or the provider's ids an
 * event's data and payload carry. One GIN index over them all rather than one index each.
 */
export const webhookEventsByObject: Migration = {
  name: '005_webhook_events_by_object',
  async up(knex) {
    await knex.raw(`
      CREATE INDEX webhook_events_objects ON webhook_events USING gin ((ARRAY[
        event_data->>'transaction_id', event_data->>'payment_id', event_data->>'payment_reference',
        payload#>>'{data,object,id}', payload#>>'{data,object,payment_intent}'
      ]))`);
  },
  async down(knex) {
    await knex.raw('DROP INDEX webhook_events_objects');
  },
};
