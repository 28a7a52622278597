import { sqlSteps, type Migration } from '@payments/service-kit';

export const idempotencyKeys: Migration = {
  name: '004_idempotency_keys',
  up: sqlSteps(
    `
      CREATE TABLE idempotency_keys (
        user_id uuid NOT NULL,
        key text NOT NULL,
        fingerprint text NOT NULL,
        transaction_id uuid NOT NULL,
        response jsonb,
        created_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (user_id, key)
      )`,
    `CREATE INDEX idempotency_keys_created ON idempotency_keys (created_at)`,
  ),
  async down(knex) {
    await knex.schema.dropTable('idempotency_keys');
  },
};
