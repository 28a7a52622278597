import {
  inboxByAgeMigration,
  inboxMigration,
  inboxPrivileges,
  type Migration,
  type RuntimePrivileges,
} from '@payments/service-kit';

export const migrations: Migration[] = [
  inboxMigration,
  inboxByAgeMigration,
  {
    name: '001_account_counts',
    async up(knex) {
      await knex.schema.createTable('account_counts', (table) => {
        table.uuid('account_id').primary();
        table.uuid('user_id').notNullable().index();
        table.string('currency', 3).notNullable();
        table.timestamp('recorded_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
      });
    },
    async down(knex) {
      await knex.schema.dropTable('account_counts');
    },
  },
];

/** What the service's runtime role may do, table by table (docs/security.md, "Database and broker logins"). */
export const privileges: RuntimePrivileges = {
  ...inboxPrivileges,
  // Counts by currency; a removed user's accounts are forgotten.
  account_counts: ['SELECT', 'INSERT', 'DELETE'],
};
