import type { BookedLoss } from './adversarial-checks.js';
import type { DrillContext } from './drill-context.js';

/** Completed transfers out of the accounts: how many, the money they moved and the fees they paid (minor units). */
export async function completedTransferTotals(
  context: Pick<DrillContext, 'ledgerDb'>,
  accountIds: readonly string[],
): Promise<{ count: number; amountMinor: bigint; feesMinor: bigint }> {
  const { rows } = await context.ledgerDb.pool.query<{
    count: string;
    amount: string | null;
    fees: string | null;
  }>(
    `SELECT count(*), sum(amount) AS amount, sum(fee) AS fees FROM transactions
     WHERE type = 'transfer' AND status = 'completed' AND account_id = ANY($1::uuid[])`,
    [accountIds],
  );
  const row = rows[0];
  return {
    count: Number(row?.count ?? 0),
    amountMinor: BigInt(row?.amount ?? 0),
    feesMinor: BigInt(row?.fees ?? 0),
  };
}

/** Completed withdrawals from the accounts: how many and what they debited (amount + fee, minor units). */
export async function completedWithdrawalTotals(
  context: Pick<DrillContext, 'ledgerDb'>,
  accountIds: readonly string[],
): Promise<{ count: number; debitedMinor: bigint }> {
  const { rows } = await context.ledgerDb.pool.query<{ count: string; debited: string | null }>(
    `SELECT count(*), sum(amount + fee) AS debited FROM transactions
     WHERE type = 'withdrawal' AND status = 'completed' AND account_id = ANY($1::uuid[])`,
    [accountIds],
  );
  const row = rows[0];
  return { count: Number(row?.count ?? 0), debitedMinor: BigInt(row?.debited ?? 0) };
}

/** Completed deposits onto the accounts: how many and what they credited (amount − fee, minor units). */
export async function completedDepositTotals(
  context: DrillContext,
  accountIds: readonly string[],
): Promise<{ count: number; creditedMinor: bigint; failed: number }> {
  const { rows } = await context.ledgerDb.pool.query<{
    completed: string;
    credited: string | null;
    failed: string;
  }>(
    `SELECT count(*) FILTER (WHERE status = 'completed') AS completed,
            sum(amount - fee) FILTER (WHERE status = 'completed') AS credited,
            count(*) FILTER (WHERE status = 'failed') AS failed
     FROM transactions WHERE type = 'deposit' AND account_id = ANY($1::uuid[])`,
    [accountIds],
  );
  const row = rows[0];
  return {
    count: Number(row?.completed ?? 0),
    creditedMinor: BigInt(row?.credited ?? 0),
    failed: Number(row?.failed ?? 0),
  };
}

/** Ends every connection other processes hold to the database; resolves with how many it ended. */
export async function terminateBackends(
  context: DrillContext,
  database: string,
  spare: string,
): Promise<number> {
  const { rows } = await context.adminDb.query<{ terminated: boolean }>(
    `SELECT pg_terminate_backend(pid) AS terminated FROM pg_stat_activity
     WHERE datname = $1 AND pid <> pg_backend_pid() AND application_name <> $2`,
    [database, spare],
  );
  return rows.filter((row) => row.terminated).length;
}

/** Every platform loss the ledger booked. */
export async function bookedLosses(context: Pick<DrillContext, 'ledgerDb'>): Promise<BookedLoss[]> {
  const { rows } = await context.ledgerDb.pool.query<{
    deposit_id: string;
    currency: string;
    amount: string;
    fee: string;
  }>(`SELECT deposit_id, currency, amount, fee FROM platform_losses`);
  return rows.map((loss) => ({
    depositId: loss.deposit_id,
    currency: loss.currency,
    amount: BigInt(loss.amount),
    fee: BigInt(loss.fee),
  }));
}
