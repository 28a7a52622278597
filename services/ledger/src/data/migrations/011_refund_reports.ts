import { sqlSteps, type Migration } from '@payments/service-kit';

/**
 * The provider's highest refunded total for each deposit. A refund that an open dispute leaves no room for is
 * remembered here, so that it is booked once that dispute is won rather than never.
 */
export const refundReports: Migration = {
  name: '011_refund_reports',
  up: sqlSteps(
    `
      CREATE TABLE refund_reports (
        deposit_id uuid PRIMARY KEY REFERENCES transactions (id) ON DELETE CASCADE,
        refunded_total bigint NOT NULL CHECK (refunded_total > 0),
        reference text NOT NULL,
        reported_at timestamptz NOT NULL DEFAULT now()
      )`,
  ),
  async down(knex) {
    await knex.schema.dropTable('refund_reports');
  },
};
