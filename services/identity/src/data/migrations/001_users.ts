import type { Migration } from '@payments/service-kit';

export const usersMigration: Migration = {
  name: '001_users',
  async up(knex) {
    await knex.schema.createTable('users', (table) => {
      table.uuid('id').primary();
      table.text('username').notNullable();
      table.text('email').notNullable();
      table.text('password_hash').notNullable();
      table.text('role').notNullable().defaultTo('user');
      table.text('status').notNullable().defaultTo('active');
      table.integer('version').notNullable().defaultTo(1);
      table.bigInteger('tokens_valid_from').notNullable().defaultTo(0);
      table.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
      table.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    });
    await knex.raw(`ALTER TABLE users
      ADD CONSTRAINT users_role_check CHECK (role IN ('user', 'admin')),
      ADD CONSTRAINT users_status_check CHECK (status IN ('active', 'disabled', 'locked')),
      ADD CONSTRAINT users_email_lower_case CHECK (email = lower(email))`);
    // The unique indexes are what make a racing duplicate registration fail; their names tell which field.
    await knex.raw('CREATE UNIQUE INDEX users_username_unique ON users (lower(username))');
    await knex.raw('CREATE UNIQUE INDEX users_email_unique ON users (email)');
  },
  async down(knex) {
    await knex.schema.dropTable('users');
  },
};
