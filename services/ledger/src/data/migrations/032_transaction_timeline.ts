import { sqlSteps, type Migration } from '@payments/service-kit';
import { refuseChanges } from './append-only.js';

/**
 * What an operator's search and a transaction's timeline read (ADR 0126). provider_payments keeps only where a
 * request stands, and transactions only their last status: two append-only logs, written by triggers on every
 * change that matters, keep each step. Like the journal they have no foreign key, so they outlive a removed
 * user's transactions. The indexes let each search filter start from an index rather than scan transactions.
 */
export const transactionTimeline: Migration = {
  name: '032_transaction_timeline',
  async up(knex) {
    await sqlSteps(
      `
        CREATE TABLE provider_request_log (
          id bigserial PRIMARY KEY,
          transaction_id uuid NOT NULL,
          kind text NOT NULL,
          state text NOT NULL,
          attempts integer NOT NULL,
          reference text,
          last_error text,
          cancel_requested boolean NOT NULL,
          at timestamptz NOT NULL DEFAULT now()
        )`,
      `CREATE INDEX provider_request_log_transaction ON provider_request_log (transaction_id, id)`,
      `
        CREATE FUNCTION provider_payments_log_change() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
          -- A renewed lease changes none of these: only a step is logged.
          IF TG_OP = 'UPDATE' AND (OLD.state, OLD.attempts, OLD.reference, OLD.last_error, OLD.cancel_requested)
             IS NOT DISTINCT FROM (NEW.state, NEW.attempts, NEW.reference, NEW.last_error, NEW.cancel_requested)
          THEN
            RETURN NULL;
          END IF;
          INSERT INTO provider_request_log
            (transaction_id, kind, state, attempts, reference, last_error, cancel_requested)
          VALUES
            (NEW.transaction_id, NEW.kind, NEW.state, NEW.attempts, NEW.reference, NEW.last_error,
             NEW.cancel_requested);
          RETURN NULL;
        END $$`,
      `
        CREATE TRIGGER provider_payments_log AFTER INSERT OR UPDATE ON provider_payments
        FOR EACH ROW EXECUTE FUNCTION provider_payments_log_change()`,
      `
        CREATE TABLE transaction_status_log (
          id bigserial PRIMARY KEY,
          transaction_id uuid NOT NULL,
          status text NOT NULL,
          failure_reason text,
          at timestamptz NOT NULL DEFAULT now()
        )`,
      `CREATE INDEX transaction_status_log_transaction ON transaction_status_log (transaction_id, id)`,
      `
        CREATE FUNCTION transactions_log_status() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
          INSERT INTO transaction_status_log (transaction_id, status, failure_reason)
          VALUES (NEW.id, NEW.status, NEW.failure_reason);
          RETURN NULL;
        END $$`,
      // A failed attempt leaves a deposit pending with its reason: a step too.
      `
        CREATE TRIGGER transactions_status_log AFTER UPDATE OF status, failure_reason ON transactions
        FOR EACH ROW
        WHEN (OLD.status IS DISTINCT FROM NEW.status OR OLD.failure_reason IS DISTINCT FROM NEW.failure_reason)
        EXECUTE FUNCTION transactions_log_status()`,
      // Building these blocks writes to transactions while it runs; a large ledger can get them first,
      // CONCURRENTLY, under the same names (docs/operations.md, "Before migrating a large ledger").
      `CREATE INDEX IF NOT EXISTS transactions_created ON transactions (created_at DESC, id DESC)`,
      `CREATE INDEX IF NOT EXISTS transactions_status_created ON transactions (status, created_at DESC, id DESC)`,
      `CREATE INDEX IF NOT EXISTS transactions_type_created ON transactions (type, created_at DESC, id DESC)`,
      `CREATE INDEX IF NOT EXISTS transactions_currency_created ON transactions (currency, created_at DESC, id DESC)`,
      `CREATE INDEX IF NOT EXISTS transactions_reference ON transactions (reference) WHERE reference IS NOT NULL`,
      `CREATE INDEX IF NOT EXISTS transactions_metadata ON transactions USING gin (metadata jsonb_path_ops)`,
      // `q`: the start of a provider's reference (LIKE 'pi_3Q%'), whatever the database's collation.
      `CREATE INDEX IF NOT EXISTS provider_payments_reference_prefix ON provider_payments (reference text_pattern_ops)`,
    )(knex);
    await refuseChanges(knex, 'provider_request_log', 'provider request logs');
    await refuseChanges(knex, 'transaction_status_log', 'transaction status logs');
  },
  async down(knex) {
    for (const index of [
      'provider_payments_reference_prefix',
      'transactions_metadata',
      'transactions_reference',
      'transactions_currency_created',
      'transactions_type_created',
      'transactions_status_created',
      'transactions_created',
    ])
      await knex.raw(`DROP INDEX ${index}`);
    await knex.raw('DROP TRIGGER transactions_status_log ON transactions');
    await knex.raw('DROP FUNCTION transactions_log_status()');
    await knex.raw('DROP TRIGGER provider_payments_log ON provider_payments');
    await knex.raw('DROP FUNCTION provider_payments_log_change()');
    await knex.schema.dropTable('transaction_status_log');
    await knex.schema.dropTable('provider_request_log');
    await knex.raw('DROP FUNCTION transaction_status_log_refuse_change()');
    await knex.raw('DROP FUNCTION provider_request_log_refuse_change()');
  },
};
