import { sqlSteps, type Migration } from '@payments/service-kit';

/**
 * Whether the provider pays out to each linked account, and what it still needs (Stripe's `payouts_enabled`,
 * `requirements.currently_due` and `requirements.disabled_reason`), as of `status_as_of`: the `created` of the
 * newest `account.updated` taken, or when the ledger last read the account from the provider. Accounts linked
 * before stay payable until the provider says otherwise. A replaced account is kept as `replaced_account` (a
 * replacement repeated answers the new one), and `replacements` counts them: the provider's idempotency key of the
 * next account made for the user.
 */
export const payoutAccountReadiness: Migration = {
  name: '029_payout_account_readiness',
  up: sqlSteps(
    `ALTER TABLE payout_accounts
       ADD COLUMN payouts_enabled boolean NOT NULL DEFAULT true,
       ADD COLUMN currently_due text[] NOT NULL DEFAULT '{}',
       ADD COLUMN disabled_reason text,
       ADD COLUMN status_as_of timestamptz,
       ADD COLUMN replaced_account text,
       ADD COLUMN replacements integer NOT NULL DEFAULT 0 CHECK (replacements >= 0)`,
  ),
  async down(knex) {
    await knex.raw(`
      ALTER TABLE payout_accounts
        DROP COLUMN payouts_enabled, DROP COLUMN currently_due, DROP COLUMN disabled_reason,
        DROP COLUMN status_as_of, DROP COLUMN replaced_account, DROP COLUMN replacements`);
  },
};
