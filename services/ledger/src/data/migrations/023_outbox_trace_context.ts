import { sqlSteps, type Migration } from '@payments/service-kit';

/**
 * The trace context an outbox row was written in (ADR 0112), which the relay carries in the message headers: a
 * nullable column, so rows written before it (and every row with tracing off) publish as before. The accepting
 * function fills it from 025_accept_requests_trace_context on.
 */
export const outboxTraceContext: Migration = {
  name: '023_outbox_trace_context',
  up: sqlSteps('ALTER TABLE outbox ADD COLUMN trace_context jsonb'),
  async down(knex) {
    await knex.raw('ALTER TABLE outbox DROP COLUMN trace_context');
  },
};
