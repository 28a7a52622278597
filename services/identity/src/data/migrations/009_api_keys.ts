import type { Migration } from '@payments/service-kit';

export const apiKeysMigration: Migration = {
  name: '009_api_keys',
  async up(knex) {
    // A user's keys for servers (docs/adr/0121): the secret only as its SHA-256, gone with the user.
    await knex.schema.createTable('api_keys', (table) => {
      table.uuid('id').primary();
      table.uuid('user_id').notNullable().references('id').inTable('users').onDelete('CASCADE');
      table.text('name').notNullable();
      table.text('prefix').notNullable();
      table.text('last4').notNullable();
      table.binary('secret_hash').notNullable();
      table.specificType('scopes', 'text[]');
      table.boolean('livemode').notNullable();
      table.timestamp('expires_at', { useTz: true });
      table.timestamp('last_used_at', { useTz: true });
      table.timestamp('revoked_at', { useTz: true });
      table.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    });
    await knex.raw('CREATE UNIQUE INDEX api_keys_secret_hash ON api_keys (secret_hash)');
    await knex.raw(
      'CREATE INDEX api_keys_by_user ON api_keys (user_id, created_at) WHERE revoked_at IS NULL',
    );
    await knex.raw(`ALTER TABLE api_keys
      ADD CONSTRAINT api_keys_prefix_check CHECK (prefix IN ('sk_live_', 'sk_test_', 'rk_live_', 'rk_test_')),
      ADD CONSTRAINT api_keys_hash_length CHECK (octet_length(secret_hash) = 32)`);
  },
  async down(knex) {
    await knex.schema.dropTable('api_keys');
  },
};
