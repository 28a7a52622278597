import { sqlSteps, type Migration } from '@payments/service-kit';

export const transactions: Migration = {
  name: '002_transactions',
  up: sqlSteps(
    `
      CREATE TABLE transactions (
        id uuid PRIMARY KEY,
        account_id uuid NOT NULL,
        -- Null once the owner was deleted and the row lives on as the receiving side of a transfer.
        user_id uuid,
        type text NOT NULL CHECK (type IN ('deposit', 'withdrawal', 'transfer')),
        status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'completed', 'failed', 'canceled')),
        amount bigint NOT NULL CHECK (amount > 0),
        currency char(3) NOT NULL,
        fee bigint NOT NULL DEFAULT 0 CHECK (fee >= 0),
        counterparty_account_id uuid,
        counterparty_user_id uuid,
        exchange_rate numeric CHECK (exchange_rate > 0),
        converted_amount bigint CHECK (converted_amount > 0),
        converted_currency char(3),
        payment_id text,
        failure_reason text,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        completed_at timestamptz,
        CONSTRAINT transactions_counterparty CHECK ((type = 'transfer') = (counterparty_account_id IS NOT NULL)),
        CONSTRAINT transactions_conversion CHECK (
          (exchange_rate IS NULL) = (converted_amount IS NULL) AND (converted_amount IS NULL) = (converted_currency IS NULL)
        ),
        CONSTRAINT transactions_owner CHECK (user_id IS NOT NULL OR (type = 'transfer' AND status = 'completed')),
        CONSTRAINT transactions_completed_at CHECK ((status = 'completed') = (completed_at IS NOT NULL))
      )`,
    `CREATE INDEX transactions_user_created ON transactions (user_id, created_at DESC, id DESC)`,
    `CREATE INDEX transactions_account_created ON transactions (account_id, created_at DESC, id DESC)`,
    `
      CREATE INDEX transactions_counterparty_account_created
      ON transactions (counterparty_account_id, created_at DESC, id DESC)
      WHERE counterparty_account_id IS NOT NULL`,
    `
      CREATE INDEX transactions_counterparty_user_created
      ON transactions (counterparty_user_id, created_at DESC, id DESC)
      WHERE counterparty_user_id IS NOT NULL`,
    `CREATE INDEX transactions_pending ON transactions (created_at) WHERE status = 'pending'`,
  ),
  async down(knex) {
    await knex.schema.dropTable('transactions');
  },
};
