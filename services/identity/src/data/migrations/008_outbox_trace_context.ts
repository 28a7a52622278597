import type { Migration } from '@payments/service-kit';

/**
 * The trace context an outbox row was written in (ADR 0112), which the relay carries in the message headers: a
 * nullable column, so rows written before it (and every row with tracing off) publish as before.
 */
export const outboxTraceContextMigration: Migration = {
  name: '008_outbox_trace_context',
  async up(knex) {
    await knex.raw('ALTER TABLE outbox ADD COLUMN trace_context jsonb');
  },
  async down(knex) {
    await knex.raw('ALTER TABLE outbox DROP COLUMN trace_context');
  },
};
