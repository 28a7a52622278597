import type { Migration } from '@payments/service-kit';

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

export const historyCounts: Migration = {
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
