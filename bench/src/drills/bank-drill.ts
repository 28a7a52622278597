import pg from 'pg';
import type Stripe from 'stripe';
import type { HttpClient } from '../harness/http-client.js';
import { sleep } from '../harness/load.js';
import { BENCH_APPLICATION, type LedgerDatabase } from '../harness/ledger-db.js';
import type { Target } from '../harness/target.js';
import { openAccounts, payDeposits, requestDeposits, runBankClients } from './bank-clients.js';
import { eventArrivals } from './bank-event-order.js';
import {
  checkReversals,
  linkPayoutAccounts,
  planReversals,
  reversalsNotAsPlanned,
  runReversals,
  type ReversalPlan,
} from './bank-reversals.js';
import { startDrillSystem } from './drill-system.js';
import { checkBooks, formatUsd, waitSettled } from './books.js';
import { completedTransferTotals, completedWithdrawalTotals } from './drill-queries.js';
import { PROVIDER_CALL_LEASE_MS, type DrillFaults, type DrillReport } from './drill-context.js';

const ACCOUNTS = 10;
const CLIENTS = 20;
const FUNDING_MINOR = 100_000; // 1,000.00 USD each
const REVERSIBLE_MINOR = 20_000; // 200.00 USD each, which the provider refunds or disputes in most accounts
/** How long the sandbox holds each event at most, sending it alongside the others: out of order. */
const REORDER_WITHIN_MS = 300;

export interface BankDrillContext {
  target: Target;
  system: DrillFaults;
  /** Raw HTTP through the gateway, for the clients' transfers under faults (runBankClients, runReversals). */
  gateway: HttpClient;
  ledgerDb: LedgerDatabase;
  /** webhook-ingest's database: how the sandbox's events arrived. */
  webhookDb: pg.Pool;
  /** The sandbox's Stripe API, with its secret key: payers pay through it, the platform refunds, disputes end. */
  stripe: Stripe;
  seconds: number;
  settleSeconds: number;
  log(message: string): void;
}

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
 * A system of its own in which the ledger asks the provider sandbox for every payment and payout, as it would ask
 * Stripe. The sandbox pays nothing by itself (the drill's payers pay, choosing the card) and sends every event
 * twice, each copy held up to REORDER_WITHIN_MS and sent alongside the others, so events arrive out of order.
 */
export async function startBankDrillSystem(
  options: Pick<BankDrillContext, 'seconds' | 'settleSeconds' | 'log'>,
): Promise<{ context: BankDrillContext; stop(): Promise<void> }> {
  const { target, gateway, ledgerDb, stripe, system, stop } = await startDrillSystem('bank drill', {
    gatewaySockets: 128,
    serviceEnv: {
      'provider-sandbox': {
        SANDBOX_AUTO_CONFIRM: 'false',
        SANDBOX_DELAY_MS: '200',
        SANDBOX_DUPLICATE_DELIVERY: 'true',
        SANDBOX_REORDER_EVENTS_MS: String(REORDER_WITHIN_MS),
      },
      identity: { TOKEN_TTL_SECONDS: '3600' },
    },
  });
  const webhookDb = new pg.Pool({
    connectionString: target.webhookDatabaseUrl,
    max: 2,
    application_name: BENCH_APPLICATION,
  });
  webhookDb.on('error', () => undefined);
  const context: BankDrillContext = {
    ...options,
    target,
    system,
    gateway,
    ledgerDb,
    webhookDb,
    stripe,
  };
  return {
    context,
    async stop() {
      await context.webhookDb.end();
      await stop();
    },
  };
}

/**
 * The bank drill: 20 clients move money among 10 accounts and read balances while the ledger process is killed
 * with SIGKILL and restarted every `killEverySeconds`. Every deposit is a PaymentIntent paid at the sandbox, which
 * refunds and disputes most of the second deposits meanwhile, its events each sent twice and out of order.
 */
export async function runBankDrill(
  context: BankDrillContext,
  killEverySeconds: number,
): Promise<DrillReport> {
  const { system, seconds, settleSeconds, log } = context;
  const started = Date.now();
  log(`bank drill: opening ${ACCOUNTS} accounts, each funded by two deposits paid at the sandbox`);
  const accounts = await openAccounts(context, ACCOUNTS);
  const ids = accounts.map((account) => account.accountId);
  const [funding, reversible] = await Promise.all([
    requestDeposits(accounts, FUNDING_MINOR),
    requestDeposits(accounts, REVERSIBLE_MINOR),
  ]);
  const plans = planReversals(reversible);
  await linkPayoutAccounts(plans);
  const paidBefore = [
    ...funding.map((deposit) => ({ deposit, paymentMethod: 'pm_card_visa' as const })),
    ...plans.flatMap(({ deposit, paidBefore: paymentMethod }) =>
      paymentMethod ? [{ deposit, paymentMethod }] : [],
    ),
  ];
  await payDeposits(context, paidBefore);
  const capturedBeforeMinor = paidBefore.reduce((sum, { deposit }) => sum + BigInt(deposit.amountMinor), 0n);

  const until = Date.now() + seconds * 1000;
  log(
    `bank drill: ${CLIENTS} clients for ${seconds} s; SIGKILL of the ledger every ${killEverySeconds} s; ` +
      `refunds and disputes of ${plans.filter((plan) => plan.steps.length > 0).length} deposits at the sandbox`,
  );
  const [stats, outages, reversals] = await Promise.all([
    runBankClients(context, accounts, CLIENTS, until),
    repeatFault(killEverySeconds * 1000, until, async () => {
      await system.kill('ledger', 'SIGKILL');
      await system.restart('ledger');
    }),
    runReversals(context, plans, until),
  ]);

  const quiet = await settle(context, ids, plans, settleSeconds);
  const stillPending = await waitSettled(context, ids, 0);
  log(`bank drill: settled (${stillPending} pending, quiet: ${quiet}); checking the books`);
  const transfers = await completedTransferTotals(context, ids);
  const withdrawals = await completedWithdrawalTotals(context, ids);
  const checks = await checkBooks(context, {
    accountIds: ids,
    expectedTotalMinor:
      capturedBeforeMinor +
      reversals.capturedMinor -
      reversals.takenBackMinor -
      transfers.feesMinor -
      withdrawals.debitedMinor,
  });
  checks.push(...(await checkReversals(context, plans)));
  checks.push(
    ...(await providerBooksChecks(context, capturedBeforeMinor + reversals.capturedMinor, reversals)),
  );
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
  const arrivals = await eventArrivals(context);
  const { rows: unpublished } = await context.webhookDb.query<{ count: string }>(
    `SELECT count(*) FROM webhook_events WHERE published_at IS NULL AND outcome <> 'ignored'`,
  );
  const leftUnpublished = Number(unpublished[0]?.count ?? 0);
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
      detail: `${reversals.overdrawn} account(s) seen below zero after a refund of money already spent; ${reversals.spentWhileOverdrawn} of 10 withdrawals and transfers from there accepted; ${reversals.payouts} withdrawal(s) accepted once paid back, paid out through the sandbox (${withdrawals.count} completed)`,
      discrepancies: reversals.spentWhileOverdrawn,
    },
    {
      name: 'every event from the sandbox recorded and published',
      ok: leftUnpublished === 0,
      detail: `${arrivals.events} events, ${arrivals.deliveries} deliveries (${arrivals.duplicates} answered as duplicates), ${leftUnpublished} left unpublished`,
      discrepancies: leftUnpublished,
    },
    {
      name: 'every payment, refund and dispute call to the sandbox answered',
      ok: reversals.failedCalls.length === 0,
      detail: `${reversals.failedCalls.length} failed${reversals.failedCalls.length ? `: ${reversals.failedCalls.slice(0, 3).join('; ')}` : ''}`,
      discrepancies: reversals.failedCalls.length,
    },
    {
      name: 'every transfer a client sent has a known outcome',
      ok: stats.unresolved === 0,
      detail: `${stats.unresolved} given up on; ${stats.retries} retried with their Idempotency-Key`,
      discrepancies: stats.unresolved,
    },
  );
  const average = outages.length ? outages.reduce((a, b) => a + b, 0) / outages.length : 0;
  const lateKinds = Object.entries(arrivals.lateKinds)
    .map(([kind, count]) => `${kind} ×${count}`)
    .join(', ');
  return {
    name: 'bank: SIGKILL the ledger every 10 s',
    injected: [
      `${outages.length} × SIGKILL of the ledger process, each restarted at once (down ${(average / 1000).toFixed(1)} s on average until healthy)`,
      `at the sandbox: ${reversals.refunds} refunds and ${reversals.disputesLost + reversals.disputesWon} disputes ` +
        `(${reversals.disputesLost} lost, ${reversals.disputesWon} won) of ${plans.filter((plan) => plan.steps.length > 0).length} deposits, ` +
        `${reversals.payments} of them paid during the drill`,
      `every sandbox event sent twice (SANDBOX_DUPLICATE_DELIVERY) and held up to ${REORDER_WITHIN_MS} ms at random (SANDBOX_REORDER_EVENTS_MS): ` +
        `${arrivals.late} of ${arrivals.events} arrived after a later one of the same payment${lateKinds ? ` (${lateKinds})` : ''}`,
    ],
    operations: {
      'transfers accepted (202)': stats.transfersAccepted,
      'transfers settled': transfers.count,
      'transfers refused (422, not enough money)': stats.transfersRefused,
      'balance reads': stats.balanceReads,
      'payments at the sandbox': paidBefore.length + reversals.payments,
      'refunds at the sandbox': reversals.refunds,
      'disputes at the sandbox': reversals.disputesLost + reversals.disputesWon,
      'sandbox events': arrivals.events,
      'sandbox deliveries': arrivals.deliveries,
      'failed attempts (5xx or connection)': stats.failedAttempts,
      ...Object.fromEntries(Object.entries(stats.unexpected).map(([what, n]) => [`unexpected ${what}`, n])),
    },
    faults: outages.length,
    moneyMovedMinor: transfers.amountMinor,
    checks,
    durationMs: Date.now() - started,
  };
}

/**
 * Waits until nothing on the drill's accounts is pending, nothing waits for the provider, webhook-ingest has
 * published every event it recorded, every plan is reversed as planned, and none of that changed for two polls a
 * second apart (an event on its way or a retried one would change it); or until the settle period is over.
 * Resolves with whether it got there.
 */
async function settle(
  context: BankDrillContext,
  accountIds: readonly string[],
  plans: readonly ReversalPlan[],
  settleSeconds: number,
): Promise<boolean> {
  // A payout call the SIGKILL cut short is made again only once its lease is over.
  const deadline = Date.now() + settleSeconds * 1000 + PROVIDER_CALL_LEASE_MS;
  const snapshot = async () => {
    const { rows: ledger } = await context.ledgerDb.pool.query<{
      pending: string;
      waiting: string;
      reversals: string;
    }>(
      `SELECT (SELECT count(*) FROM transactions WHERE status = 'pending' AND account_id = ANY($1::uuid[])) AS pending,
              (SELECT count(*) FROM provider_payments WHERE next_attempt_at IS NOT NULL) AS waiting,
              (SELECT count(*) FROM transactions WHERE type = 'reversal') AS reversals`,
      [accountIds],
    );
    const { rows: ingest } = await context.webhookDb.query<{ recorded: string; unpublished: string }>(
      `SELECT count(*) AS recorded,
              count(*) FILTER (WHERE published_at IS NULL AND outcome <> 'ignored') AS unpublished
       FROM webhook_events`,
    );
    const busy =
      Number(ledger[0]?.pending) + Number(ledger[0]?.waiting) + Number(ingest[0]?.unpublished) > 0 ||
      (await reversalsNotAsPlanned(context, plans)) > 0;
    return { busy, state: `${ledger[0]?.reversals}/${ingest[0]?.recorded}` };
  };
  let previous = '';
  let still = 0;
  while (Date.now() < deadline) {
    const now = await snapshot().catch(() => ({ busy: true, state: '' }));
    still = !now.busy && now.state === previous ? still + 1 : 0;
    if (still >= 2) return true;
    previous = now.state;
    await sleep(1000);
  }
  return false;
}

/**
 * The sandbox's own books against the ledger's and the drill's: what the platform holds at the provider equals
 * the ledger's provider-clearing account, and what the drill's payers paid less what the sandbox took back (refunds,
 * lost disputes) and transferred out to connected accounts for payouts.
 */
async function providerBooksChecks(
  context: BankDrillContext,
  capturedMinor: bigint,
  reversals: { takenBackMinor: bigint },
): Promise<DrillReport['checks']> {
  const { stripe } = context;
  const providerHolds = BigInt(
    (await stripe.balance.retrieve()).available.find((b) => b.currency === 'usd')?.amount ?? 0,
  );
  const { rows: clearing } = await context.ledgerDb.pool.query<{ balance: string }>(
    `SELECT balance FROM accounts WHERE kind = 'system' AND system_code = 'provider_clearing' AND currency = 'USD'`,
  );
  const ledgerSays = -BigInt(clearing[0]?.balance ?? 0);
  let transferredOut = 0n;
  for await (const transfer of stripe.transfers.list({ limit: 100 })) {
    transferredOut += BigInt(transfer.amount - transfer.amount_reversed);
  }
  const expected = capturedMinor - reversals.takenBackMinor - transferredOut;
  return [
    {
      name: "the provider's books = the ledger's provider-clearing account",
      ok: providerHolds === ledgerSays,
      detail: `the sandbox holds ${formatUsd(providerHolds)} USD for the platform; the ledger says ${formatUsd(ledgerSays)}`,
      discrepancies: providerHolds === ledgerSays ? 0 : 1,
    },
    {
      name: 'the provider holds what the payers paid, less what it took back and paid out',
      ok: providerHolds === expected,
      detail:
        `${formatUsd(capturedMinor)} paid at the sandbox − ${formatUsd(reversals.takenBackMinor)} refunded or lost in ` +
        `disputes − ${formatUsd(transferredOut)} transferred out for payouts = ${formatUsd(expected)} USD; it holds ${formatUsd(providerHolds)}`,
      discrepancies: providerHolds === expected ? 0 : 1,
    },
  ];
}
