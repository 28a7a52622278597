import { randomBytes } from 'node:crypto';
import type Stripe from 'stripe';
import { createHttpClient, type HttpClient } from '../harness/http-client.js';
import type { LedgerDatabase } from '../harness/ledger-db.js';
import { sleep } from '../harness/load.js';
import type { Target } from '../harness/target.js';
import { clientFor, type BenchClient } from '../harness/users.js';
import {
  answersCheck,
  clearingCheck,
  conversionCheck,
  deletionCheck,
  feeCheck,
  latePayoutCheck,
  leftoversCheck,
  partyValueCheck,
  platformLossCheck,
  providerBooksCheck,
  totalValueCheck,
  type Booking,
  type Check,
  type DeletedUser,
  type PercentFees,
  type RefundedDeposit,
  type WithdrawalState,
} from './adversarial-checks.js';
import {
  fund,
  openMember,
  runDeletionRacer,
  runFeeSplitter,
  runFxCycler,
  runHonestClient,
  runLatePayoutAttacker,
  runRefundedLeaver,
  studyRates,
  type Arena,
  type Member,
} from './adversarial-clients.js';
import {
  createParty,
  createSandboxProvider,
  readProviderBooks,
  refundDeletedDeposits,
  startReconciliationDesk,
  type Party,
  type SandboxProvider,
} from './adversarial-provider.js';
import { runExpiredKeyAttack } from './adversarial-keys.js';
import { bookedLosses } from './drill-queries.js';
import { startDrillSystem } from './drill-system.js';
import { checkBooks, waitSettled } from './books.js';
import type { DrillReport } from './drill-context.js';
import { addTo, referenceValuation, type Valuation } from './valuation.js';

/** Percentage fees of the drill's ledger: pieces must pay them too. Withdrawals are free so an account can be emptied. */
export const ADVERSARIAL_FEES: PercentFees = { deposit: '0.5', transfer: '0.25', withdrawal: '0' };
const HOLD_EXPIRY_SECONDS = 3;
const HOLD_SWEEP_INTERVAL_MS = 200;
const CLIENTS = { honest: 6, fx: 4, splitter: 3, late: 3, deletion: 2 };
/** The most deposits of deleted users the platform refunds once the attacks settled. */
const REFUNDED_DEPOSITS = 8;

/** The system the adversarial drill attacks, and what it needs to reach and inspect it. */
export interface AdversarialContext {
  target: Target;
  /** Raw HTTP through the gateway, for the attacks' money requests and deletions (adversarial-clients.ts `call`). */
  gateway: HttpClient;
  ledgerDb: LedgerDatabase;
  /** The sandbox's Stripe API, with its secret key: the drill pays deposits through it and reads its books. */
  stripe: Stripe;
  /** The sandbox's own routes (releasing held payouts), opened by the same key. */
  sandbox: HttpClient;
  sandboxApiKey: string;
  admin: { username: string; password: string };
  /** How long the attack phase lasts, and how long accepted work may then take to finish. */
  seconds: number;
  settleSeconds: number;
  log(message: string): void;
}

export interface AdversarialSystem {
  context: AdversarialContext;
  stop(): Promise<void>;
}

/**
 * A system of its own: fees and a short hold expiry the other drills must not get, an administrator to read
 * GET /admin/reconciliation, and the sandbox as the provider the ledger asks through its Stripe adapter. The sandbox
 * pays no PaymentIntent by itself (the drill pays each, as its payer) and holds every payout until the drill
 * releases it, so the drill decides when each withdrawal's bank answers; it sends every event twice.
 */
export async function startAdversarialSystem(
  options: Pick<AdversarialContext, 'seconds' | 'settleSeconds' | 'log'>,
): Promise<AdversarialSystem> {
  const admin = { username: 'drill_admin', password: `admin-${randomBytes(12).toString('hex')}` };
  const { target, gateway, ledgerDb, stripe, system, stop } = await startDrillSystem('adversarial drill', {
    gatewaySockets: 128,
    serviceEnv: {
      'provider-sandbox': {
        SANDBOX_AUTO_CONFIRM: 'false',
        SANDBOX_HOLD_PAYOUTS: 'true',
        SANDBOX_DUPLICATE_DELIVERY: 'true',
      },
      ledger: {
        FEE_DEPOSIT_PERCENT: ADVERSARIAL_FEES.deposit,
        FEE_TRANSFER_PERCENT: ADVERSARIAL_FEES.transfer,
        FEE_WITHDRAWAL_PERCENT: ADVERSARIAL_FEES.withdrawal,
        HOLD_EXPIRY_SECONDS: String(HOLD_EXPIRY_SECONDS),
        HOLD_SWEEP_INTERVAL_MS: String(HOLD_SWEEP_INTERVAL_MS),
        // Reconciliation runs once, when the drill asks at the end, and then compares every record.
        RECONCILIATION_INTERVAL_SECONDS: '0',
        RECONCILIATION_GRACE_SECONDS: '0',
      },
      identity: {
        TOKEN_TTL_SECONDS: '3600',
        // At most this many logins per address are checked at once: the drill's 18 sign-ups from 127.0.0.1 need not
        // queue behind each other.
        LOGIN_MAX_FAILURES_PER_ADDRESS: '10000',
        ADMIN_USERNAME: admin.username,
        ADMIN_EMAIL: 'drill-admin@example.com',
        ADMIN_PASSWORD: admin.password,
      },
    },
  });
  const sandboxUrl = system.urls['provider-sandbox'];
  const context: AdversarialContext = {
    ...options,
    target,
    admin,
    gateway,
    ledgerDb,
    stripe,
    sandbox: createHttpClient(sandboxUrl, 16),
    sandboxApiKey: system.sandboxApiKey,
  };
  return {
    context,
    async stop() {
      context.sandbox.close();
      await stop();
    },
  };
}

/** What the drill did, kept for its checks (and for re-running them). */
export interface AdversarialRecord {
  valuation: Valuation;
  parties: Party[];
  provider: Pick<SandboxProvider, 'movements' | 'latePayouts' | 'stats'>;
  deleted: DeletedUser[];
  /** Deposits of deleted users the platform refunded at the sandbox afterwards. */
  refunded: RefundedDeposit[];
  breaches: string[];
}

const ATTACKS = ['FX cycling', 'fee splitting', 'late payouts', 'deletion races'] as const;

/** Requests an attack made: every answer tallied under its name (accepted, refused, other) or an explicit attempt. */
const attemptsOf = (operations: Record<string, number>, attack: string) =>
  Object.entries(operations)
    .filter(
      ([what]) =>
        what.startsWith(`${attack}:`) && /(accepted|refused \(422\)|answered \d+|attempted)$/.test(what),
    )
    .reduce((sum, [, n]) => sum + n, 0);

/**
 * The adversarial drill: concurrent attackers mount the money attacks (FX cycling, fee splitting, late
 * payouts after the hold expiry, deletion racing money) alongside honest customers, against a system that
 * charges percentage fees, expires holds after 3 s and moves every payment and payout through the sandbox. Then it
 * proves, against the sandbox's own records, that nobody gained and nothing was lost.
 */
export async function runAdversarialDrill(
  context: AdversarialContext,
): Promise<{ report: DrillReport; record: AdversarialRecord }> {
  const { gateway, target, ledgerDb, seconds, settleSeconds, log } = context;
  const started = Date.now();
  // First, while no other client holds a token the key removal would end.
  const keys = await runExpiredKeyAttack(context);
  const valuation = await referenceValuation('USD');
  const admin = clientFor(target.gatewayUrl, context.admin);
  const desk = startReconciliationDesk(admin, 250);
  const provider = createSandboxProvider(context.stripe, context.sandbox, context.sandboxApiKey);
  const arena: Arena = {
    gatewayUrl: target.gatewayUrl,
    gateway,
    ledgerDb,
    provider,
    desk,
    valuation,
    until: Infinity,
    holdExpiryMs: HOLD_EXPIRY_SECONDS * 1000,
    sweepMs: HOLD_SWEEP_INTERVAL_MS,
    operations: {},
    deleted: [],
    breaches: [],
  };
  const record: AdversarialRecord = {
    valuation,
    parties: [],
    provider,
    deleted: arena.deleted,
    refunded: [],
    breaches: arena.breaches,
  };
  try {
    log(
      `adversarial drill: signing up and funding ${Object.values(CLIENTS).reduce((a: number, b) => a + b, 0)} clients`,
    );
    const honest = createParty('honest customers', 'honest');
    const teams = {
      fx: Array.from({ length: CLIENTS.fx }, (_, i) => createParty(`fx-cycler-${i + 1}`, 'fx')),
      splitter: Array.from({ length: CLIENTS.splitter }, (_, i) =>
        createParty(`fee-splitter-${i + 1}`, 'splitter'),
      ),
      late: Array.from({ length: CLIENTS.late }, (_, i) => createParty(`late-payout-${i + 1}`, 'late')),
      deletion: Array.from({ length: CLIENTS.deletion }, (_, i) =>
        createParty(`deletion-racer-${i + 1}`, 'deletion'),
      ),
    };
    record.parties.push(honest, ...teams.fx, ...teams.splitter, ...teams.late, ...teams.deletion);
    const usd = (cents: number) => BigInt(cents);
    const join = async (
      party: Party,
      currencies: string[],
      funding: (member: Member) => [number, bigint][],
    ) => {
      const member = await openMember(arena, party, currencies);
      await fund(
        arena,
        party,
        member,
        funding(member).map(([index, minor]) => ({
          account: member.accounts[index] as Member['accounts'][number],
          minor,
        })),
      );
      return member;
    };
    const [honestMembers, fxMembers, splitterMembers, lateMembers, sponsors] = await Promise.all([
      Promise.all(
        Array.from({ length: CLIENTS.honest }, () =>
          join(honest, ['USD', 'EUR'], () => [
            [0, usd(100_000)],
            [1, 50_000n],
          ]),
        ),
      ),
      Promise.all(
        teams.fx.map((party) =>
          join(party, ['USD', 'JPY', 'KWD'], () => [
            [0, usd(2_000)],
            [1, 2_000n],
            [2, 5_000n],
          ]),
        ),
      ),
      // Funded in 20 pieces of 0.99 USD: each pays a rounded-up 0.5 % fee (0.01), never none.
      Promise.all(
        teams.splitter.map((party) =>
          join(party, ['USD', 'USD'], () =>
            Array.from({ length: 20 }, () => [0, usd(99)] as [number, bigint]),
          ),
        ),
      ),
      Promise.all(teams.late.map((party) => join(party, ['USD', 'USD'], () => [[0, usd(10_000)]]))),
      Promise.all(teams.deletion.map((party) => join(party, ['USD'], () => [[0, usd(20_000)]]))),
    ]);

    const dust = await studyRates(arena, fxMembers[0]?.client ?? admin, ['USD', 'JPY', 'KWD']);

    arena.until = Date.now() + seconds * 1000;
    log(
      `adversarial drill: ${seconds} s of attacks — ${CLIENTS.fx} FX cyclers, ${CLIENTS.splitter} fee splitters, ` +
        `${CLIENTS.late} late-payout attackers, ${CLIENTS.deletion} deletion racers — among ${CLIENTS.honest} honest customers`,
    );
    await Promise.all([
      ...honestMembers.map((member) =>
        runHonestClient(
          arena,
          honest,
          member,
          honestMembers.filter((m) => m !== member),
        ),
      ),
      ...fxMembers.map((member) => runFxCycler(arena, member, dust)),
      ...splitterMembers.map((member, i) => runFeeSplitter(arena, teams.splitter[i] as Party, member)),
      ...lateMembers.map((member, i) => runLatePayoutAttacker(arena, teams.late[i] as Party, member)),
      ...sponsors.map((sponsor, i) => runDeletionRacer(arena, teams.deletion[i] as Party, sponsor)),
    ]);
    // However the races went, someone paid out in full and gone, whose deposits the platform refunds below.
    await Promise.all(teams.deletion.map((party) => runRefundedLeaver(arena, party)));
    const accountIds = record.parties.flatMap((party) => party.accounts.map((account) => account.id));
    const stillPending = await waitSettled(context, accountIds, settleSeconds * 1000);
    const waiting = await waitProviderDone(context, 30_000);
    record.refunded = await refundDeletedDeposits(
      context.stripe,
      provider.movements,
      arena.deleted,
      REFUNDED_DEPOSITS,
    );
    const unbooked = await waitLossesBooked(context, record.refunded, 30_000);
    log(
      `adversarial drill: settled (${stillPending} pending, ${waiting} provider requests waiting; ` +
        `${record.refunded.length} deposits of deleted users refunded, ${unbooked} not yet booked); checking the books`,
    );
  } finally {
    await desk.stop();
  }

  const checks = await checkAdversarialBooks(context, record);
  checks.push(await reconciliationCheck(context, admin, record));
  checks.push(...keys.checks);
  const moneyMovedMinor = await movedInUsdCents(context, valuation);
  const operations: Record<string, number> = {};
  for (const attack of ATTACKS)
    operations[`${attack}: attack requests`] = attemptsOf(arena.operations, attack);
  for (const what of Object.keys(arena.operations).sort())
    operations[what] = arena.operations[what] as number;
  Object.assign(operations, keys.operations, {
    'deposits paid at the sandbox': provider.stats.paid,
    'payouts released at the sandbox': provider.stats.released,
    'reconciliation list polls (admin)': desk.polls(),
  });
  const faults = ATTACKS.reduce((sum, attack) => sum + attemptsOf(arena.operations, attack), keys.attempts);
  const report: DrillReport = {
    name: 'adversarial: money attacks among honest traffic',
    injected: [
      `${CLIENTS.fx} FX cyclers (dust transfers USD/JPY/KWD round and round), ${CLIENTS.splitter} fee splitters ` +
        `(fees ${ADVERSARIAL_FEES.deposit} % deposit, ${ADVERSARIAL_FEES.transfer} % transfer, paid in pieces), ` +
        `${CLIENTS.late} late-payout attackers (hold expiry ${HOLD_EXPIRY_SECONDS} s; spend and delete while flagged, ` +
        `payouts held at the sandbox and released late, every event sent twice), ${CLIENTS.deletion} deletion racers; ` +
        `${CLIENTS.honest} honest customers alongside`,
      'the ledger asks the provider sandbox for every payment and payout through its Stripe adapter; the drill pays ' +
        'each PaymentIntent and releases each held payout, and reads what crossed the edge from the sandbox’s records',
      keys.injected,
    ],
    operations,
    faults,
    moneyMovedMinor,
    checks,
    durationMs: Date.now() - started,
  };
  return { report, record };
}

/** The value of every completed transaction's amount, in USD cents at the reference rates. */
async function movedInUsdCents(context: AdversarialContext, valuation: Valuation): Promise<bigint> {
  const { rows } = await context.ledgerDb.pool.query<{ currency: string; amount: string }>(
    `SELECT currency, sum(amount) AS amount FROM transactions WHERE status = 'completed' GROUP BY currency`,
  );
  const moved = valuation.ofHoldings(new Map(rows.map((row) => [row.currency, BigInt(row.amount)])));
  return (moved.num * 100n) / moved.den;
}

/**
 * The ledger's own reconciliation, run now over the sandbox's records: every one agrees with the books (a deleted
 * user's deposit refunded since agrees once its platform loss is booked), but those of users deleted since whose
 * transactions left with them (the provider keeps its records): any such `unknown_to_ledger` case is counted apart.
 */
async function reconciliationCheck(
  context: AdversarialContext,
  admin: BenchClient,
  record: AdversarialRecord,
): Promise<Check> {
  const name = "the ledger's reconciliation finds the sandbox's records and the books in agreement";
  const run = await admin.admin.reconciliation.run().catch((error: unknown) => String(error));
  if (typeof run === 'string') return { name, ok: false, detail: `the run failed: ${run}`, discrepancies: 1 };
  const gone = new Set(record.deleted.flatMap((user) => user.accountIds));
  const ofDeleted = new Set(
    [...record.provider.movements.values()]
      .filter(({ movement }) => gone.has(movement.accountId))
      .map(({ movement }) => movement.id),
  );
  const { rows: cases } = await context.ledgerDb.pool.query<{ kind: string; transaction_id: string | null }>(
    `SELECT kind, transaction_id FROM reconciliation_cases WHERE status = 'open'`,
  );
  const historyGone = (found: (typeof cases)[number]) =>
    found.kind === 'unknown_to_ledger' &&
    found.transaction_id !== null &&
    ofDeleted.has(found.transaction_id);
  const unexplained = cases.filter((found) => !historyGone(found));
  const kinds = [...new Set(unexplained.map((found) => found.kind))].join(', ');
  return {
    name,
    ok: unexplained.length === 0,
    detail:
      `${run.checked} records of the sandbox compared: ${run.agreed} agree, ${run.unsettled} unsettled; ` +
      `${cases.length - unexplained.length} unknown to the ledger as their users were deleted (their history left ` +
      `with them), ${unexplained.length} other mismatches${kinds ? ` (${kinds})` : ''}`,
    discrepancies: unexplained.length,
  };
}

/** Waits until the ledger booked a loss for each refund given; resolves with how many deposits are still short. */
async function waitLossesBooked(
  context: Pick<AdversarialContext, 'ledgerDb'>,
  refunded: readonly RefundedDeposit[],
  timeoutMs: number,
) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const { rows } = await context.ledgerDb.pool.query<{ deposit_id: string; taken: string }>(
      `SELECT deposit_id, sum(amount) AS taken FROM platform_losses WHERE deposit_id = ANY($1::uuid[])
       GROUP BY deposit_id`,
      [refunded.map((deposit) => deposit.transactionId)],
    );
    const taken = new Map(rows.map((row) => [row.deposit_id, BigInt(row.taken)]));
    const short = refunded.filter((deposit) => taken.get(deposit.transactionId) !== deposit.refunded).length;
    if (short === 0 || Date.now() > deadline) return short;
    await sleep(200);
  }
}

/** Waits until the ledger has nothing left to ask the sandbox (a failed payout's transfer taken back); how many wait. */
async function waitProviderDone(context: Pick<AdversarialContext, 'ledgerDb'>, timeoutMs: number) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const { rows } = await context.ledgerDb.pool.query<{ count: string }>(
      `SELECT count(*) FROM provider_payments WHERE next_attempt_at IS NOT NULL`,
    );
    const waiting = Number(rows[0]?.count ?? 0);
    if (waiting === 0 || Date.now() > deadline) return waiting;
    await sleep(200);
  }
}

/**
 * Everything the drill checks once the attacks settled: the ledger's books (checkBooks), then, against what the
 * sandbox's own records say entered and left for each party, that value was neither created nor lost at the
 * reference rates, that the provider's books equal the ledger's, and that each attack left the trace it must.
 */
export async function checkAdversarialBooks(
  context: Pick<AdversarialContext, 'target' | 'ledgerDb' | 'stripe'>,
  record: AdversarialRecord,
): Promise<Check[]> {
  const { valuation, parties, provider, deleted } = record;
  const pool = context.ledgerDb.pool;
  const accountIds = parties.flatMap((party) => party.accounts.map((account) => account.id));
  const checks = await checkBooks(context, { accountIds });
  const books = await readProviderBooks(context.stripe, parties, provider.movements);

  const { rows: accounts } = await pool.query<{
    id: string;
    kind: string;
    system_code: string | null;
    currency: string;
    balance: string;
  }>(`SELECT id, kind, system_code, currency, balance FROM accounts`);
  const balanceOf = new Map(accounts.map((account) => [account.id, BigInt(account.balance)]));
  const usersHold = new Map<string, bigint>();
  const system = (code: string) => {
    const holdings = new Map<string, bigint>();
    for (const account of accounts) {
      if (account.system_code === code) addTo(holdings, account.currency, BigInt(account.balance));
    }
    return holdings;
  };
  for (const account of accounts) {
    if (account.kind === 'user') addTo(usersHold, account.currency, BigInt(account.balance));
  }
  const partyMoney = parties.map((party) => {
    const held = new Map<string, bigint>();
    for (const account of party.accounts) {
      const balance = balanceOf.get(account.id);
      if (balance !== undefined) addTo(held, account.currency, balance);
    }
    const crossed = books.parties.get(party);
    return {
      name: party.name,
      entered: crossed?.entered ?? new Map<string, bigint>(),
      exited: crossed?.exited ?? new Map<string, bigint>(),
      refunded: crossed?.refunded ?? new Map<string, bigint>(),
      held,
    };
  });
  const clearing = system('provider_clearing');
  // Given back by the provider for deleted users' deposits: the platform's loss.
  const refundedTotal = new Map<string, bigint>();
  for (const deposit of record.refunded) addTo(refundedTotal, deposit.currency, deposit.refunded);
  const losses = await bookedLosses(context);
  checks.push(
    clearingCheck(valuation, partyMoney, clearing),
    providerBooksCheck(valuation, books.platform, clearing),
    leftoversCheck(valuation, books),
    partyValueCheck(valuation, partyMoney),
    totalValueCheck(valuation, partyMoney, usersHold, refundedTotal),
    platformLossCheck(valuation, record.refunded, losses, system('platform_loss')),
  );

  const { rows: completed } = await pool.query<{
    id: string;
    type: 'deposit' | 'withdrawal' | 'transfer';
    amount: string;
    currency: string;
    fee: string;
    converted_amount: string | null;
    converted_currency: string | null;
  }>(
    `SELECT id, type, amount, currency, fee, converted_amount, converted_currency
     FROM transactions WHERE status = 'completed'`,
  );
  checks.push(
    conversionCheck(
      valuation,
      completed
        .filter((t) => t.converted_amount !== null && t.converted_currency !== null)
        .map((t) => ({
          id: t.id,
          amount: BigInt(t.amount),
          currency: t.currency,
          convertedAmount: BigInt(t.converted_amount as string),
          convertedCurrency: t.converted_currency as string,
        })),
    ),
    feeCheck(
      ADVERSARIAL_FEES,
      completed.map((t) => ({ type: t.type, amount: BigInt(t.amount), fee: BigInt(t.fee) })),
    ),
  );

  const { rows: booked } = await pool.query<{ transaction_id: string; n: string; total: string }>(
    `SELECT e.transaction_id, count(*) AS n, sum(e.amount) AS total
     FROM entries e JOIN unnest($1::uuid[], $2::uuid[]) AS a(tx, account)
       ON e.transaction_id = a.tx AND e.account_id = a.account
     GROUP BY e.transaction_id`,
    [books.answers.map((a) => a.transactionId), books.answers.map((a) => a.accountId)],
  );
  const bookings = new Map<string, Booking>(
    booked.map((row) => [row.transaction_id, { count: Number(row.n), sum: BigInt(row.total) }]),
  );
  checks.push(answersCheck(books.answers, bookings));

  const { rows: late } = await pool.query<{
    id: string;
    status: string;
    flagged_at: Date | null;
    n: string;
    total: string | null;
  }>(
    `SELECT t.id, t.status, t.reconciliation_required_at AS flagged_at, count(e.id) AS n, sum(e.amount) AS total
     FROM transactions t LEFT JOIN entries e ON e.transaction_id = t.id AND e.account_id = t.account_id
     WHERE t.id = ANY($1::uuid[]) GROUP BY t.id`,
    [provider.latePayouts.map((payout) => payout.id)],
  );
  const states = new Map<string, WithdrawalState>(
    late.map((row) => [
      row.id,
      {
        status: row.status,
        flaggedAt: row.flagged_at?.getTime() ?? null,
        booking: { count: Number(row.n), sum: BigInt(row.total ?? 0) },
      },
    ]),
  );
  checks.push(latePayoutCheck(provider.latePayouts, states));

  const { rows: released } = await pool.query<{ count: string }>(
    `SELECT count(*) FROM transactions WHERE id = ANY($1::uuid[]) AND status = 'canceled'`,
    [[...books.handedOut]],
  );
  const releasedCount = Number(released[0]?.count ?? 0);
  checks.push({
    name: 'no payout handed to the provider released by a timer',
    ok: releasedCount === 0,
    detail: `${books.handedOut.size} withdrawals with a payout at the sandbox, ${releasedCount} canceled`,
    discrepancies: releasedCount,
  });

  const deletedAccounts = deleted.flatMap((user) => user.accountIds);
  const [{ rows: journal }, { rows: remaining }] = await Promise.all([
    pool.query<{ account_id: string; total: string }>(
      `SELECT account_id, sum(amount) AS total FROM entries WHERE account_id = ANY($1::uuid[]) GROUP BY account_id`,
      [deletedAccounts],
    ),
    pool.query<{ id: string }>(`SELECT id FROM accounts WHERE id = ANY($1::uuid[])`, [deletedAccounts]),
  ]);
  checks.push(
    deletionCheck(
      deleted,
      new Map(journal.map((row) => [row.account_id, BigInt(row.total)])),
      new Set(remaining.map((row) => row.id)),
    ),
  );

  const unclaimed = [...system('unclaimed_funds').values()].filter((balance) => balance !== 0n).length;
  checks.push({
    name: 'unclaimed funds stay 0',
    ok: unclaimed === 0,
    detail: `${unclaimed} currencies with money in unclaimed funds`,
    discrepancies: unclaimed,
  });
  checks.push({
    name: 'no attack got through (held money spent, user deleted with a payout outstanding, hold lost)',
    ok: record.breaches.length === 0,
    detail: record.breaches.length === 0 ? 'none' : record.breaches.slice(0, 5).join('; '),
    discrepancies: record.breaches.length,
  });
  const { paid, unpaid, released: freed, unreleased } = provider.stats;
  checks.push({
    name: 'every deposit paid and every payout released at the sandbox',
    ok: unpaid + unreleased === 0,
    detail: `${paid} PaymentIntents paid, ${unpaid} not; ${freed} held payouts released, ${unreleased} not`,
    discrepancies: unpaid + unreleased,
  });
  return checks;
}
