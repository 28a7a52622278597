import type { Migration } from '@payments/service-kit';

export const usersSearchMigration: Migration = {
  name: '005_users_search',
  async up(knex) {
    // text_pattern_ops: a prefix LIKE uses them under any collation (admins find users by the start of a name).
    await knex.raw('CREATE INDEX users_username_prefix ON users (lower(username) text_pattern_ops)');
    await knex.raw('CREATE INDEX users_email_prefix ON users (email text_pattern_ops)');
  },
  async down(knex) {
    await knex.raw('DROP INDEX users_email_prefix');
    await knex.raw('DROP INDEX users_username_prefix');
  },
};
