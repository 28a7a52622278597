import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { summarize, type LatencySummary } from './load.js';

export interface PgbenchWorkload {
  name: string;
  /** Statements that create and fill the scratch schema; `{rows}` is replaced by how many rows to seed. */
  setup: (rows: number) => string[];
  script: string;
  /** Deposits one script transaction credits. */
  perTransaction: number;
  /** Rows to seed per second of the run (each transaction consumes `perTransaction`). */
  rowsPerSecond: number;
}

export interface PgbenchResult {
  workload: string;
  clients: number;
  transactions: number;
  tps: number;
  /** Deposits credited per second: tps × perTransaction. */
  creditsPerSecond: number;
  latency: LatencySummary | null;
  failed: number;
}

const run = promisify(execFile);

/** The minimal credit: one balance row and one journal row, on 1,000 accounts. The machine's commit rate. */
export const SINGLE_ROW_CREDIT: PgbenchWorkload = {
  name: 'single-row credit',
  setup: () => [
    `CREATE TABLE bench_accounts (id int PRIMARY KEY, balance bigint NOT NULL DEFAULT 0,
                                  updated_at timestamptz NOT NULL DEFAULT now())`,
    `CREATE TABLE bench_entries (id bigserial PRIMARY KEY, account_id int NOT NULL, amount bigint NOT NULL,
                                 created_at timestamptz NOT NULL DEFAULT now())`,
    'CREATE INDEX bench_entries_account ON bench_entries (account_id)',
    'INSERT INTO bench_accounts (id) SELECT generate_series(1, 1000)',
  ],
  script: `\\set aid random(1, 1000)
\\set amount random(100, 90000)
BEGIN;
UPDATE bench_accounts SET balance = balance + :amount, updated_at = now() WHERE id = :aid;
INSERT INTO bench_entries (account_id, amount) VALUES (:aid, :amount);
END;
`,
  perTransaction: 1,
  rowsPerSecond: 0,
};

/** The ledger's tables as far as a deposit credit touches them, with its deferred balance check. */
const LEDGER_SCHEMA = (rows: number) => [
  `CREATE TABLE processed_events (event_id text, consumer text, processed_at timestamptz NOT NULL DEFAULT now(),
                                  PRIMARY KEY (event_id, consumer))`,
  `CREATE TABLE outbox (seq bigserial PRIMARY KEY, event_id uuid NOT NULL UNIQUE, event jsonb NOT NULL,
                        created_at timestamptz NOT NULL DEFAULT now(), published_at timestamptz)`,
  'CREATE INDEX outbox_unpublished ON outbox (seq) WHERE published_at IS NULL',
  `CREATE TABLE accounts (id int PRIMARY KEY, kind text NOT NULL, balance bigint NOT NULL DEFAULT 0,
                          available_balance bigint NOT NULL DEFAULT 0, updated_at timestamptz NOT NULL DEFAULT now())`,
  `CREATE TABLE transactions (id bigint PRIMARY KEY, account_id int NOT NULL, status text NOT NULL,
                              amount bigint NOT NULL, fee bigint NOT NULL DEFAULT 0,
                              created_at timestamptz NOT NULL DEFAULT now(), updated_at timestamptz NOT NULL DEFAULT now(),
                              completed_at timestamptz)`,
  `CREATE INDEX transactions_pending ON transactions (created_at) WHERE status = 'pending'`,
  `CREATE TABLE entries (id bigserial PRIMARY KEY, transaction_id bigint NOT NULL, account_id int NOT NULL,
                         amount bigint NOT NULL, created_at timestamptz NOT NULL DEFAULT now())`,
  'CREATE INDEX entries_transaction ON entries (transaction_id)',
  'CREATE INDEX entries_account ON entries (account_id)',
  `CREATE FUNCTION entries_check_balanced() RETURNS trigger LANGUAGE plpgsql AS $$
   DECLARE total numeric;
   BEGIN
     SELECT sum(amount) INTO total FROM entries WHERE transaction_id = NEW.transaction_id;
     IF total <> 0 THEN RAISE EXCEPTION 'unbalanced'; END IF;
     RETURN NULL;
   END $$`,
  `CREATE CONSTRAINT TRIGGER entries_balanced AFTER INSERT ON entries
   DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION entries_check_balanced()`,
  `INSERT INTO accounts (id, kind) SELECT g, CASE WHEN g = 0 THEN 'system' ELSE 'user' END FROM generate_series(0, 1000) g`,
  `INSERT INTO transactions (id, account_id, status, amount)
   SELECT g, 1 + g % 1000, 'pending', 100 + (g::bigint * 7919) % 90000 FROM generate_series(1, ${rows}) g`,
  'CREATE SEQUENCE deposit_seq',
  'CREATE SEQUENCE batch_seq INCREMENT BY 50',
];

/** What the ledger's consumer does for one PaymentProcessed, statement for statement, in one transaction. */
export const LEDGER_CREDIT: PgbenchWorkload = {
  name: "the ledger's credit, one per transaction",
  setup: LEDGER_SCHEMA,
  script: `BEGIN;
SELECT nextval('deposit_seq') AS tid \\gset
INSERT INTO processed_events (event_id, consumer) VALUES ('evt-' || :tid, 'ledger') ON CONFLICT DO NOTHING RETURNING event_id;
SELECT amount, account_id FROM transactions WHERE id = :tid FOR UPDATE \\gset
SELECT id, balance, available_balance FROM accounts WHERE id = :account_id AND kind = 'user';
UPDATE transactions SET status = 'completed', updated_at = now(), completed_at = now() WHERE id = :tid AND status = 'pending' RETURNING *;
INSERT INTO outbox (event_id, event) VALUES (gen_random_uuid(), '{"type": "TransactionCompleted"}');
INSERT INTO entries (transaction_id, account_id, amount) VALUES (:tid, :account_id, :amount), (:tid, 0, 0 - :amount);
UPDATE accounts SET balance = balance + :amount, available_balance = available_balance + :amount, updated_at = now() WHERE id = :account_id AND kind = 'user';
UPDATE accounts SET balance = balance - :amount, available_balance = available_balance - :amount, updated_at = now() WHERE id = 0 AND kind = 'system';
COMMIT;
`,
  perTransaction: 1,
  rowsPerSecond: 20_000,
};

/** The same work for 50 events per database transaction, the clearing account updated once per batch. */
export const LEDGER_CREDIT_BATCHED: PgbenchWorkload = {
  name: "the ledger's credit, 50 per transaction",
  setup: LEDGER_SCHEMA,
  script: `BEGIN;
SELECT nextval('batch_seq') AS b \\gset
INSERT INTO processed_events (event_id, consumer) SELECT 'evt-' || g, 'ledger' FROM generate_series(:b, :b + 49) g ON CONFLICT DO NOTHING;
SELECT id FROM transactions WHERE id BETWEEN :b AND :b + 49 ORDER BY id FOR UPDATE;
SELECT id FROM accounts WHERE id IN (SELECT account_id FROM transactions WHERE id BETWEEN :b AND :b + 49) AND kind = 'user' ORDER BY id FOR UPDATE;
UPDATE transactions SET status = 'completed', updated_at = now(), completed_at = now() WHERE id BETWEEN :b AND :b + 49 AND status = 'pending';
INSERT INTO outbox (event_id, event) SELECT gen_random_uuid(), '{"type": "TransactionCompleted"}' FROM generate_series(1, 50);
INSERT INTO entries (transaction_id, account_id, amount) SELECT id, account_id, amount FROM transactions WHERE id BETWEEN :b AND :b + 49 UNION ALL SELECT id, 0, -amount FROM transactions WHERE id BETWEEN :b AND :b + 49;
UPDATE accounts a SET balance = a.balance + s.total, available_balance = a.available_balance + s.total, updated_at = now() FROM (SELECT account_id, sum(amount) AS total FROM transactions WHERE id BETWEEN :b AND :b + 49 GROUP BY account_id) s WHERE a.id = s.account_id;
UPDATE accounts SET balance = balance - s.total, available_balance = available_balance - s.total, updated_at = now() FROM (SELECT sum(amount) AS total FROM transactions WHERE id BETWEEN :b AND :b + 49) s WHERE id = 0;
COMMIT;
`,
  perTransaction: 50,
  rowsPerSecond: 200_000,
};

/** `pgbench` from PATH or from the PostgreSQL installation; null when the machine has none. */
export function findPgbench(): string | null {
  const candidates = (process.env.PATH ?? '').split(path.delimiter).map((dir) => path.join(dir, 'pgbench'));
  for (const candidate of candidates) if (existsSync(candidate)) return candidate;
  for (const version of ['17', '16', '15', '14', '13']) {
    const candidate = `/usr/lib/postgresql/${version}/bin/pgbench`;
    if (existsSync(candidate)) return candidate;
  }
  return null;
}

/**
 * Runs a workload with `clients` connections for `seconds` on a scratch database of the same server, logging
 * every transaction to get percentiles, and drops the database afterwards.
 */
export async function runPgbench(
  binary: string,
  serverUrl: string,
  workload: PgbenchWorkload,
  clients: number,
  seconds: number,
): Promise<PgbenchResult> {
  const name = `payments_bench_pgbench_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: serverUrl });
  await admin.connect();
  const dir = await mkdtemp(path.join(tmpdir(), 'payments-pgbench-'));
  try {
    await admin.query(`CREATE DATABASE "${name}"`);
    const url = new URL(serverUrl);
    url.pathname = `/${name}`;
    const scratch = new pg.Client({ connectionString: url.toString() });
    await scratch.connect();
    try {
      for (const statement of workload.setup(Math.max(1000, Math.ceil(workload.rowsPerSecond * seconds)))) {
        await scratch.query(statement);
      }
      await scratch.query('VACUUM ANALYZE');
      // Otherwise the WAL the seeding wrote forces a checkpoint in the middle of the measured run.
      await scratch.query('CHECKPOINT');
    } finally {
      await scratch.end();
    }
    const script = path.join(dir, 'workload.sql');
    await writeFile(script, workload.script);
    const { stdout } = await run(
      binary,
      [
        '-n',
        ...['-c', String(clients), '-j', String(Math.min(clients, 2)), '-T', String(seconds)],
        ...['-f', script, '--max-tries', '10', '-l', '--log-prefix', path.join(dir, 'log')],
        url.toString(),
      ],
      { cwd: dir, maxBuffer: 16 * 1024 * 1024 },
    );
    const latencies: number[] = [];
    for (const file of (await readdir(dir)).filter((f) => f.startsWith('log'))) {
      for (const line of (await readFile(path.join(dir, file), 'utf8')).split('\n')) {
        // client_id transaction_no time script_no time_epoch time_us [retries]; time is "failed" for a failure
        const micros = Number(line.split(' ')[2]);
        if (line && Number.isFinite(micros)) latencies.push(micros / 1000);
      }
    }
    const tps = Number(/tps = ([\d.]+)/.exec(stdout)?.[1] ?? NaN);
    return {
      workload: workload.name,
      clients,
      transactions: Number(/number of transactions actually processed: (\d+)/.exec(stdout)?.[1] ?? NaN),
      tps,
      creditsPerSecond: tps * workload.perTransaction,
      latency: summarize(latencies),
      failed: Number(/number of failed transactions: (\d+)/.exec(stdout)?.[1] ?? 0),
    };
  } finally {
    await admin.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`).catch(() => undefined);
    await admin.end();
    await rm(dir, { recursive: true, force: true });
  }
}
