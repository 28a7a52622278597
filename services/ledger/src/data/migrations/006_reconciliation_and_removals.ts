import { sqlSteps, type Migration } from '@payments/service-kit';

export const reconciliationAndRemovals: Migration = {
  name: '006_reconciliation_and_removals',
  up: sqlSteps(
    // Set once, when a withdrawal the provider may have received outlives its hold expiry: it then waits for
    // the provider's word (or an operator), never for a timer.
    `ALTER TABLE transactions ADD COLUMN reconciliation_required_at timestamptz`,
    `
      CREATE INDEX transactions_awaiting_reconciliation ON transactions (reconciliation_required_at, id)
      WHERE status = 'pending' AND reconciliation_required_at IS NOT NULL`,
    // Finds a withdrawal's request while it is still unpublished, so an expiry can take it back.
    `
      CREATE INDEX outbox_unpublished_withdrawal ON outbox ((event -> 'data' ->> 'transaction_id'))
      WHERE published_at IS NULL AND event ->> 'type' = 'WithdrawalRequested'`,
    // Users whose removal the ledger decided: no account may be opened for them afterwards.
    `
      CREATE TABLE removed_users (
        user_id uuid PRIMARY KEY,
        removed_at timestamptz NOT NULL DEFAULT now()
      )`,
  ),
  async down(knex) {
    await knex.schema.dropTable('removed_users');
    await knex.raw('DROP INDEX outbox_unpublished_withdrawal');
    await knex.raw('DROP INDEX transactions_awaiting_reconciliation');
    await knex.raw('ALTER TABLE transactions DROP COLUMN reconciliation_required_at');
  },
};
