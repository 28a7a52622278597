import type { Migration } from '@payments/service-kit';

/** `event_data` may also be published as PayoutAccountUpdated: a connected account's `account.updated`. */
export const webhookEventsPublishAccountUpdates: Migration = {
  name: '004_webhook_events_publish_account_updates',
  async up(knex) {
    await knex.raw('ALTER TABLE webhook_events DROP CONSTRAINT IF EXISTS webhook_events_publishes_check');
    await knex.raw(`
        ALTER TABLE webhook_events ADD CONSTRAINT webhook_events_publishes_check
          CHECK (publishes IN ('PaymentProcessed', 'PaymentAdjusted', 'PayoutAccountUpdated'))`);
  },
  async down(knex) {
    await knex.raw('ALTER TABLE webhook_events DROP CONSTRAINT IF EXISTS webhook_events_publishes_check');
    await knex.raw(`
        ALTER TABLE webhook_events ADD CONSTRAINT webhook_events_publishes_check
          CHECK (publishes IN ('PaymentProcessed', 'PaymentAdjusted'))`);
  },
};
