import type { Migration } from '@payments/service-kit';

/**
 * The trace of the event a delivery sends (ADR 0112): each attempt is a span in it, so a deposit's trace ends at
 * its outgoing webhook. Nullable: deliveries made before it, and every delivery with tracing off, send as before.
 */
export const deliveryTraceContext: Migration = {
  name: '002_delivery_trace_context',
  async up(knex) {
    await knex.raw('ALTER TABLE webhook_deliveries ADD COLUMN trace_context jsonb');
  },
  async down(knex) {
    await knex.raw('ALTER TABLE webhook_deliveries DROP COLUMN trace_context');
  },
};
