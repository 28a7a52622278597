import {
  inboxByAgeMigration,
  inboxMigration,
  inboxPrivileges,
  outboxMigration,
  outboxPrivileges,
  type Knex,
  type Migration,
  type RuntimePrivileges,
} from '@payments/service-kit';

/**
 * Makes `table` append-only: triggers refuse every UPDATE, DELETE and TRUNCATE with `<what> are append-only`
 * (`<table>_refuse_change()`, dropped by the migration's `down`).
 */
async function refuseChanges(knex: Knex, table: string, what: string) {
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

const accounts: Migration = {
  name: '001_accounts',
  async up(knex) {
    await knex.raw(`
      CREATE TABLE accounts (
        id uuid PRIMARY KEY,
        user_id uuid,
        kind text NOT NULL CHECK (kind IN ('user', 'system')),
        system_code text,
        currency char(3) NOT NULL,
        balance bigint NOT NULL DEFAULT 0,
        available_balance bigint NOT NULL DEFAULT 0,
        metadata jsonb NOT NULL DEFAULT '{}'::jsonb,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT accounts_owner CHECK (
          (kind = 'user' AND user_id IS NOT NULL AND system_code IS NULL)
          OR (kind = 'system' AND user_id IS NULL AND system_code IS NOT NULL)
        ),
        -- The backstop behind every hold and debit: a user's money never goes below zero.
        CONSTRAINT accounts_user_balances CHECK (
          kind = 'system' OR (balance >= 0 AND available_balance >= 0 AND available_balance <= balance)
        )
      )`);
    await knex.raw(
      `CREATE UNIQUE INDEX accounts_system_code_currency ON accounts (system_code, currency) WHERE kind = 'system'`,
    );
    await knex.raw(
      `CREATE INDEX accounts_user_created ON accounts (user_id, created_at, id) WHERE kind = 'user'`,
    );
  },
  async down(knex) {
    await knex.schema.dropTable('accounts');
  },
};

const transactions: Migration = {
  name: '002_transactions',
  async up(knex) {
    await knex.raw(`
      CREATE TABLE transactions (
        id uuid PRIMARY KEY,
        account_id uuid NOT NULL,
        -- Null once the owner was deleted and the row lives on as the receiving side of a transfer.
        user_id uuid,
        type text NOT NULL CHECK (type IN ('deposit', 'withdrawal', 'transfer')),
        status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'completed', 'failed', 'canceled')),
        amount bigint NOT NULL CHECK (amount > 0),
        currency char(3) NOT NULL,
        fee bigint NOT NULL DEFAULT 0 CHECK (fee >= 0),
        counterparty_account_id uuid,
        counterparty_user_id uuid,
        exchange_rate numeric CHECK (exchange_rate > 0),
        converted_amount bigint CHECK (converted_amount > 0),
        converted_currency char(3),
        payment_id text,
        failure_reason text,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        completed_at timestamptz,
        CONSTRAINT transactions_counterparty CHECK ((type = 'transfer') = (counterparty_account_id IS NOT NULL)),
        CONSTRAINT transactions_conversion CHECK (
          (exchange_rate IS NULL) = (converted_amount IS NULL) AND (converted_amount IS NULL) = (converted_currency IS NULL)
        ),
        CONSTRAINT transactions_owner CHECK (user_id IS NOT NULL OR (type = 'transfer' AND status = 'completed')),
        CONSTRAINT transactions_completed_at CHECK ((status = 'completed') = (completed_at IS NOT NULL))
      )`);
    await knex.raw(
      `CREATE INDEX transactions_user_created ON transactions (user_id, created_at DESC, id DESC)`,
    );
    await knex.raw(
      `CREATE INDEX transactions_account_created ON transactions (account_id, created_at DESC, id DESC)`,
    );
    await knex.raw(`
      CREATE INDEX transactions_counterparty_account_created
      ON transactions (counterparty_account_id, created_at DESC, id DESC)
      WHERE counterparty_account_id IS NOT NULL`);
    await knex.raw(`
      CREATE INDEX transactions_counterparty_user_created
      ON transactions (counterparty_user_id, created_at DESC, id DESC)
      WHERE counterparty_user_id IS NOT NULL`);
    await knex.raw(`CREATE INDEX transactions_pending ON transactions (created_at) WHERE status = 'pending'`);
  },
  async down(knex) {
    await knex.schema.dropTable('transactions');
  },
};

const entries: Migration = {
  name: '003_entries',
  async up(knex) {
    // No foreign keys: the journal outlives the accounts and transactions of a deleted user.
    await knex.raw(`
      CREATE TABLE entries (
        id bigserial PRIMARY KEY,
        transaction_id uuid NOT NULL,
        account_id uuid NOT NULL,
        amount bigint NOT NULL CHECK (amount <> 0),
        currency char(3) NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
    await knex.raw(`CREATE INDEX entries_transaction ON entries (transaction_id)`);
    await knex.raw(`CREATE INDEX entries_account ON entries (account_id)`);
    await knex.raw(`
      CREATE FUNCTION entries_refuse_change() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        RAISE EXCEPTION 'entries are append-only' USING ERRCODE = 'restrict_violation';
      END $$`);
    await knex.raw(`
      CREATE TRIGGER entries_append_only BEFORE UPDATE OR DELETE ON entries
      FOR EACH ROW EXECUTE FUNCTION entries_refuse_change()`);
    await knex.raw(`
      CREATE TRIGGER entries_no_truncate BEFORE TRUNCATE ON entries
      FOR EACH STATEMENT EXECUTE FUNCTION entries_refuse_change()`);
    await knex.raw(`
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
      END $$`);
    // Checked at commit, once every entry of the transaction is in.
    await knex.raw(`
      CREATE CONSTRAINT TRIGGER entries_balanced AFTER INSERT ON entries
      DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION entries_check_balanced()`);
  },
  async down(knex) {
    await knex.schema.dropTable('entries');
    await knex.raw('DROP FUNCTION entries_check_balanced()');
    await knex.raw('DROP FUNCTION entries_refuse_change()');
  },
};

const idempotencyKeys: Migration = {
  name: '004_idempotency_keys',
  async up(knex) {
    await knex.raw(`
      CREATE TABLE idempotency_keys (
        user_id uuid NOT NULL,
        key text NOT NULL,
        fingerprint text NOT NULL,
        transaction_id uuid NOT NULL,
        response jsonb,
        created_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (user_id, key)
      )`);
    await knex.raw(`CREATE INDEX idempotency_keys_created ON idempotency_keys (created_at)`);
  },
  async down(knex) {
    await knex.schema.dropTable('idempotency_keys');
  },
};

/** The columns that decide in whose history a transaction shows, and under which type and status. */
const HISTORY_COLUMNS = 'user_id, account_id, type, status, counterparty_user_id, counterparty_account_id';

/**
 * One delta row per (owner, direction, type, status) that `changes` (rows with a `sign` of 1 or -1) moves.
 * Mirrors listTransactions: a transaction is sent by its user and its account; a completed transfer is also
 * received by the counterparty user and account, unless that is the same one as the sender.
 */
const recordHistoryDeltas = (changes: string) => `
  INSERT INTO history_count_deltas (owner_kind, owner_id, direction, type, status, delta)
  SELECT owner.kind, owner.id, owner.direction, changed.type, changed.status, sum(changed.sign)
  FROM (${changes}) changed
  CROSS JOIN LATERAL (VALUES
    ('user', changed.user_id, 'sent'),
    ('account', changed.account_id, 'sent'),
    ('user', CASE WHEN changed.user_id IS DISTINCT FROM changed.counterparty_user_id
                  THEN changed.counterparty_user_id END, 'received'),
    ('account', CASE WHEN changed.account_id IS DISTINCT FROM changed.counterparty_account_id
                     THEN changed.counterparty_account_id END, 'received')
  ) owner (kind, id, direction)
  WHERE owner.id IS NOT NULL
    AND (owner.direction = 'sent' OR (changed.type = 'transfer' AND changed.status = 'completed'))
  GROUP BY owner.kind, owner.id, owner.direction, changed.type, changed.status
  HAVING sum(changed.sign) <> 0`;

const rowsOf = (table: string, sign: 1 | -1) => `SELECT ${sign} AS sign, ${HISTORY_COLUMNS} FROM ${table}`;

const historyCountTriggers = [
  { event: 'INSERT', referencing: 'NEW TABLE AS new_rows', changes: rowsOf('new_rows', 1) },
  {
    event: 'UPDATE',
    referencing: 'OLD TABLE AS old_rows NEW TABLE AS new_rows',
    changes: `${rowsOf('old_rows', -1)} UNION ALL ${rowsOf('new_rows', 1)}`,
  },
  { event: 'DELETE', referencing: 'OLD TABLE AS old_rows', changes: rowsOf('old_rows', -1) },
];

const historyCounts: Migration = {
  name: '005_history_counts',
  async up(knex) {
    // Writers only ever insert deltas (no row everyone updates); compaction folds them into history_counts.
    await knex.raw(`
      CREATE TABLE history_counts (
        owner_kind text NOT NULL CHECK (owner_kind IN ('user', 'account')),
        owner_id uuid NOT NULL,
        direction text NOT NULL CHECK (direction IN ('sent', 'received')),
        type text NOT NULL,
        status text NOT NULL,
        count bigint NOT NULL,
        PRIMARY KEY (owner_kind, owner_id, direction, type, status)
      )`);
    await knex.raw(`
      CREATE TABLE history_count_deltas (
        owner_kind text NOT NULL,
        owner_id uuid NOT NULL,
        direction text NOT NULL,
        type text NOT NULL,
        status text NOT NULL,
        delta bigint NOT NULL
      )`);
    await knex.raw(`CREATE INDEX history_count_deltas_owner ON history_count_deltas (owner_kind, owner_id)`);
    // Statement-level, over transition tables: a statement touching a million rows adds one grouped insert.
    for (const { event, referencing, changes } of historyCountTriggers) {
      const name = `history_count_${event.toLowerCase()}`;
      await knex.raw(`
        CREATE FUNCTION ${name}() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
          ${recordHistoryDeltas(changes)};
          RETURN NULL;
        END $$`);
      await knex.raw(`
        CREATE TRIGGER ${name} AFTER ${event} ON transactions REFERENCING ${referencing}
        FOR EACH STATEMENT EXECUTE FUNCTION ${name}()`);
    }
    // Creating the triggers locked out writers until this migration commits, so the backfill misses none.
    await knex.raw(recordHistoryDeltas(rowsOf('transactions', 1)));
  },
  async down(knex) {
    for (const { event } of historyCountTriggers) {
      const name = `history_count_${event.toLowerCase()}`;
      await knex.raw(`DROP TRIGGER ${name} ON transactions`);
      await knex.raw(`DROP FUNCTION ${name}()`);
    }
    await knex.schema.dropTable('history_count_deltas');
    await knex.schema.dropTable('history_counts');
  },
};

const reconciliationAndRemovals: Migration = {
  name: '006_reconciliation_and_removals',
  async up(knex) {
    // Set once, when a withdrawal the provider may have received outlives its hold expiry: it then waits for
    // the provider's word (or an operator), never for a timer.
    await knex.raw(`ALTER TABLE transactions ADD COLUMN reconciliation_required_at timestamptz`);
    await knex.raw(`
      CREATE INDEX transactions_awaiting_reconciliation ON transactions (reconciliation_required_at, id)
      WHERE status = 'pending' AND reconciliation_required_at IS NOT NULL`);
    // Finds a withdrawal's request while it is still unpublished, so an expiry can take it back.
    await knex.raw(`
      CREATE INDEX outbox_unpublished_withdrawal ON outbox ((event -> 'data' ->> 'transaction_id'))
      WHERE published_at IS NULL AND event ->> 'type' = 'WithdrawalRequested'`);
    // Users whose removal the ledger decided: no account may be opened for them afterwards.
    await knex.raw(`
      CREATE TABLE removed_users (
        user_id uuid PRIMARY KEY,
        removed_at timestamptz NOT NULL DEFAULT now()
      )`);
  },
  async down(knex) {
    await knex.schema.dropTable('removed_users');
    await knex.raw('DROP INDEX outbox_unpublished_withdrawal');
    await knex.raw('DROP INDEX transactions_awaiting_reconciliation');
    await knex.raw('ALTER TABLE transactions DROP COLUMN reconciliation_required_at');
  },
};

const statementEntriesIndex: Migration = {
  name: '007_statement_entries_index',
  async up(knex) {
    // Statements and past balances read one account's entries in time order and sum their amounts: with the
    // amount included, both are index-only range scans. It leads with account_id, so it replaces entries_account.
    // Building it blocks writes to entries (2.7 s for 2M rows); a large journal can get it first CONCURRENTLY.
    await knex.raw(`
      CREATE INDEX IF NOT EXISTS entries_account_created ON entries (account_id, created_at, id) INCLUDE (amount)`);
    await knex.raw(`DROP INDEX IF EXISTS entries_account`);
  },
  async down(knex) {
    await knex.raw(`CREATE INDEX entries_account ON entries (account_id)`);
    await knex.raw(`DROP INDEX entries_account_created`);
  },
};

const reversals: Migration = {
  name: '008_reversals',
  async up(knex) {
    // A reversal undoes (part of) a completed deposit the provider took back: a refund, or a dispute (pending and
    // holding while open, canceled when won, completed when lost). The deposit itself never changes.
    await knex.raw(`ALTER TABLE transactions DROP CONSTRAINT transactions_type_check`);
    await knex.raw(`
      ALTER TABLE transactions
        ADD CONSTRAINT transactions_type_check CHECK (type IN ('deposit', 'withdrawal', 'transfer', 'reversal')),
        ADD COLUMN original_transaction_id uuid,
        ADD COLUMN reversal_reason text CHECK (reversal_reason IN ('refund', 'dispute')),
        -- What makes a reversal take effect once: 'dispute:<provider dispute id>' or 'refund:<refunded total>'.
        ADD COLUMN reversal_key text,
        -- What an open dispute holds: the net amount, or as much of it as was available.
        ADD COLUMN held_amount bigint CHECK (held_amount >= 0),
        ADD CONSTRAINT transactions_reversal CHECK (
          (type = 'reversal') = (original_transaction_id IS NOT NULL)
          AND (type = 'reversal') = (reversal_reason IS NOT NULL)
          AND (type = 'reversal') = (reversal_key IS NOT NULL)
          AND (type = 'reversal') = (held_amount IS NOT NULL)
        )`);
    await knex.raw(`
      CREATE UNIQUE INDEX transactions_reversal_key ON transactions (original_transaction_id, reversal_key)
      WHERE type = 'reversal'`);
    // How far reversals have taken an account's available balance below zero and not yet made up. Only the
    // reversal path raises it; every other balance move may only lower it, so nothing else overdraws.
    await knex.raw(`
      ALTER TABLE accounts
        ADD COLUMN reversal_shortfall bigint NOT NULL DEFAULT 0 CHECK (reversal_shortfall >= 0),
        DROP CONSTRAINT accounts_user_balances,
        ADD CONSTRAINT accounts_user_balances CHECK (
          kind = 'system' OR (available_balance <= balance AND available_balance >= -reversal_shortfall)
        )`);
    await knex.raw(
      `CREATE INDEX accounts_overdrawn ON accounts (id) WHERE kind = 'user' AND available_balance < 0`,
    );
  },
  async down(knex) {
    // Refused (by the restored checks) while an account is overdrawn or a reversal exists.
    await knex.raw(`DROP INDEX accounts_overdrawn`);
    await knex.raw(`
      ALTER TABLE accounts
        DROP CONSTRAINT accounts_user_balances,
        DROP COLUMN reversal_shortfall,
        ADD CONSTRAINT accounts_user_balances CHECK (
          kind = 'system' OR (balance >= 0 AND available_balance >= 0 AND available_balance <= balance)
        )`);
    await knex.raw(`DROP INDEX transactions_reversal_key`);
    await knex.raw(`
      ALTER TABLE transactions
        DROP CONSTRAINT transactions_reversal,
        DROP COLUMN held_amount,
        DROP COLUMN reversal_key,
        DROP COLUMN reversal_reason,
        DROP COLUMN original_transaction_id,
        DROP CONSTRAINT transactions_type_check,
        ADD CONSTRAINT transactions_type_check CHECK (type IN ('deposit', 'withdrawal', 'transfer'))`);
  },
};

/** The money requests one acceptance statement takes, as ledger_accept_requests reads them from JSON. */
const REQUEST_COLUMNS = `
  i int, id uuid, account_id uuid, user_id uuid, type text, amount bigint, currency text, fee bigint, hold bigint,
  counterparty_account_id uuid, counterparty_user_id uuid, counterparty_currency text, exchange_rate numeric,
  converted_amount bigint, converted_currency text, payment_id text, event_id uuid, event jsonb, key text,
  fingerprint text, snapshot jsonb`;

/**
 * Money requests accepted together (group commit) in one statement: one round trip, one database transaction.
 * Each request, in the order given (the caller sorts them by account, the order settlements lock accounts in),
 * takes the steps the former one did: the idempotency key claimed (a concurrent claimant waits for the first to
 * commit, then replays its answer), the destination share-locked, the hold taken (or, for a deposit, the account
 * share-locked). A request refused leaves nothing behind (its claim is deleted again) and does not affect the
 * others. Then every accepted transaction and requested event is written, one statement each. The caller never
 * puts two requests with the same user and key in one call.
 */
const acceptRequestsFunction: Migration = {
  name: '009_accept_requests_function',
  async up(knex) {
    await knex.raw(`
      CREATE FUNCTION ledger_accept_requests(p_requests jsonb)
      RETURNS TABLE (o_index int, o_outcome text, o_fingerprint text, o_response jsonb, o_created_at timestamptz)
      LANGUAGE plpgsql AS $$
      DECLARE
        r record;
        v_owner uuid;
        v_refusal text;
        v_accepted int[] := '{}';
      BEGIN
        -- The transactions' timestamps: now() is fixed for the whole database transaction.
        o_created_at := now();
        FOR r IN SELECT * FROM jsonb_to_recordset(p_requests) AS x(${REQUEST_COLUMNS}) LOOP
          o_index := r.i;
          o_fingerprint := NULL;
          o_response := NULL;
          v_refusal := NULL;
          IF r.key IS NOT NULL THEN
            INSERT INTO idempotency_keys (user_id, key, fingerprint, transaction_id, response)
            VALUES (
              r.user_id, r.key, r.fingerprint, r.id,
              r.snapshot || jsonb_build_object('created_at', o_created_at, 'updated_at', o_created_at)
            )
            ON CONFLICT (user_id, key) DO NOTHING;
            IF NOT FOUND THEN
              SELECT k.fingerprint, k.response INTO o_fingerprint, o_response
              FROM idempotency_keys k WHERE k.user_id = r.user_id AND k.key = r.key;
              o_outcome := 'replay';
              RETURN NEXT;
              CONTINUE;
            END IF;
          END IF;
          -- Account look-ups by id say "(...) IS TRUE" for the other conditions: without statistics (autovacuum
          -- off) the planner otherwise picks accounts_user_created (user_id, created_at, id) WHERE kind = 'user',
          -- and walks every account of the user instead of one primary-key entry.
          IF r.counterparty_account_id IS NOT NULL THEN
            PERFORM 1 FROM accounts a
            WHERE a.id = r.counterparty_account_id
              AND (a.kind = 'user' AND a.currency = r.counterparty_currency) IS TRUE
            FOR KEY SHARE;
            IF NOT FOUND THEN
              v_refusal := 'destination_not_found';
            END IF;
          END IF;
          IF v_refusal IS NULL AND r.hold > 0 THEN
            UPDATE accounts a SET available_balance = a.available_balance - r.hold, updated_at = now()
            WHERE a.id = r.account_id
              AND (a.kind = 'user' AND a.user_id = r.user_id AND a.available_balance >= r.hold) IS TRUE;
            IF NOT FOUND THEN
              SELECT a.user_id INTO v_owner FROM accounts a WHERE a.id = r.account_id AND (a.kind = 'user') IS TRUE;
              v_refusal := CASE
                WHEN NOT FOUND THEN 'account_not_found'
                WHEN v_owner <> r.user_id THEN 'forbidden'
                ELSE 'insufficient_funds'
              END;
            END IF;
          ELSIF v_refusal IS NULL THEN
            -- A deposit holds nothing: only a share lock keeps its account from being deleted until commit.
            PERFORM 1 FROM accounts a
            WHERE a.id = r.account_id AND (a.kind = 'user' AND a.user_id = r.user_id) IS TRUE
            FOR KEY SHARE;
            IF NOT FOUND THEN
              v_refusal := 'account_not_found';
            END IF;
          END IF;
          IF v_refusal IS NOT NULL THEN
            IF r.key IS NOT NULL THEN
              DELETE FROM idempotency_keys k WHERE k.user_id = r.user_id AND k.key = r.key;
            END IF;
            o_outcome := v_refusal;
          ELSE
            v_accepted := v_accepted || r.i;
            o_outcome := 'accepted';
          END IF;
          RETURN NEXT;
        END LOOP;
        IF cardinality(v_accepted) = 0 THEN
          RETURN;
        END IF;
        INSERT INTO transactions (
          id, account_id, user_id, type, amount, currency, fee, counterparty_account_id, counterparty_user_id,
          exchange_rate, converted_amount, converted_currency, payment_id
        )
        SELECT x.id, x.account_id, x.user_id, x.type, x.amount, x.currency, x.fee, x.counterparty_account_id,
               x.counterparty_user_id, x.exchange_rate, x.converted_amount, x.converted_currency, x.payment_id
        FROM jsonb_to_recordset(p_requests) AS x(${REQUEST_COLUMNS})
        WHERE x.i = ANY (v_accepted);
        INSERT INTO outbox (event_id, event)
        SELECT x.event_id, x.event
        FROM jsonb_to_recordset(p_requests) AS x(${REQUEST_COLUMNS})
        WHERE x.i = ANY (v_accepted) AND x.event IS NOT NULL
        ORDER BY x.i;
      END $$`);
  },
  async down(knex) {
    await knex.raw('DROP FUNCTION ledger_accept_requests');
  },
};

/**
 * The overdrawn-accounts index keyed on the reversal shortfall instead of the balance: an index (or its
 * predicate) on available_balance made every balance move a non-HOT update, writing a new entry into each of the
 * accounts' indexes (a hold, and every settlement, moves available_balance). The shortfall changes only when a
 * reversal overdraws or the account recovers, so balance moves are HOT again. Below zero implies a shortfall
 * (accounts_user_balances: available_balance >= -reversal_shortfall), so the queries add that condition.
 */
const overdrawnByShortfall: Migration = {
  name: '010_overdrawn_index_by_shortfall',
  async up(knex) {
    await knex.raw(`DROP INDEX accounts_overdrawn`);
    await knex.raw(
      `CREATE INDEX accounts_overdrawn ON accounts (id) WHERE kind = 'user' AND reversal_shortfall > 0`,
    );
  },
  async down(knex) {
    await knex.raw(`DROP INDEX accounts_overdrawn`);
    await knex.raw(
      `CREATE INDEX accounts_overdrawn ON accounts (id) WHERE kind = 'user' AND available_balance < 0`,
    );
  },
};

/**
 * The provider's highest refunded total for each deposit. A refund that an open dispute leaves no room for is
 * remembered here, so that it is booked once that dispute is won rather than never.
 */
const refundReports: Migration = {
  name: '011_refund_reports',
  async up(knex) {
    await knex.raw(`
      CREATE TABLE refund_reports (
        deposit_id uuid PRIMARY KEY REFERENCES transactions (id) ON DELETE CASCADE,
        refunded_total bigint NOT NULL CHECK (refunded_total > 0),
        reference text NOT NULL,
        reported_at timestamptz NOT NULL DEFAULT now()
      )`);
  },
  async down(knex) {
    await knex.schema.dropTable('refund_reports');
  },
};

/** Money the provider gives back against the books is booked as a reversal of the transaction it contradicts. */
const returnedMoney: Migration = {
  name: '012_returned_money_reversals',
  async up(knex) {
    await knex.raw(`
      ALTER TABLE transactions
        DROP CONSTRAINT transactions_reversal_reason_check,
        ADD CONSTRAINT transactions_reversal_reason_check
          CHECK (reversal_reason IN ('refund', 'dispute', 'payout_returned', 'late_payment'))`);
  },
  async down(knex) {
    await knex.raw(`
      ALTER TABLE transactions
        DROP CONSTRAINT transactions_reversal_reason_check,
        ADD CONSTRAINT transactions_reversal_reason_check CHECK (reversal_reason IN ('refund', 'dispute'))`);
  },
};

/**
 * What the ledger asked the payment provider for each deposit (and, later, each payout): the request recorded
 * when its event is consumed, the provider's reference and the client secret once created, and when to try again.
 * `next_attempt_at` is set while there is work to do (create, or cancel once `cancel_requested`), null otherwise.
 */
const providerPayments: Migration = {
  name: '013_provider_payments',
  async up(knex) {
    await knex.raw(`
      CREATE TABLE provider_payments (
        transaction_id uuid PRIMARY KEY REFERENCES transactions (id) ON DELETE CASCADE,
        kind text NOT NULL CHECK (kind IN ('payment', 'payout')),
        provider text NOT NULL,
        state text NOT NULL DEFAULT 'requested'
          CHECK (state IN ('requested', 'created', 'refused', 'skipped', 'closed')),
        reference text,
        client_secret text,
        destination text,
        cancel_requested boolean NOT NULL DEFAULT false,
        attempts integer NOT NULL DEFAULT 0,
        next_attempt_at timestamptz DEFAULT now(),
        last_error text,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        CHECK (state <> 'created' OR reference IS NOT NULL)
      )`);
    await knex.raw(`
      CREATE INDEX provider_payments_due ON provider_payments (next_attempt_at)
      WHERE next_attempt_at IS NOT NULL`);
  },
  async down(knex) {
    await knex.schema.dropTable('provider_payments');
  },
};

/**
 * Where each user is paid out: their connected account at the provider (Stripe Connect), one per user. A payout
 * first transfers the amount to it, then pays it out to its bank; `transfer` keeps the transfer, which is reversed
 * should the payout fail.
 */
const payoutAccounts: Migration = {
  name: '014_payout_accounts',
  async up(knex) {
    await knex.raw(`
      CREATE TABLE payout_accounts (
        user_id uuid PRIMARY KEY,
        provider text NOT NULL,
        account text NOT NULL UNIQUE,
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
    await knex.raw(`ALTER TABLE provider_payments ADD COLUMN transfer text`);
  },
  async down(knex) {
    await knex.raw(`ALTER TABLE provider_payments DROP COLUMN transfer`);
    await knex.schema.dropTable('payout_accounts');
  },
};

/** Events that name the provider's object rather than the transaction (disputes) find it by its reference. */
const providerReferenceIndex: Migration = {
  name: '015_provider_reference_index',
  async up(knex) {
    await knex.raw(`CREATE UNIQUE INDEX provider_payments_reference ON provider_payments (reference)`);
  },
  async down(knex) {
    await knex.raw(`DROP INDEX provider_payments_reference`);
  },
};

/**
 * Reconciliation with the provider's own records: each mismatch a case (open until an admin decides it, or cleared
 * once the books and the provider agree again), the cursor of the job that finds them, and the append-only trail
 * of what admins did and why.
 */
const providerReconciliation: Migration = {
  name: '016_provider_reconciliation',
  async up(knex) {
    await knex.raw(`
      CREATE TABLE reconciliation_cases (
        id uuid PRIMARY KEY,
        kind text NOT NULL,
        provider_reference text NOT NULL,
        transaction_id uuid,
        currency char(3) NOT NULL,
        provider_amount bigint NOT NULL,
        ledger_amount bigint NOT NULL,
        status text NOT NULL DEFAULT 'open' CHECK (status IN ('open', 'cleared', 'resolved')),
        decision text CHECK (decision IN ('book', 'nothing_owed')),
        reason text,
        resolved_by uuid,
        found_at timestamptz NOT NULL DEFAULT now(),
        last_seen_at timestamptz NOT NULL DEFAULT now(),
        resolved_at timestamptz,
        CHECK ((status = 'resolved') = (decision IS NOT NULL))
      )`);
    // The same mismatch seen again is the same case (a decided one stays decided).
    await knex.raw(`
      CREATE UNIQUE INDEX reconciliation_cases_mismatch
      ON reconciliation_cases (kind, provider_reference, provider_amount, ledger_amount)`);
    await knex.raw(
      `CREATE INDEX reconciliation_cases_open ON reconciliation_cases (found_at, id) WHERE status = 'open'`,
    );
    await knex.raw(`
      CREATE TABLE reconciliation_state (
        id boolean PRIMARY KEY DEFAULT true CHECK (id),
        cursor timestamptz,
        running_until timestamptz,
        last_run jsonb
      )`);
    await knex.raw(`INSERT INTO reconciliation_state DEFAULT VALUES`);
    await knex.raw(`
      CREATE TABLE admin_actions (
        id uuid PRIMARY KEY,
        actor uuid NOT NULL,
        action text NOT NULL,
        subject text NOT NULL,
        reason text NOT NULL,
        detail jsonb NOT NULL DEFAULT '{}',
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
    await knex.raw(`CREATE INDEX admin_actions_created ON admin_actions (created_at, id)`);
    await refuseChanges(knex, 'admin_actions', 'admin actions');
  },
  async down(knex) {
    await knex.schema.dropTable('admin_actions');
    await knex.raw('DROP FUNCTION admin_actions_refuse_change()');
    await knex.schema.dropTable('reconciliation_state');
    await knex.schema.dropTable('reconciliation_cases');
  },
};

/**
 * The deposits and withdrawals removed with their users: the provider keeps its records of them, and reconciliation
 * tells those apart from money unknown to the ledger. Only the id is kept.
 */
const removedTransactions: Migration = {
  name: '017_removed_transactions',
  async up(knex) {
    await knex.raw(`
      CREATE TABLE removed_transactions (
        transaction_id uuid PRIMARY KEY,
        removed_at timestamptz NOT NULL DEFAULT now()
      )`);
  },
  async down(knex) {
    await knex.schema.dropTable('removed_transactions');
  },
};

/**
 * Money the provider takes back from a deposit whose user was removed (a refund, a lost dispute) is the platform's
 * loss: booked against the platform loss account, once per refunded total or dispute, like the reversal it stands
 * in for. `removed_deposits` keeps, at removal, what deciding that needs (the deposit, its payment at the provider,
 * the reversals it had); `platform_losses` is each loss booked, the `transaction_id` of its journal entries.
 */
const platformLosses: Migration = {
  name: '018_platform_losses',
  async up(knex) {
    await knex.raw(`
      CREATE TABLE removed_deposits (
        deposit_id uuid PRIMARY KEY,
        account_id uuid NOT NULL,
        currency char(3) NOT NULL,
        amount bigint NOT NULL CHECK (amount > 0),
        fee bigint NOT NULL CHECK (fee >= 0),
        status text NOT NULL,
        -- The provider's payment (Stripe: pi_…): disputes name it, not the deposit.
        provider_reference text,
        -- Its reversals as they were: [{ id, reversal_reason, reversal_key, status, amount, fee, payment_id, updated_at }].
        reversals jsonb NOT NULL DEFAULT '[]',
        created_at timestamptz NOT NULL,
        removed_at timestamptz NOT NULL DEFAULT now()
      )`);
    await knex.raw(`
      CREATE UNIQUE INDEX removed_deposits_reference ON removed_deposits (provider_reference)
      WHERE provider_reference IS NOT NULL`);
    await knex.raw(`
      CREATE TABLE platform_losses (
        id uuid PRIMARY KEY,
        deposit_id uuid NOT NULL REFERENCES removed_deposits (deposit_id),
        reason text NOT NULL CHECK (reason IN ('refund', 'dispute')),
        -- As a reversal's: 'refund:<refunded total>' or 'dispute:<provider dispute id>'.
        loss_key text NOT NULL,
        currency char(3) NOT NULL,
        -- What the provider took back; the deposit fee's share fee revenue gives back; the loss is the rest.
        amount bigint NOT NULL CHECK (amount > 0),
        fee bigint NOT NULL CHECK (fee >= 0 AND fee <= amount),
        reference text NOT NULL,
        correlation_id text NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        UNIQUE (deposit_id, loss_key)
      )`);
    await knex.raw(`CREATE INDEX platform_losses_created ON platform_losses (created_at DESC, id DESC)`);
    await refuseChanges(knex, 'platform_losses', 'platform losses');
  },
  async down(knex) {
    await knex.schema.dropTable('platform_losses');
    await knex.raw('DROP FUNCTION platform_losses_refuse_change()');
    await knex.schema.dropTable('removed_deposits');
  },
};

/**
 * Reconciliation of the provider's whole picture: an extra capture is refunded and an extra transfer reversed at the
 * provider (the decisions `refund` and `reverse`); cases are found by their provider reference, as the objects the
 * ledger never asked for open them from their events.
 */
const reconciliationGivesBack: Migration = {
  name: '019_reconciliation_gives_back',
  async up(knex) {
    await knex.raw(`ALTER TABLE reconciliation_cases DROP CONSTRAINT reconciliation_cases_decision_check`);
    await knex.raw(`
      ALTER TABLE reconciliation_cases ADD CONSTRAINT reconciliation_cases_decision_check
      CHECK (decision IN ('book', 'refund', 'reverse', 'nothing_owed'))`);
    await knex.raw(
      `CREATE INDEX reconciliation_cases_reference ON reconciliation_cases (provider_reference)`,
    );
  },
  async down(knex) {
    await knex.raw(`DROP INDEX reconciliation_cases_reference`);
    await knex.raw(`ALTER TABLE reconciliation_cases DROP CONSTRAINT reconciliation_cases_decision_check`);
    await knex.raw(`
      ALTER TABLE reconciliation_cases ADD CONSTRAINT reconciliation_cases_decision_check
      CHECK (decision IN ('book', 'nothing_owed'))`);
  },
};

/** As REQUEST_COLUMNS, and whether the request needs a payout account (a withdrawal paid out through a provider). */
const PAYOUT_REQUEST_COLUMNS = `${REQUEST_COLUMNS}, payout_account_required boolean`;

/**
 * ledger_accept_requests (009) checks a withdrawal's payout account itself, after SPEC's checks: a withdrawal
 * marked `payout_account_required` by a user with no `payout_accounts` row is refused `payout_account_missing`,
 * and only once its funds are there (otherwise `insufficient_funds`, as for anyone); either way nothing is held and
 * its idempotency claim is deleted again. Everything else is as in 009.
 */
const acceptRequestsPayoutAccount: Migration = {
  name: '021_accept_requests_payout_account',
  async up(knex) {
    await knex.raw(`
      CREATE OR REPLACE FUNCTION ledger_accept_requests(p_requests jsonb)
      RETURNS TABLE (o_index int, o_outcome text, o_fingerprint text, o_response jsonb, o_created_at timestamptz)
      LANGUAGE plpgsql AS $$
      DECLARE
        r record;
        v_owner uuid;
        v_covered boolean;
        v_refusal text;
        v_accepted int[] := '{}';
      BEGIN
        o_created_at := now();
        FOR r IN SELECT * FROM jsonb_to_recordset(p_requests) AS x(${PAYOUT_REQUEST_COLUMNS}) LOOP
          o_index := r.i;
          o_fingerprint := NULL;
          o_response := NULL;
          v_refusal := NULL;
          IF r.key IS NOT NULL THEN
            INSERT INTO idempotency_keys (user_id, key, fingerprint, transaction_id, response)
            VALUES (
              r.user_id, r.key, r.fingerprint, r.id,
              r.snapshot || jsonb_build_object('created_at', o_created_at, 'updated_at', o_created_at)
            )
            ON CONFLICT (user_id, key) DO NOTHING;
            IF NOT FOUND THEN
              SELECT k.fingerprint, k.response INTO o_fingerprint, o_response
              FROM idempotency_keys k WHERE k.user_id = r.user_id AND k.key = r.key;
              o_outcome := 'replay';
              RETURN NEXT;
              CONTINUE;
            END IF;
          END IF;
          -- "(...) IS TRUE": see 009 (the planner's choice of index without statistics).
          IF r.counterparty_account_id IS NOT NULL THEN
            PERFORM 1 FROM accounts a
            WHERE a.id = r.counterparty_account_id
              AND (a.kind = 'user' AND a.currency = r.counterparty_currency) IS TRUE
            FOR KEY SHARE;
            IF NOT FOUND THEN
              v_refusal := 'destination_not_found';
            END IF;
          END IF;
          IF v_refusal IS NULL AND r.hold > 0
             AND r.payout_account_required IS TRUE
             AND NOT EXISTS (SELECT 1 FROM payout_accounts p WHERE p.user_id = r.user_id) THEN
            -- Refused either way, so nothing is held: for its funds first (SPEC's refusal), else for its destination.
            SELECT a.user_id, a.available_balance >= r.hold INTO v_owner, v_covered
            FROM accounts a WHERE a.id = r.account_id AND (a.kind = 'user') IS TRUE;
            v_refusal := CASE
              WHEN NOT FOUND THEN 'account_not_found'
              WHEN v_owner <> r.user_id THEN 'forbidden'
              WHEN NOT v_covered THEN 'insufficient_funds'
              ELSE 'payout_account_missing'
            END;
          ELSIF v_refusal IS NULL AND r.hold > 0 THEN
            UPDATE accounts a SET available_balance = a.available_balance - r.hold, updated_at = now()
            WHERE a.id = r.account_id
              AND (a.kind = 'user' AND a.user_id = r.user_id AND a.available_balance >= r.hold) IS TRUE;
            IF NOT FOUND THEN
              SELECT a.user_id INTO v_owner FROM accounts a WHERE a.id = r.account_id AND (a.kind = 'user') IS TRUE;
              v_refusal := CASE
                WHEN NOT FOUND THEN 'account_not_found'
                WHEN v_owner <> r.user_id THEN 'forbidden'
                ELSE 'insufficient_funds'
              END;
            END IF;
          ELSIF v_refusal IS NULL THEN
            PERFORM 1 FROM accounts a
            WHERE a.id = r.account_id AND (a.kind = 'user' AND a.user_id = r.user_id) IS TRUE
            FOR KEY SHARE;
            IF NOT FOUND THEN
              v_refusal := 'account_not_found';
            END IF;
          END IF;
          IF v_refusal IS NOT NULL THEN
            IF r.key IS NOT NULL THEN
              DELETE FROM idempotency_keys k WHERE k.user_id = r.user_id AND k.key = r.key;
            END IF;
            o_outcome := v_refusal;
          ELSE
            v_accepted := v_accepted || r.i;
            o_outcome := 'accepted';
          END IF;
          RETURN NEXT;
        END LOOP;
        IF cardinality(v_accepted) = 0 THEN
          RETURN;
        END IF;
        INSERT INTO transactions (
          id, account_id, user_id, type, amount, currency, fee, counterparty_account_id, counterparty_user_id,
          exchange_rate, converted_amount, converted_currency, payment_id
        )
        SELECT x.id, x.account_id, x.user_id, x.type, x.amount, x.currency, x.fee, x.counterparty_account_id,
               x.counterparty_user_id, x.exchange_rate, x.converted_amount, x.converted_currency, x.payment_id
        FROM jsonb_to_recordset(p_requests) AS x(${PAYOUT_REQUEST_COLUMNS})
        WHERE x.i = ANY (v_accepted);
        INSERT INTO outbox (event_id, event)
        SELECT x.event_id, x.event
        FROM jsonb_to_recordset(p_requests) AS x(${PAYOUT_REQUEST_COLUMNS})
        WHERE x.i = ANY (v_accepted) AND x.event IS NOT NULL
        ORDER BY x.i;
      END $$`);
  },
  async down(knex) {
    await knex.raw('DROP FUNCTION ledger_accept_requests');
    await acceptRequestsFunction.up(knex);
  },
};

/**
 * Whose resource each admin action touched (`owner`: the user it belongs to, null for the platform's own), and a
 * reason that may be absent: the other services' admin actions arrive as AdminActionTaken events, most without one
 * (ADR 0096). Indexed for the trail's filters by actor and by owner.
 */
const adminActionOwner: Migration = {
  name: '020_admin_action_owner',
  async up(knex) {
    await knex.raw(`ALTER TABLE admin_actions ADD COLUMN owner uuid`);
    await knex.raw(`ALTER TABLE admin_actions ALTER COLUMN reason DROP NOT NULL`);
    await knex.raw(`CREATE INDEX admin_actions_actor ON admin_actions (actor, created_at, id)`);
    await knex.raw(
      `CREATE INDEX admin_actions_owner ON admin_actions (owner, created_at, id) WHERE owner IS NOT NULL`,
    );
  },
  async down(knex) {
    await knex.raw(`DROP INDEX admin_actions_owner`);
    await knex.raw(`DROP INDEX admin_actions_actor`);
    await knex.raw(`ALTER TABLE admin_actions DROP COLUMN owner`);
    // `reason` stays nullable: the rows without one cannot be given one (the trail is append-only).
  },
};

const PROVIDER_PAYMENT_STATES = `'requested', 'created', 'refused', 'skipped', 'closed'`;

/**
 * When each phase of a provider request first used its idempotency keys: the creation's (a payment, or a payout's
 * transfer and payout), and the undo's (a cancellation, a transfer's reversal). A phase whose keys the provider may
 * have forgotten is made no more: 'expired', left to an operator. Requests already tried count from when they were
 * recorded, never later than their first call.
 */
const providerRequestAges: Migration = {
  name: '022_provider_request_ages',
  async up(knex) {
    await knex.raw(`
      ALTER TABLE provider_payments
        ADD COLUMN create_keys_first_used_at timestamptz,
        ADD COLUMN undo_keys_first_used_at timestamptz,
        DROP CONSTRAINT provider_payments_state_check,
        ADD CONSTRAINT provider_payments_state_check CHECK (state IN (${PROVIDER_PAYMENT_STATES}, 'expired'))`);
    await knex.raw(`UPDATE provider_payments SET create_keys_first_used_at = created_at WHERE attempts > 0`);
    await knex.raw(`
      UPDATE provider_payments SET undo_keys_first_used_at = created_at
      WHERE state = 'created' AND cancel_requested`);
  },
  async down(knex) {
    // An expired request goes back to the phase it stopped in, not due: it is not made again.
    await knex.raw(`
      UPDATE provider_payments
      SET state = CASE WHEN undo_keys_first_used_at IS NULL THEN 'requested' ELSE 'created' END
      WHERE state = 'expired'`);
    await knex.raw(`
      ALTER TABLE provider_payments
        DROP CONSTRAINT provider_payments_state_check,
        ADD CONSTRAINT provider_payments_state_check CHECK (state IN (${PROVIDER_PAYMENT_STATES})),
        DROP COLUMN create_keys_first_used_at,
        DROP COLUMN undo_keys_first_used_at`);
  },
};

export const migrations: Migration[] = [
  inboxMigration,
  inboxByAgeMigration,
  outboxMigration,
  accounts,
  transactions,
  entries,
  idempotencyKeys,
  historyCounts,
  reconciliationAndRemovals,
  statementEntriesIndex,
  reversals,
  acceptRequestsFunction,
  overdrawnByShortfall,
  refundReports,
  returnedMoney,
  providerPayments,
  payoutAccounts,
  providerReferenceIndex,
  providerReconciliation,
  removedTransactions,
  platformLosses,
  reconciliationGivesBack,
  adminActionOwner,
  acceptRequestsPayoutAccount,
  providerRequestAges,
];

/**
 * What the ledger's runtime role may do, table by table (docs/security.md, "Database and broker logins"). The journal and the
 * trail of admin actions are only ever appended to: the role may not update, delete or truncate them, on top of
 * the triggers that refuse it, and owns no table, so it can disable no trigger.
 */
export const privileges: RuntimePrivileges = {
  ...inboxPrivileges,
  ...outboxPrivileges,
  // Balances move under row locks (FOR NO KEY UPDATE, FOR KEY SHARE need UPDATE); a removed user's go.
  accounts: ['SELECT', 'INSERT', 'UPDATE', 'DELETE'],
  transactions: ['SELECT', 'INSERT', 'UPDATE', 'DELETE'],
  entries: ['SELECT', 'INSERT'],
  admin_actions: ['SELECT', 'INSERT'],
  idempotency_keys: ['SELECT', 'INSERT', 'DELETE'],
  history_counts: ['SELECT', 'INSERT', 'UPDATE', 'DELETE'],
  history_count_deltas: ['SELECT', 'INSERT', 'DELETE'],
  payout_accounts: ['SELECT', 'INSERT', 'DELETE'],
  provider_payments: ['SELECT', 'INSERT', 'UPDATE'],
  refund_reports: ['SELECT', 'INSERT', 'UPDATE'],
  reconciliation_cases: ['SELECT', 'INSERT', 'UPDATE'],
  reconciliation_state: ['SELECT', 'UPDATE'],
  removed_users: ['SELECT', 'INSERT'],
  removed_transactions: ['SELECT', 'INSERT'],
  removed_deposits: ['SELECT', 'INSERT'],
  platform_losses: ['SELECT', 'INSERT'],
};
