import type { Migration } from '@payments/service-kit';

export const webhookEventsByAge: Migration = {
  name: '003_webhook_events_by_age',
  async up(knex) {
    // The retention's pruning reads by age. Building it blocks webhooks for a moment; a large table can get it
    // first CONCURRENTLY.
    await knex.raw('CREATE INDEX IF NOT EXISTS webhook_events_received ON webhook_events (received_at)');
  },
  async down(knex) {
    await knex.raw('DROP INDEX webhook_events_received');
  },
};
