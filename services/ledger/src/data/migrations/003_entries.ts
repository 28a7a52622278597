import { sqlSteps, type Migration } from '@payments/service-kit';

/**
 * The journal, guarded by the database: entries_refuse_change makes it append-only, and entries_check_balanced
 * refuses, at commit, a transaction whose entries do not sum to zero per currency.
 */
export const entries: Migration = {
  name: '003_entries',
  up: sqlSteps(
    // No foreign keys: the journal outlives the accounts and transactions of a deleted user.
    `
      CREATE TABLE entries (
        id bigserial PRIMARY KEY,
        transaction_id uuid NOT NULL,
        account_id uuid NOT NULL,
        amount bigint NOT NULL CHECK (amount <> 0),
        currency char(3) NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now()
      )`,
    `CREATE INDEX entries_transaction ON entries (transaction_id)`,
    `CREATE INDEX entries_account ON entries (account_id)`,
    `
      CREATE FUNCTION entries_refuse_change() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        RAISE EXCEPTION 'entries are append-only' USING ERRCODE = 'restrict_violation';
      END $$`,
    `
      CREATE TRIGGER entries_append_only BEFORE UPDATE OR DELETE ON entries
      FOR EACH ROW EXECUTE FUNCTION entries_refuse_change()`,
    `
      CREATE TRIGGER entries_no_truncate BEFORE TRUNCATE ON entries
      FOR EACH STATEMENT EXECUTE FUNCTION entries_refuse_change()`,
    `
      CREATE FUNCTION entries_check_balanced() RETURNS trigger LANGUAGE plpgsql AS $$
      DECLARE total numeric;
      BEGIN
        SELECT sum(amount) INTO total FROM entries
        WHERE transaction_id = NEW.transaction_id AND currency = NEW.currency;
        IF total <> 0 THEN
          RAISE EXCEPTION 'entries of transaction % do not balance in %: %', NEW.transaction_id, NEW.currency, total
            USING ERRCODE = 'check_violation';
        END IF;
        RETURN NULL;
      END $$`,
    // Checked at commit, once every entry of the transaction is in.
    `
      CREATE CONSTRAINT TRIGGER entries_balanced AFTER INSERT ON entries
      DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION entries_check_balanced()`,
  ),
  async down(knex) {
    await knex.schema.dropTable('entries');
    await knex.raw('DROP FUNCTION entries_check_balanced()');
    await knex.raw('DROP FUNCTION entries_refuse_change()');
  },
};
