import type { Migration } from '@payments/service-kit';

export const revocationsUniqueJtiMigration: Migration = {
  name: '004_revocations_unique_jti',
  async up(knex) {
    // Concurrent logouts of one token could have stored it twice; keep the first.
    await knex.raw(`DELETE FROM revocations r USING revocations earlier
      WHERE r.jti IS NOT NULL AND r.jti = earlier.jti AND r.id > earlier.id`);
    await knex.raw('ALTER TABLE revocations ADD CONSTRAINT revocations_jti_unique UNIQUE (jti)');
  },
  async down(knex) {
    await knex.raw('ALTER TABLE revocations DROP CONSTRAINT revocations_jti_unique');
  },
};
