import { sleep } from '../harness/load.js';
import { openFundedAccounts, runBankClients } from './bank-clients.js';
import { checkReversals, openReversibleDeposits, planReversals, sendReversals } from './bank-reversals.js';
import { checkBooks, waitSettled } from './books.js';
import { completedTransferTotals, completedWithdrawalTotals } from './drill-queries.js';
import type { DrillContext, DrillReport } from './drill-context.js';

const ACCOUNTS = 10;
const COPIES_NOTE = 'each sent 3 times at once, retried until 200';
const CLIENTS = 20;
const FUNDING_MINOR = 100_000; // 1,000.00 USD each
const REVERSIBLE_MINOR = 20_000; // 200.00 USD each, which the provider refunds or disputes in most accounts

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
 * with SIGKILL and restarted every `killEverySeconds`, and the provider refunds and disputes deposits of theirs
 * (each event sent several times at once, some out of order).
 */
export async function runBankDrill(context: DrillContext, killEverySeconds: number): Promise<DrillReport> {
  const { system, seconds, settleSeconds, log } = context;
  const started = Date.now();
  log(`bank drill: opening and funding ${ACCOUNTS} accounts through the gateway and a signed webhook`);
  const accounts = await openFundedAccounts(context, ACCOUNTS, FUNDING_MINOR);
  const ids = accounts.map((account) => account.accountId);
  const plans = planReversals(
    await openReversibleDeposits(context, accounts, REVERSIBLE_MINOR),
    REVERSIBLE_MINOR,
  );
  const until = Date.now() + seconds * 1000;
  log(
    `bank drill: ${CLIENTS} clients for ${seconds} s; SIGKILL of the ledger every ${killEverySeconds} s; ` +
      `refunds and disputes of ${plans.filter((plan) => plan.steps.length > 0).length} deposits`,
  );
  const [stats, outages, reversals] = await Promise.all([
    runBankClients(context, accounts, CLIENTS, until),
    repeatFault(killEverySeconds * 1000, until, async () => {
      await system.kill('ledger', 'SIGKILL');
      await system.restart('ledger');
    }),
    sendReversals(context, plans, until),
  ]);
  const stillPending = await waitSettled(context, ids, settleSeconds * 1000);
  log(`bank drill: settled (${stillPending} pending); checking the books`);
  const transfers = await completedTransferTotals(context, ids);
  // The attacker's withdrawals accepted once the account was paid back, paid out by the drill (its provider).
  const withdrawals = await completedWithdrawalTotals(context, ids);
  // Deposits carry no fee in this drill, so a reversal takes back its whole amount.
  const reversedMinor = plans.reduce((sum, plan) => sum + plan.expectedReversedMinor, 0n);
  const checks = await checkBooks(context, {
    accountIds: ids,
    expectedTotalMinor:
      BigInt(ACCOUNTS * (FUNDING_MINOR + REVERSIBLE_MINOR)) -
      transfers.feesMinor -
      reversedMinor -
      withdrawals.debitedMinor,
  });
  checks.push(...(await checkReversals(context, plans)));
  const overdrawnByReversal = new Set(
    (
      await context.ledgerDb.pool.query<{ account_id: string }>(
        `SELECT DISTINCT account_id FROM transactions
         WHERE type = 'reversal' AND status = 'completed' AND account_id = ANY($1::uuid[])`,
        [ids],
      )
    ).rows.map((row) => row.account_id),
  );
  const unexplainedReads = [...stats.negativeReadAccounts].filter((id) => !overdrawnByReversal.has(id));
  checks.push(
    {
      name: 'no negative balance shown to a reader but of an account a reversal took there',
      ok: unexplainedReads.length === 0,
      detail: `${stats.balanceReads} balance reads, ${stats.negativeReads} negative, of ${stats.negativeReadAccounts.size} accounts, ${unexplainedReads.length} of them without a reversal`,
      discrepancies: unexplainedReads.length,
    },
    {
      name: 'nothing spent from an account a reversal took below zero',
      ok: reversals.spentWhileOverdrawn === 0,
      detail: `${reversals.overdrawn} account(s) seen below zero after a refund of money already spent; ${reversals.spentWhileOverdrawn} of 10 withdrawals and transfers from there accepted; ${reversals.payouts} withdrawal(s) accepted once paid back, paid out (${withdrawals.count} completed)`,
      discrepancies: reversals.spentWhileOverdrawn,
    },
    {
      name: 'every refund, dispute and payout event answered 200',
      ok: reversals.abandoned === 0,
      detail: `${reversals.events} events, ${reversals.attempts} deliveries (${COPIES_NOTE}), ${reversals.abandoned} given up on`,
      discrepancies: reversals.abandoned,
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
      `${reversals.events} refund and dispute events of ${plans.filter((plan) => plan.steps.length > 0).length} deposits (${COPIES_NOTE}; closes before openings, older refunded totals late)`,
      `${outages.length} × SIGKILL of the ledger process, each restarted at once (down ${(average / 1000).toFixed(1)} s on average until healthy)`,
    ],
    operations: {
      'transfers accepted (202)': stats.transfersAccepted,
      'transfers settled': transfers.count,
      'transfers refused (422, not enough money)': stats.transfersRefused,
      'balance reads': stats.balanceReads,
      'refund and dispute events': reversals.events,
      'refund and dispute deliveries': reversals.attempts,
      'failed attempts (5xx or connection)': stats.failedAttempts,
      ...Object.fromEntries(Object.entries(stats.unexpected).map(([what, n]) => [`unexpected ${what}`, n])),
    },
    faults: outages.length,
    moneyMovedMinor: transfers.amountMinor,
    checks,
    durationMs: Date.now() - started,
  };
}
