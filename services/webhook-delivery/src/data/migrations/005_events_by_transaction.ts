import type { Migration } from '@payments/service-kit';

/**
 * A transaction's timeline asks which events name it (ADR 0126), as the transaction or as the one a reversal
 * reverses, and each event's deliveries: one GIN index over both ids, and deliveries by event.
 */
export const eventsByTransaction: Migration = {
  name: '005_events_by_transaction',
  async up(knex) {
    await knex.raw(`
      CREATE INDEX webhook_events_transactions ON webhook_events USING gin ((ARRAY[
        event#>>'{data,transaction_id}', event#>>'{data,original_transaction_id}'
      ]))`);
    await knex.raw('CREATE INDEX webhook_deliveries_event ON webhook_deliveries (event_id)');
  },
  async down(knex) {
    await knex.raw('DROP INDEX webhook_deliveries_event');
    await knex.raw('DROP INDEX webhook_events_transactions');
  },
};
