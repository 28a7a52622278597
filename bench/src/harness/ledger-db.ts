import pg from 'pg';

/** Seeds and reads the ledger's database directly, as the bench's ground truth. */
export interface LedgerDatabase {
  pool: pg.Pool;
  /** Completed deposits with balanced entries onto each account (user account +amount, clearing −amount). */
  fundAccounts(accountIds: readonly string[], amountMinor: bigint): Promise<void>;
  /** `count` new USD accounts of `userId`, each funded like `fundAccounts` unless the amount is 0; their ids. */
  seedFundedAccounts(userId: string, count: number, amountMinor: bigint): Promise<string[]>;
  /**
   * `count` completed deposits on one account, a second apart going back in time from `skipSeconds` before now,
   * in batches; then VACUUM ANALYZE, as autovacuum would have done on a table that grew over time.
   */
  seedHistory(
    accountId: string,
    count: number,
    onBatch?: (done: number) => void,
    skipSeconds?: number,
  ): Promise<void>;
  /** Pending deposits spread over the accounts, as if each were just accepted; amounts in minor units. */
  seedPendingDeposits(accountIds: readonly string[], count: number): Promise<PendingDeposit[]>;
  pendingCount(type: 'deposit' | 'withdrawal' | 'transfer'): Promise<number>;
  /** Events in the ledger's outbox not yet confirmed by the broker. */
  unpublishedCount(): Promise<number>;
  /** Status and completion time (ms since epoch) of the given transactions. */
  outcomes(transactionIds: readonly string[]): Promise<Map<string, TransactionOutcome>>;
  /** Which of the given transactions the ledger has completed by now. */
  completedAmong(transactionIds: readonly string[]): Promise<string[]>;
  close(): Promise<void>;
}

export interface PendingDeposit {
  id: string;
  accountId: string;
  amount: number;
}

export interface TransactionOutcome {
  status: string;
  createdAt: number;
  completedAt: number | null;
}

const CURRENCY = 'USD';
/** The application_name of the bench's own connections, which fault drills leave alone. */
export const BENCH_APPLICATION = 'payments-bench';
const HISTORY_BATCH = 100_000;

export function openLedgerDatabase(url: string): LedgerDatabase {
  const pool = new pg.Pool({ connectionString: url, max: 4, application_name: BENCH_APPLICATION });
  // A drill terminates backends; an idle client of ours losing its connection is no reason to crash.
  pool.on('error', () => undefined);

  const clearingAccount = async (client: pg.PoolClient) => {
    await client.query(
      `INSERT INTO accounts (id, kind, system_code, currency) VALUES (gen_random_uuid(), 'system', 'provider_clearing', $1)
       ON CONFLICT (system_code, currency) WHERE kind = 'system' DO NOTHING`,
      [CURRENCY],
    );
    const { rows } = await client.query<{ id: string }>(
      `SELECT id FROM accounts WHERE kind = 'system' AND system_code = 'provider_clearing' AND currency = $1`,
      [CURRENCY],
    );
    return (rows[0] as { id: string }).id;
  };

  const inTransaction = async <T>(work: (client: pg.PoolClient) => Promise<T>): Promise<T> => {
    const client = await pool.connect();
    try {
      await client.query('BEGIN');
      const result = await work(client);
      await client.query('COMMIT');
      return result;
    } catch (error) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw error;
    } finally {
      client.release();
    }
  };

  /** One completed deposit per (account, n) pair: transaction, two entries, both balances. */
  const depositInto = async (
    client: pg.PoolClient,
    accountIds: readonly string[],
    perAccount: number,
    amountMinor: bigint,
    offsetSeconds = 0,
  ) => {
    const clearing = await clearingAccount(client);
    await client.query(
      `WITH deposits AS (
         SELECT gen_random_uuid() AS id, a.id AS account_id, a.user_id,
                now() - make_interval(secs => $4::int + g) AS at
         FROM accounts a CROSS JOIN generate_series(1, $2::int) g
         WHERE a.id = ANY($1::uuid[]) AND a.kind = 'user'
       ), inserted AS (
         INSERT INTO transactions (id, account_id, user_id, type, status, amount, currency, payment_id,
                                   created_at, updated_at, completed_at)
         SELECT id, account_id, user_id, 'deposit', 'completed', $3, '${CURRENCY}', id::text, at, at, at
         FROM deposits RETURNING id, account_id
       )
       INSERT INTO entries (transaction_id, account_id, amount, currency)
       SELECT id, account_id, $3, '${CURRENCY}' FROM inserted
       UNION ALL SELECT id, $5::uuid, -$3::bigint, '${CURRENCY}' FROM inserted`,
      [accountIds, perAccount, amountMinor.toString(), offsetSeconds, clearing],
    );
    const total = (amountMinor * BigInt(perAccount)).toString();
    await client.query(
      `UPDATE accounts SET balance = balance + $2, available_balance = available_balance + $2, updated_at = now()
       WHERE id = ANY($1::uuid[]) AND kind = 'user'`,
      [accountIds, total],
    );
    await client.query(
      `UPDATE accounts SET balance = balance - $2, available_balance = available_balance - $2 WHERE id = $1`,
      [clearing, (amountMinor * BigInt(perAccount) * BigInt(accountIds.length)).toString()],
    );
  };

  return {
    pool,

    fundAccounts: (accountIds, amountMinor) =>
      inTransaction((client) => depositInto(client, accountIds, 1, amountMinor)),

    seedFundedAccounts: (userId, count, amountMinor) =>
      inTransaction(async (client) => {
        const { rows } = await client.query<{ id: string }>(
          `INSERT INTO accounts (id, user_id, kind, currency)
           SELECT gen_random_uuid(), $1, 'user', '${CURRENCY}' FROM generate_series(1, $2::int) RETURNING id`,
          [userId, count],
        );
        const ids = rows.map((row) => row.id);
        if (amountMinor > 0n) await depositInto(client, ids, 1, amountMinor);
        return ids;
      }),

    async seedHistory(accountId, count, onBatch, skipSeconds = 0) {
      for (let done = 0; done < count;) {
        const batch = Math.min(HISTORY_BATCH, count - done);
        await inTransaction((client) => depositInto(client, [accountId], batch, 100n, skipSeconds + done));
        done += batch;
        onBatch?.(done);
      }
      await pool.query('VACUUM ANALYZE transactions');
      await pool.query('VACUUM ANALYZE entries');
    },

    async seedPendingDeposits(accountIds, count) {
      const { rows } = await pool.query<{ id: string; account_id: string; amount: string }>(
        `INSERT INTO transactions (id, account_id, user_id, type, status, amount, currency, payment_id)
         SELECT s.id, a.id, a.user_id, 'deposit', 'pending', 100 + (s.g * 7919) % 90000, '${CURRENCY}', s.id::text
         FROM (SELECT gen_random_uuid() AS id, g FROM generate_series(0, $2::int - 1) g) s
         JOIN accounts a ON a.id = ($1::uuid[])[1 + s.g % cardinality($1::uuid[])]
         RETURNING id, account_id, amount`,
        [accountIds, count],
      );
      await pool.query('ANALYZE transactions');
      return rows.map((row) => ({ id: row.id, accountId: row.account_id, amount: Number(row.amount) }));
    },

    async pendingCount(type) {
      const { rows } = await pool.query<{ count: string }>(
        `SELECT count(*) FROM transactions WHERE status = 'pending' AND type = $1`,
        [type],
      );
      return Number(rows[0]?.count ?? 0);
    },

    async unpublishedCount() {
      const { rows } = await pool.query<{ count: string }>(
        'SELECT count(*) FROM outbox WHERE published_at IS NULL',
      );
      return Number(rows[0]?.count ?? 0);
    },

    async outcomes(transactionIds) {
      const { rows } = await pool.query<{
        id: string;
        status: string;
        created_at: Date;
        completed_at: Date | null;
      }>(`SELECT id, status, created_at, completed_at FROM transactions WHERE id = ANY($1::uuid[])`, [
        transactionIds,
      ]);
      return new Map(
        rows.map((row) => [
          row.id,
          {
            status: row.status,
            createdAt: row.created_at.getTime(),
            completedAt: row.completed_at?.getTime() ?? null,
          },
        ]),
      );
    },

    async completedAmong(transactionIds) {
      const { rows } = await pool.query<{ id: string }>(
        `SELECT id FROM transactions WHERE id = ANY($1::uuid[]) AND status = 'completed'`,
        [transactionIds],
      );
      return rows.map((row) => row.id);
    },

    close: () => pool.end(),
  };
}
