import { sqlSteps, type Migration } from '@payments/service-kit';

/**
 * The payment method a deposit named (`payment_method`, ADR 0120): the provider confirms the deposit's payment
 * with it as the payment is made. Null for every other request, and for those recorded before it.
 */
export const providerPaymentMethod: Migration = {
  name: '031_provider_payment_method',
  up: sqlSteps('ALTER TABLE provider_payments ADD COLUMN payment_method text'),
  async down(knex) {
    await knex.raw('ALTER TABLE provider_payments DROP COLUMN payment_method');
  },
};
