import { sqlSteps, type Migration } from '@payments/service-kit';

/**
 * What the integrator attaches to a money request: `metadata` (string keys and values, limits checked at the edge)
 * and a `reference` unique per user among its transactions (ADR 0117). `transaction_references` is the claim a
 * request takes on its reference when it is accepted, as `idempotency_keys` is for a key, with the first answer to
 * replay; it is never pruned, as the transactions it points at are not.
 */
export const transactionReferences: Migration = {
  name: '026_transaction_references',
  up: sqlSteps(
    `ALTER TABLE transactions ADD COLUMN metadata jsonb NOT NULL DEFAULT '{}'::jsonb, ADD COLUMN reference text`,
    `
      CREATE UNIQUE INDEX transactions_user_reference ON transactions (user_id, reference)
      WHERE reference IS NOT NULL`,
    `
      CREATE TABLE transaction_references (
        user_id uuid NOT NULL,
        reference text NOT NULL,
        fingerprint text NOT NULL,
        transaction_id uuid NOT NULL,
        response jsonb NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (user_id, reference)
      )`,
  ),
  async down(knex) {
    await knex.schema.dropTable('transaction_references');
    await knex.raw(`DROP INDEX transactions_user_reference`);
    await knex.raw(`ALTER TABLE transactions DROP COLUMN metadata, DROP COLUMN reference`);
  },
};
