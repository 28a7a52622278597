import {
  outboxMigration,
  outboxPrivileges,
  type Migration,
  type RuntimePrivileges,
} from '@payments/service-kit';

const usersMigration: Migration = {
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

const revocationsExceptJtiMigration: Migration = {
  name: '003_revocations_except_jti',
  async up(knex) {
    await knex.schema.alterTable('revocations', (table) => {
      table.text('except_jti');
    });
  },
  async down(knex) {
    await knex.schema.alterTable('revocations', (table) => {
      table.dropColumn('except_jti');
    });
  },
};

const revocationsMigration: Migration = {
  name: '002_revocations',
  async up(knex) {
    await knex.schema.createTable('revocations', (table) => {
      table.bigIncrements('id').primary();
      table.text('jti');
      table.uuid('user_id');
      table.bigInteger('issued_before');
      table.bigInteger('expires_at').notNullable();
      table.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
      table.index(['expires_at'], 'revocations_expires_at');
    });
    await knex.raw(`ALTER TABLE revocations ADD CONSTRAINT revocations_target_check
      CHECK (jti IS NOT NULL OR (user_id IS NOT NULL AND issued_before IS NOT NULL))`);
  },
  async down(knex) {
    await knex.schema.dropTable('revocations');
  },
};

const revocationsUniqueJtiMigration: Migration = {
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

const usersSearchMigration: Migration = {
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

const revocationsByUserMigration: Migration = {
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

const publishedSigningKeysMigration: Migration = {
  name: '007_published_signing_keys',
  async up(knex) {
    // One row: the key ids identity last announced (SigningKeysChanged); a start with another set announces it.
    await knex.schema.createTable('published_signing_keys', (table) => {
      table.smallint('id').primary();
      table.specificType('kids', 'text[]').notNullable();
      table.timestamp('published_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    });
    await knex.raw(
      'ALTER TABLE published_signing_keys ADD CONSTRAINT published_signing_keys_one_row CHECK (id = 1)',
    );
    await knex('published_signing_keys').insert({ id: 1, kids: [] });
  },
  async down(knex) {
    await knex.schema.dropTable('published_signing_keys');
  },
};

export const migrations: Migration[] = [
  outboxMigration,
  usersMigration,
  revocationsMigration,
  revocationsExceptJtiMigration,
  revocationsUniqueJtiMigration,
  usersSearchMigration,
  revocationsByUserMigration,
  publishedSigningKeysMigration,
];

/** What the service's runtime role may do, table by table (docs/security.md, "Database and broker logins"). */
export const privileges: RuntimePrivileges = {
  ...outboxPrivileges,
  // Registered, changed (under a row lock), deleted.
  users: ['SELECT', 'INSERT', 'UPDATE', 'DELETE'],
  // Appended; the expired ones pruned.
  revocations: ['SELECT', 'INSERT', 'DELETE'],
  // The one row, read under a lock and replaced when identity starts with other keys.
  published_signing_keys: ['SELECT', 'UPDATE'],
};
