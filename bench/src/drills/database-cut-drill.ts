import { BENCH_APPLICATION } from '../harness/ledger-db.js';
import { openFundedAccounts, runBankClients } from './bank-clients.js';
import { repeatFault } from './bank-drill.js';
import { checkBooks, waitSettled } from './books.js';
import { completedTransferTotals, terminateBackends } from './drill-queries.js';
import type { DrillContext, DrillReport } from './drill-context.js';

const ACCOUNTS = 10;
const CLIENTS = 20;
const FUNDING_MINOR = 100_000;

/** Transfers and reads while every connection the ledger holds to its database is terminated, again and again. */
export async function runDatabaseCutDrill(
  context: DrillContext,
  cutEverySeconds: number,
): Promise<DrillReport> {
  const { seconds, settleSeconds, log, target } = context;
  const started = Date.now();
  const database = new URL(target.ledgerDatabaseUrl).pathname.slice(1);
  const accounts = await openFundedAccounts(context, ACCOUNTS, FUNDING_MINOR);
  const ids = accounts.map((account) => account.accountId);
  const until = Date.now() + seconds * 1000;
  let terminated = 0;
  log(
    `database cut drill: ${CLIENTS} clients for ${seconds} s; pg_terminate_backend on ${database} every ${cutEverySeconds} s`,
  );
  const [stats, cuts] = await Promise.all([
    runBankClients(context, accounts, CLIENTS, until),
    repeatFault(cutEverySeconds * 1000, until, async () => {
      terminated += await terminateBackends(context, database, BENCH_APPLICATION);
    }),
  ]);
  const stillPending = await waitSettled(context, ids, settleSeconds * 1000);
  log(`database cut drill: settled (${stillPending} pending); checking the books`);
  const transfers = await completedTransferTotals(context, ids);
  const checks = await checkBooks(context, {
    accountIds: ids,
    expectedTotalMinor: BigInt(ACCOUNTS * FUNDING_MINOR) - transfers.feesMinor,
  });
  checks.push({
    name: 'every transfer a client sent has a known outcome',
    ok: stats.unresolved === 0,
    detail: `${stats.unresolved} given up on; ${stats.retries} retried with their Idempotency-Key`,
    discrepancies: stats.unresolved,
  });
  return {
    name: 'Postgres connections cut during transfers',
    injected: [
      `${cuts.length} rounds of pg_terminate_backend on the ledger's database: ${terminated} connections ended`,
    ],
    operations: {
      'transfers accepted (202)': stats.transfersAccepted,
      'transfers settled': transfers.count,
      'transfers refused (422, not enough money)': stats.transfersRefused,
      'balance reads': stats.balanceReads,
      'failed attempts (5xx or connection)': stats.failedAttempts,
      ...Object.fromEntries(Object.entries(stats.unexpected).map(([what, n]) => [`unexpected ${what}`, n])),
    },
    faults: terminated,
    moneyMovedMinor: transfers.amountMinor,
    checks,
    durationMs: Date.now() - started,
  };
}
