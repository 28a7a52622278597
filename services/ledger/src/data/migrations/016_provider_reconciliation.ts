import { sqlSteps, type Migration } from '@payments/service-kit';
import { refuseChanges } from './append-only.js';

/**
 * Reconciliation with the provider's own records: each mismatch a case (open until an admin decides it, or cleared
 * once the books and the provider agree again), the cursor of the job that finds them, and the append-only trail
 * of what admins did and why.
 */
export const providerReconciliation: Migration = {
  name: '016_provider_reconciliation',
  up: sqlSteps(
    `
      CREATE TABLE reconciliation_cases (
        id uuid PRIMARY KEY,
        kind text NOT NULL,
        provider_reference text NOT NULL,
        transaction_id uuid,
        currency char(3) NOT NULL,
        provider_amount bigint NOT NULL,
        ledger_amount bigint NOT NULL,
        status text NOT NULL DEFAULT 'open' CHECK (status IN ('open', 'cleared', 'resolved')),
        decision text CHECK (decision IN ('book', 'nothing_owed')),
        reason text,
        resolved_by uuid,
        found_at timestamptz NOT NULL DEFAULT now(),
        last_seen_at timestamptz NOT NULL DEFAULT now(),
        resolved_at timestamptz,
        CHECK ((status = 'resolved') = (decision IS NOT NULL))
      )`,
    // The same mismatch seen again is the same case (a decided one stays decided).
    `
      CREATE UNIQUE INDEX reconciliation_cases_mismatch
      ON reconciliation_cases (kind, provider_reference, provider_amount, ledger_amount)`,
    `CREATE INDEX reconciliation_cases_open ON reconciliation_cases (found_at, id) WHERE status = 'open'`,
    `
      CREATE TABLE reconciliation_state (
        id boolean PRIMARY KEY DEFAULT true CHECK (id),
        cursor timestamptz,
        running_until timestamptz,
        last_run jsonb
      )`,
    `INSERT INTO reconciliation_state DEFAULT VALUES`,
    `
      CREATE TABLE admin_actions (
        id uuid PRIMARY KEY,
        actor uuid NOT NULL,
        action text NOT NULL,
        subject text NOT NULL,
        reason text NOT NULL,
        detail jsonb NOT NULL DEFAULT '{}',
        created_at timestamptz NOT NULL DEFAULT now()
      )`,
    `CREATE INDEX admin_actions_created ON admin_actions (created_at, id)`,
    (knex) => refuseChanges(knex, 'admin_actions', 'admin actions'),
  ),
  async down(knex) {
    await knex.schema.dropTable('admin_actions');
    await knex.raw('DROP FUNCTION admin_actions_refuse_change()');
    await knex.schema.dropTable('reconciliation_state');
    await knex.schema.dropTable('reconciliation_cases');
  },
};
