import type { Migration } from '@payments/service-kit';

export const publishedSigningKeysMigration: Migration = {
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
