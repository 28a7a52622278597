import { sqlSteps, type Migration } from '@payments/service-kit';

/**
 * The trace a provider request was recorded in (ADR 0112): the ledger asks the provider in it, and passes it in
 * the payment's metadata, so the provider's webhook joins the deposit's trace. Nullable: requests recorded before
 * it, and every request with tracing off, are asked as before.
 */
export const providerPaymentTraceContext: Migration = {
  name: '024_provider_payment_trace_context',
  up: sqlSteps('ALTER TABLE provider_payments ADD COLUMN trace_context jsonb'),
  async down(knex) {
    await knex.raw('ALTER TABLE provider_payments DROP COLUMN trace_context');
  },
};
