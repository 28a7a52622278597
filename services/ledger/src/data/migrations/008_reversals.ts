import { sqlSteps, type Migration } from '@payments/service-kit';

/**
 * Reversals, and the balance guard as it stands (accounts_user_balances): a user's available balance goes below
 * zero only as far as its reversal_shortfall, which only a reversal raises (ADR 0054).
 */
export const reversals: Migration = {
  name: '008_reversals',
  up: sqlSteps(
    // A reversal undoes (part of) a completed deposit the provider took back: a refund, or a dispute (pending and
    // holding while open, canceled when won, completed when lost). The deposit itself never changes.
    `ALTER TABLE transactions DROP CONSTRAINT transactions_type_check`,
    `
      ALTER TABLE transactions
        ADD CONSTRAINT transactions_type_check CHECK (type IN ('deposit', 'withdrawal', 'transfer', 'reversal')),
        ADD COLUMN original_transaction_id uuid,
        ADD COLUMN reversal_reason text CHECK (reversal_reason IN ('refund', 'dispute')),
        -- What makes a reversal take effect once: 'dispute:<provider dispute id>' or 'refund:<refunded total>'.
        ADD COLUMN reversal_key text,
        -- What an open dispute holds: the net amount, or as much of it as was available.
        ADD COLUMN held_amount bigint CHECK (held_amount >= 0),
        ADD CONSTRAINT transactions_reversal CHECK (
          (type = 'reversal') = (original_transaction_id IS NOT NULL)
          AND (type = 'reversal') = (reversal_reason IS NOT NULL)
          AND (type = 'reversal') = (reversal_key IS NOT NULL)
          AND (type = 'reversal') = (held_amount IS NOT NULL)
        )`,
    `
      CREATE UNIQUE INDEX transactions_reversal_key ON transactions (original_transaction_id, reversal_key)
      WHERE type = 'reversal'`,
    // How far reversals have taken an account's available balance below zero and not yet made up. Only the
    // reversal path raises it; every other balance move may only lower it, so nothing else overdraws.
    `
      ALTER TABLE accounts
        ADD COLUMN reversal_shortfall bigint NOT NULL DEFAULT 0 CHECK (reversal_shortfall >= 0),
        DROP CONSTRAINT accounts_user_balances,
        ADD CONSTRAINT accounts_user_balances CHECK (
          kind = 'system' OR (available_balance <= balance AND available_balance >= -reversal_shortfall)
        )`,
    `CREATE INDEX accounts_overdrawn ON accounts (id) WHERE kind = 'user' AND available_balance < 0`,
  ),
  async down(knex) {
    // Refused (by the restored checks) while an account is overdrawn or a reversal exists.
    await knex.raw(`DROP INDEX accounts_overdrawn`);
    await knex.raw(`
      ALTER TABLE accounts
        DROP CONSTRAINT accounts_user_balances,
        DROP COLUMN reversal_shortfall,
        ADD CONSTRAINT accounts_user_balances CHECK (
          kind = 'system' OR (balance >= 0 AND available_balance >= 0 AND available_balance <= balance)
        )`);
    await knex.raw(`DROP INDEX transactions_reversal_key`);
    await knex.raw(`
      ALTER TABLE transactions
        DROP CONSTRAINT transactions_reversal,
        DROP COLUMN held_amount,
        DROP COLUMN reversal_key,
        DROP COLUMN reversal_reason,
        DROP COLUMN original_transaction_id,
        DROP CONSTRAINT transactions_type_check,
        ADD CONSTRAINT transactions_type_check CHECK (type IN ('deposit', 'withdrawal', 'transfer'))`);
  },
};
