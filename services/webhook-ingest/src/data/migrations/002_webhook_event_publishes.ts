import type { Migration } from '@payments/service-kit';

export const webhookEventPublishes: Migration = {
  name: '002_webhook_event_publishes',
  async up(knex) {
    // Which event `event_data` is published as: a confirmation, or a refund or dispute of a payment.
    await knex.raw(`
        ALTER TABLE webhook_events ADD COLUMN publishes text NOT NULL DEFAULT 'PaymentProcessed'
          CHECK (publishes IN ('PaymentProcessed', 'PaymentAdjusted'))`);
  },
  async down(knex) {
    await knex.raw('ALTER TABLE webhook_events DROP COLUMN publishes');
  },
};
