import { sqlSteps, type Migration } from '@payments/service-kit';

/**
 * Accounts, and the first balance guard (accounts_user_balances: a user's balances never below zero, the available
 * balance never above the balance), which 008_reversals replaces with the guard as it stands.
 */
export const accounts: Migration = {
  name: '001_accounts',
  up: sqlSteps(
    `
      CREATE TABLE accounts (
        id uuid PRIMARY KEY,
        user_id uuid,
        kind text NOT NULL CHECK (kind IN ('user', 'system')),
        system_code text,
        currency char(3) NOT NULL,
        balance bigint NOT NULL DEFAULT 0,
        available_balance bigint NOT NULL DEFAULT 0,
        metadata jsonb NOT NULL DEFAULT '{}'::jsonb,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT accounts_owner CHECK (
          (kind = 'user' AND user_id IS NOT NULL AND system_code IS NULL)
          OR (kind = 'system' AND user_id IS NULL AND system_code IS NOT NULL)
        ),
        -- The backstop behind every hold and debit: a user's money never goes below zero.
        CONSTRAINT accounts_user_balances CHECK (
          kind = 'system' OR (balance >= 0 AND available_balance >= 0 AND available_balance <= balance)
        )
      )`,
    `CREATE UNIQUE INDEX accounts_system_code_currency ON accounts (system_code, currency) WHERE kind = 'system'`,
    `CREATE INDEX accounts_user_created ON accounts (user_id, created_at, id) WHERE kind = 'user'`,
  ),
  async down(knex) {
    await knex.schema.dropTable('accounts');
  },
};
