import { sqlSteps, type Migration } from '@payments/service-kit';

/**
 * The deposits and withdrawals removed with their users: the provider keeps its records of them, and reconciliation
 * tells those apart from money unknown to the ledger. Only the id is kept.
 */
export const removedTransactions: Migration = {
  name: '017_removed_transactions',
  up: sqlSteps(
    `
      CREATE TABLE removed_transactions (
        transaction_id uuid PRIMARY KEY,
        removed_at timestamptz NOT NULL DEFAULT now()
      )`,
  ),
  async down(knex) {
    await knex.schema.dropTable('removed_transactions');
  },
};
