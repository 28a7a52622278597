import { sqlSteps, type Migration } from '@payments/service-kit';

/**
 * Where each user is paid out: their connected account at the provider (Stripe Connect), one per user. A payout
 * first transfers the amount to it, then pays it out to its bank; `transfer` keeps the transfer, which is reversed
 * should the payout fail.
 */
export const payoutAccounts: Migration = {
  name: '014_payout_accounts',
  up: sqlSteps(
    `
      CREATE TABLE payout_accounts (
        user_id uuid PRIMARY KEY,
        provider text NOT NULL,
        account text NOT NULL UNIQUE,
        created_at timestamptz NOT NULL DEFAULT now()
      )`,
    `ALTER TABLE provider_payments ADD COLUMN transfer text`,
  ),
  async down(knex) {
    await knex.raw(`ALTER TABLE provider_payments DROP COLUMN transfer`);
    await knex.schema.dropTable('payout_accounts');
  },
};
