import { sqlSteps, type Migration } from '@payments/service-kit';

/**
 * What the ledger asked the payment provider for each deposit (and, later, each payout): the request recorded
 * when its event is consumed, the provider's reference and the client secret once created, and when to try again.
 * `next_attempt_at` is set while there is work to do (create, or cancel once `cancel_requested`), null otherwise.
 */
export const providerPayments: Migration = {
  name: '013_provider_payments',
  up: sqlSteps(
    `
      CREATE TABLE provider_payments (
        transaction_id uuid PRIMARY KEY REFERENCES transactions (id) ON DELETE CASCADE,
        kind text NOT NULL CHECK (kind IN ('payment', 'payout')),
        provider text NOT NULL,
        state text NOT NULL DEFAULT 'requested'
          CHECK (state IN ('requested', 'created', 'refused', 'skipped', 'closed')),
        reference text,
        client_secret text,
        destination text,
        cancel_requested boolean NOT NULL DEFAULT false,
        attempts integer NOT NULL DEFAULT 0,
        next_attempt_at timestamptz DEFAULT now(),
        last_error text,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        CHECK (state <> 'created' OR reference IS NOT NULL)
      )`,
    `
      CREATE INDEX provider_payments_due ON provider_payments (next_attempt_at)
      WHERE next_attempt_at IS NOT NULL`,
  ),
  async down(knex) {
    await knex.schema.dropTable('provider_payments');
  },
};
