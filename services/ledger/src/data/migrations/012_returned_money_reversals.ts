import { sqlSteps, type Migration } from '@payments/service-kit';

/** Money the provider gives back against the books is booked as a reversal of the transaction it contradicts. */
export const returnedMoney: Migration = {
  name: '012_returned_money_reversals',
  up: sqlSteps(
    `
      ALTER TABLE transactions
        DROP CONSTRAINT transactions_reversal_reason_check,
        ADD CONSTRAINT transactions_reversal_reason_check
          CHECK (reversal_reason IN ('refund', 'dispute', 'payout_returned', 'late_payment'))`,
  ),
  async down(knex) {
    await knex.raw(`
      ALTER TABLE transactions
        DROP CONSTRAINT transactions_reversal_reason_check,
        ADD CONSTRAINT transactions_reversal_reason_check CHECK (reversal_reason IN ('refund', 'dispute'))`);
  },
};
