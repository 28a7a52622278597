import { sleep } from '../harness/load.js';
import { openFundedAccounts, runBankClients } from './bank-clients.js';
import { checkBooks, waitSettled } from './books.js';
import { completedTransferTotals } from './drill-queries.js';
import type { DrillContext, DrillReport } from './drill-context.js';

const ACCOUNTS = 10;
const CLIENTS = 20;
const FUNDING_MINOR = 100_000; // 1,000.00 USD each

/** Runs `fault` every `everyMs` (the first at half that) until `until`; resolves with how long each took. */
export async function repeatFault(
  everyMs: number,
  until: number,
  fault: () => Promise<void>,
): Promise<number[]> {
  const durations: number[] = [];
  for (let next = Date.now() + everyMs / 2; next < until; next += everyMs) {
    await sleep(Math.max(0, next - Date.now()));
    const started = Date.now();
    await fault();
    durations.push(Date.now() - started);
  }
  return durations;
}

/**
 * The bank drill: 20 clients move money among 10 accounts and read balances while the ledger process is killed
 * with SIGKILL and restarted every `killEverySeconds`.
 */
export async function runBankDrill(context: DrillContext, killEverySeconds: number): Promise<DrillReport> {
  const { system, seconds, settleSeconds, log } = context;
  const started = Date.now();
  log(`bank drill: opening and funding ${ACCOUNTS} accounts through the gateway and a signed webhook`);
  const accounts = await openFundedAccounts(context, ACCOUNTS, FUNDING_MINOR);
  const ids = accounts.map((account) => account.accountId);
  const until = Date.now() + seconds * 1000;
  log(`bank drill: ${CLIENTS} clients for ${seconds} s; SIGKILL of the ledger every ${killEverySeconds} s`);
  const [stats, outages] = await Promise.all([
    runBankClients(context, accounts, CLIENTS, until),
    repeatFault(killEverySeconds * 1000, until, async () => {
      await system.kill('ledger', 'SIGKILL');
      await system.restart('ledger');
    }),
  ]);
  const stillPending = await waitSettled(context, ids, settleSeconds * 1000);
  log(`bank drill: settled (${stillPending} pending); checking the books`);
  const transfers = await completedTransferTotals(context, ids);
  const checks = await checkBooks(context, {
    accountIds: ids,
    expectedTotalMinor: BigInt(ACCOUNTS * FUNDING_MINOR) - transfers.feesMinor,
  });
  checks.push(
    {
      name: 'no negative balance shown to a reader',
      ok: stats.negativeReads === 0,
      detail: `${stats.balanceReads} balance reads, ${stats.negativeReads} negative`,
      discrepancies: stats.negativeReads,
    },
    {
      name: 'every transfer a client sent has a known outcome',
      ok: stats.unresolved === 0,
      detail: `${stats.unresolved} given up on; ${stats.retries} retried with their Idempotency-Key`,
      discrepancies: stats.unresolved,
    },
  );
  const average = outages.length ? outages.reduce((a, b) => a + b, 0) / outages.length : 0;
  return {
    name: 'bank: SIGKILL the ledger every 10 s',
    injected: [
      `${outages.length} × SIGKILL of the ledger process, each restarted at once (down ${(average / 1000).toFixed(1)} s on average until healthy)`,
    ],
    operations: {
      'transfers accepted (202)': stats.transfersAccepted,
      'transfers settled': transfers.count,
      'transfers refused (422, not enough money)': stats.transfersRefused,
      'balance reads': stats.balanceReads,
      'failed attempts (5xx or connection)': stats.failedAttempts,
      ...Object.fromEntries(Object.entries(stats.unexpected).map(([what, n]) => [`unexpected ${what}`, n])),
    },
    faults: outages.length,
    moneyMovedMinor: transfers.amountMinor,
    checks,
    durationMs: Date.now() - started,
  };
}
