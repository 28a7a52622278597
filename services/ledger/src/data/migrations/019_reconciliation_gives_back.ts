import { sqlSteps, type Migration } from '@payments/service-kit';

/**
 * Reconciliation of the provider's whole picture: an extra capture is refunded and an extra transfer reversed at the
 * provider (the decisions `refund` and `reverse`); cases are found by their provider reference, as the objects the
 * ledger never asked for open them from their events.
 */
export const reconciliationGivesBack: Migration = {
  name: '019_reconciliation_gives_back',
  up: sqlSteps(
    `ALTER TABLE reconciliation_cases DROP CONSTRAINT reconciliation_cases_decision_check`,
    `
      ALTER TABLE reconciliation_cases ADD CONSTRAINT reconciliation_cases_decision_check
      CHECK (decision IN ('book', 'refund', 'reverse', 'nothing_owed'))`,
    `CREATE INDEX reconciliation_cases_reference ON reconciliation_cases (provider_reference)`,
  ),
  async down(knex) {
    await knex.raw(`DROP INDEX reconciliation_cases_reference`);
    await knex.raw(`ALTER TABLE reconciliation_cases DROP CONSTRAINT reconciliation_cases_decision_check`);
    await knex.raw(`
      ALTER TABLE reconciliation_cases ADD CONSTRAINT reconciliation_cases_decision_check
      CHECK (decision IN ('book', 'nothing_owed'))`);
  },
};
