import { sqlSteps, type Migration } from '@payments/service-kit';

/**
 * What the admin overview and the chargeback exposure read (ADR 0127): completed deposits by completion time
 * (transactions by creation time use 032's transactions_created), and each payment attempt the provider declined, when it did (a deposit's
 * failure_reason keeps only the latest, with no time of its own).
 */
export const overviewAndExposure: Migration = {
  name: '035_overview_and_exposure',
  up: sqlSteps(
    `
      CREATE INDEX IF NOT EXISTS transactions_completed_deposits ON transactions (completed_at)
      WHERE type = 'deposit' AND status = 'completed'`,
    `
      CREATE TABLE payment_attempt_failures (
        transaction_id uuid NOT NULL,
        failed_at timestamptz NOT NULL DEFAULT now(),
        reason text
      )`,
    `CREATE INDEX payment_attempt_failures_failed_at ON payment_attempt_failures (failed_at)`,
  ),
  async down(knex) {
    await knex.raw('DROP TABLE payment_attempt_failures');
    await knex.raw('DROP INDEX transactions_completed_deposits');
  },
};
