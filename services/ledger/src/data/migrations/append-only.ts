import type { Knex } from '@payments/service-kit';

/**
 * Makes `table` append-only: triggers refuse every UPDATE, DELETE and TRUNCATE with `<what> are append-only`
 * (`<table>_refuse_change()`, dropped by the migration's `down`). Migrations that ran call it: changed, it would
 * change them (e2e/migrations-forward fails).
 */
export async function refuseChanges(knex: Knex, table: string, what: string) {
  await knex.raw(`
      CREATE FUNCTION ${table}_refuse_change() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        RAISE EXCEPTION '${what} are append-only' USING ERRCODE = 'restrict_violation';
      END $$`);
  await knex.raw(`
      CREATE TRIGGER ${table}_append_only BEFORE UPDATE OR DELETE ON ${table}
      FOR EACH ROW EXECUTE FUNCTION ${table}_refuse_change()`);
  await knex.raw(`
      CREATE TRIGGER ${table}_no_truncate BEFORE TRUNCATE ON ${table}
      FOR EACH STATEMENT EXECUTE FUNCTION ${table}_refuse_change()`);
}
