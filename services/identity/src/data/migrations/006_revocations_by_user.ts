import type { Migration } from '@payments/service-kit';

export const revocationsByUserMigration: Migration = {
  name: '006_revocations_by_user',
  async up(knex) {
    // A refresh looks up the user-wide revocations of its user, under that user's row lock.
    await knex.raw(
      'CREATE INDEX revocations_by_user ON revocations (user_id, issued_before) WHERE user_id IS NOT NULL',
    );
  },
  async down(knex) {
    await knex.raw('DROP INDEX revocations_by_user');
  },
};
