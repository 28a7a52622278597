import { sqlSteps, type Migration } from '@payments/service-kit';
import { refuseChanges } from './append-only.js';

/**
 * Money the provider takes back from a deposit whose user was removed (a refund, a lost dispute) is the platform's
 * loss: booked against the platform loss account, once per refunded total or dispute, like the reversal it stands
 * in for. `removed_deposits` keeps, at removal, what deciding that needs (the deposit, its payment at the provider,
 * the reversals it had); `platform_losses` is each loss booked, the `transaction_id` of its journal entries.
 */
export const platformLosses: Migration = {
  name: '018_platform_losses',
  up: sqlSteps(
    `
      CREATE TABLE removed_deposits (
        deposit_id uuid PRIMARY KEY,
        account_id uuid NOT NULL,
        currency char(3) NOT NULL,
        amount bigint NOT NULL CHECK (amount > 0),
        fee bigint NOT NULL CHECK (fee >= 0),
        status text NOT NULL,
        -- The provider's payment (Stripe: pi_…): disputes name it, not the deposit.
        provider_reference text,
        -- Its reversals as they were: [{ id, reversal_reason, reversal_key, status, amount, fee, payment_id, updated_at }].
        reversals jsonb NOT NULL DEFAULT '[]',
        created_at timestamptz NOT NULL,
        removed_at timestamptz NOT NULL DEFAULT now()
      )`,
    `
      CREATE UNIQUE INDEX removed_deposits_reference ON removed_deposits (provider_reference)
      WHERE provider_reference IS NOT NULL`,
    `
      CREATE TABLE platform_losses (
        id uuid PRIMARY KEY,
        deposit_id uuid NOT NULL REFERENCES removed_deposits (deposit_id),
        reason text NOT NULL CHECK (reason IN ('refund', 'dispute')),
        -- As a reversal's: 'refund:<refunded total>' or 'dispute:<provider dispute id>'.
        loss_key text NOT NULL,
        currency char(3) NOT NULL,
        -- What the provider took back; the deposit fee's share fee revenue gives back; the loss is the rest.
        amount bigint NOT NULL CHECK (amount > 0),
        fee bigint NOT NULL CHECK (fee >= 0 AND fee <= amount),
        reference text NOT NULL,
        correlation_id text NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        UNIQUE (deposit_id, loss_key)
      )`,
    `CREATE INDEX platform_losses_created ON platform_losses (created_at DESC, id DESC)`,
    (knex) => refuseChanges(knex, 'platform_losses', 'platform losses'),
  ),
  async down(knex) {
    await knex.schema.dropTable('platform_losses');
    await knex.raw('DROP FUNCTION platform_losses_refuse_change()');
    await knex.schema.dropTable('removed_deposits');
  },
};
