import { sqlSteps, type Migration } from '@payments/service-kit';

/** Events that name the provider's object rather than the transaction (disputes) find it by its reference. */
export const providerReferenceIndex: Migration = {
  name: '015_provider_reference_index',
  up: sqlSteps(`CREATE UNIQUE INDEX provider_payments_reference ON provider_payments (reference)`),
  async down(knex) {
    await knex.raw(`DROP INDEX provider_payments_reference`);
  },
};
