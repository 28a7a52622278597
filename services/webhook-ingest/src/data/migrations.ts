import type { Migration, RuntimePrivileges } from '@payments/service-kit';

export const migrations: Migration[] = [
  {
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
  },
  {
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
  },
  {
    name: '003_webhook_events_by_age',
    async up(knex) {
      // The retention's pruning reads by age. Building it blocks webhooks for a moment; a large table can get it
      // first CONCURRENTLY.
      await knex.raw('CREATE INDEX IF NOT EXISTS webhook_events_received ON webhook_events (received_at)');
    },
    async down(knex) {
      await knex.raw('DROP INDEX webhook_events_received');
    },
  },
];

/** What the service's runtime role may do, table by table (docs/security.md, "Database and broker logins"). */
export const privileges: RuntimePrivileges = {
  // Recorded once, marked published; deleted past their retention.
  webhook_events: ['SELECT', 'INSERT', 'UPDATE', 'DELETE'],
};
