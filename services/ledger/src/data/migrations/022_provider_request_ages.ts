import { sqlSteps, type Migration } from '@payments/service-kit';

const PROVIDER_PAYMENT_STATES = `'requested', 'created', 'refused', 'skipped', 'closed'`;

/**
 * When each phase of a provider request first used its idempotency keys: the creation's (a payment, or a payout's
 * transfer and payout), and the undo's (a cancellation, a transfer's reversal). A phase whose keys the provider may
 * have forgotten is made no more: 'expired', left to an operator. Requests already tried count from when they were
 * recorded, never later than their first call.
 */
export const providerRequestAges: Migration = {
  name: '022_provider_request_ages',
  up: sqlSteps(
    `
      ALTER TABLE provider_payments
        ADD COLUMN create_keys_first_used_at timestamptz,
        ADD COLUMN undo_keys_first_used_at timestamptz,
        DROP CONSTRAINT provider_payments_state_check,
        ADD CONSTRAINT provider_payments_state_check CHECK (state IN (${PROVIDER_PAYMENT_STATES}, 'expired'))`,
    `UPDATE provider_payments SET create_keys_first_used_at = created_at WHERE attempts > 0`,
    `
      UPDATE provider_payments SET undo_keys_first_used_at = created_at
      WHERE state = 'created' AND cancel_requested`,
  ),
  async down(knex) {
    // An expired request goes back to the phase it stopped in, not due: it is not made again.
    await knex.raw(`
      UPDATE provider_payments
      SET state = CASE WHEN undo_keys_first_used_at IS NULL THEN 'requested' ELSE 'created' END
      WHERE state = 'expired'`);
    await knex.raw(`
      ALTER TABLE provider_payments
        DROP CONSTRAINT provider_payments_state_check,
        ADD CONSTRAINT provider_payments_state_check CHECK (state IN (${PROVIDER_PAYMENT_STATES})),
        DROP COLUMN create_keys_first_used_at,
        DROP COLUMN undo_keys_first_used_at`);
  },
};
