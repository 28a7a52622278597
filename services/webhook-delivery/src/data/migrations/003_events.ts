import type { Migration } from '@payments/service-kit';

/**
 * The events API (ADR 0118): one row per user-facing event, whether or not an endpoint wants it, kept 30 days. Its
 * id is the bus event's, so a redelivered event adds nothing. `payload` is the body a webhook at `api_version`
 * carries, rendered once shortly after the event (null until then); `render_after` leases and backs off renders.
 */
export const events: Migration = {
  name: '003_events',
  async up(knex) {
    await knex.raw(`
      CREATE TABLE webhook_events (
        id uuid PRIMARY KEY,
        user_id uuid NOT NULL,
        type text NOT NULL,
        event jsonb NOT NULL,
        api_version text NOT NULL,
        payload text,
        render_attempts integer NOT NULL DEFAULT 0,
        render_after timestamptz NOT NULL DEFAULT now(),
        created_at timestamptz NOT NULL
      )`);
    await knex.raw(
      'CREATE INDEX webhook_events_user_created ON webhook_events (user_id, created_at DESC, id DESC)',
    );
    await knex.raw(
      'CREATE INDEX webhook_events_user_type_created ON webhook_events (user_id, type, created_at DESC, id DESC)',
    );
    await knex.raw('CREATE INDEX webhook_events_created ON webhook_events (created_at)');
    await knex.raw(
      'CREATE INDEX webhook_events_unrendered ON webhook_events (render_after) WHERE payload IS NULL',
    );
  },
  async down(knex) {
    await knex.raw('DROP TABLE webhook_events');
  },
};
