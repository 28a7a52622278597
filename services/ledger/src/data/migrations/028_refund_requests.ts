import { sqlSteps, type Migration } from '@payments/service-kit';

/**
 * Refunds asked for through the API (POST /transaction/{id}/refund, ADR 0119): each is a reversal of its deposit,
 * pending and holding its net amount until the provider confirms it; this row keeps what the provider is asked
 * (the payment refunded, Stripe's reason), who asked, and the provider's refund once it answered. It goes with its
 * reversal when a removed user's transactions do.
 */
export const refundRequests: Migration = {
  name: '028_refund_requests',
  up: sqlSteps(
    `
      CREATE TABLE refund_requests (
        transaction_id uuid PRIMARY KEY REFERENCES transactions (id) ON DELETE CASCADE,
        deposit_id uuid NOT NULL,
        payment text NOT NULL,
        reason text CHECK (reason IN ('duplicate', 'fraudulent', 'requested_by_customer')),
        requested_by uuid NOT NULL,
        provider_refund text,
        attempts integer NOT NULL DEFAULT 0,
        last_error text,
        created_at timestamptz NOT NULL DEFAULT now()
      )`,
    `CREATE INDEX refund_requests_unanswered ON refund_requests (created_at) WHERE provider_refund IS NULL`,
  ),
  async down(knex) {
    await knex.schema.dropTable('refund_requests');
  },
};
