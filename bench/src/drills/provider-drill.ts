import { randomUUID } from 'node:crypto';
import type Stripe from 'stripe';
import { ConflictError } from '@payments/client';
import type { HttpClient } from '../harness/http-client.js';
import { createWorkPool, sleep } from '../harness/load.js';
import type { LedgerDatabase } from '../harness/ledger-db.js';
import { postUntilAnswered } from '../harness/post-until-answered.js';
import type { Target } from '../harness/target.js';
import { clientFor, signUp, type BenchClient } from '../harness/users.js';
import { platformLossCheck, type RefundedDeposit } from './adversarial-checks.js';
import { refundInParts } from './adversarial-provider.js';
import { repeatFault } from './bank-drill.js';
import { bookedLosses } from './drill-queries.js';
import { startDrillSystem } from './drill-system.js';
import { checkBooks, formatUsd, waitSettled } from './books.js';
import { PROVIDER_CALL_LEASE_MS, type DrillFaults, type DrillReport } from './drill-context.js';
import { referenceValuation } from './valuation.js';

const USERS = 8;
const FUNDING_MINOR = 50_000; // 500.00 USD each, paid at the sandbox
/** Payers paid out in full and deleted before the load, whose deposit the platform then refunds in two parts. */
const LEAVERS = 2;
const LEAVER_DEPOSIT = 20; // USD
/** One request in this many is for an amount ending in 13: the sandbox declines the card, or its bank the payout. */
const DECLINED_ONE_IN = 6;
/** The share of its money-moving events the sandbox never sends: reconciliation finds them in its records. */
const FORGET_EVENTS = 0.05;
/** Cases about money the books never took in: an operator gives it back at the provider rather than booking it. */
const NEVER_TAKEN_IN = ['duplicate_capture', 'duplicate_transfer', 'foreign_object', 'unknown_to_ledger'];
/** Reconciliation cases the drill's operator decides at once. */
const DECIDING_AT_ONCE = 8;
/** The types whose loss always leaves the books short of the provider's records until reconciliation. */
const ALWAYS_FOUND = ['payment_intent.succeeded', 'payout.paid', 'payout.failed'];
const ADMIN = { username: 'provider_drill_admin', password: `drill-${randomUUID()}` };

export interface ProviderDrillContext {
  target: Target;
  system: DrillFaults;
  /** Raw HTTP through the gateway, for the payers' money requests under faults (see `request`). */
  gateway: HttpClient;
  ledgerDb: LedgerDatabase;
  /** The sandbox's Stripe API, with its secret key: the drill refunds through it and reads its books. */
  stripe: Stripe;
  /** Where the sandbox lists the events it never sent. */
  sandboxUrl: string;
  sandboxApiKey: string;
  seconds: number;
  settleSeconds: number;
  log(message: string): void;
}

interface Payer {
  accountId: string;
  /** The payer's client, for set-up and reads. */
  client: BenchClient;
  /** The payer's bearer token, for the raw money requests under faults. */
  token: string;
}

/**
 * A system of its own in which the ledger asks the provider sandbox for every payment and payout, as it would ask
 * Stripe, and the sandbox pays each PaymentIntent soon (100 ms) and answers each payout as soon. The sandbox never
 * sends a share of its money-moving events (FORGET_EVENTS); the ledger reconciles on demand, with no grace.
 */
export async function startProviderDrillSystem(
  options: Pick<ProviderDrillContext, 'seconds' | 'settleSeconds' | 'log'>,
): Promise<{ context: ProviderDrillContext; stop(): Promise<void> }> {
  const { target, gateway, ledgerDb, stripe, system, stop } = await startDrillSystem('provider drill', {
    gatewaySockets: 64,
    serviceEnv: {
      'provider-sandbox': { SANDBOX_DELAY_MS: '100', SANDBOX_FORGET_EVENTS: String(FORGET_EVENTS) },
      ledger: { RECONCILIATION_INTERVAL_SECONDS: '0', RECONCILIATION_GRACE_SECONDS: '0' },
      identity: {
        TOKEN_TTL_SECONDS: '3600',
        ADMIN_USERNAME: ADMIN.username,
        ADMIN_EMAIL: 'provider-drill-admin@example.com',
        ADMIN_PASSWORD: ADMIN.password,
      },
    },
  });
  const context: ProviderDrillContext = {
    ...options,
    target,
    system,
    gateway,
    ledgerDb,
    stripe,
    sandboxUrl: system.urls['provider-sandbox'],
    sandboxApiKey: system.sandboxApiKey,
  };
  return {
    context,
    stop,
  };
}

/** A cent amount between 1.00 and 50.00 USD, now and then one the sandbox refuses (minor units ending in 13). */
function amountMinor(): number {
  const base = 100 + Math.floor(Math.random() * 4_900);
  if (Math.random() < 1 / DECLINED_ONE_IN) return base - (base % 100) + 13;
  return base % 100 === 13 ? base + 1 : base;
}

/**
 * The provider drill: payers deposit (paid at the sandbox), withdraw (paid out through their connected accounts)
 * and transfer, the platform refunds part of some deposits at the sandbox, and the ledger is killed with SIGKILL
 * and restarted every `killEverySeconds`. Every request is retried with its Idempotency-Key until it has an answer.
 * Then the books: the ledger's audit, every transaction ended, and the sandbox's own books (captured, refunded,
 * transferred out, taken back) equal to the ledger's: its provider-clearing account and the payers' balances.
 */
export async function runProviderDrill(
  context: ProviderDrillContext,
  killEverySeconds: number,
): Promise<DrillReport> {
  const { gateway, target, stripe, system, seconds, settleSeconds, log } = context;
  const started = Date.now();
  const stats = {
    deposits: 0,
    withdrawals: 0,
    transfers: 0,
    refused: 0,
    refunds: 0,
    disputesLost: 0,
    disputesWon: 0,
    retries: 0,
    unresolved: 0,
  };
  const unexpected: Record<string, number> = {};

  /** A money request, retried with its Idempotency-Key through outages until it has an answer. */
  const request = async (payer: Payer, path: string, body: object, until: number) => {
    const answer = await postUntilAnswered(gateway, {
      path,
      body,
      token: payer.token,
      giveUpAt: until + 30_000,
      onRetry: () => {
        stats.retries += 1;
      },
    });
    if (!answer) stats.unresolved += 1;
    return answer;
  };

  const admin = clientFor(target.gatewayUrl, ADMIN).admin;
  const reconciled = { runs: 0, booked: 0, givenBack: 0, unexplained: new Set<string>() };
  /** The reconciliation job as the ledger's database holds it: a run under way, and what the last one found. */
  const runState = async () => {
    const { rows } = await context.ledgerDb.pool.query<{ running: boolean; last: string | null }>(
      `SELECT coalesce(running_until > now(), false) AS running, last_run::text AS last FROM reconciliation_state`,
    );
    return rows[0] ?? { running: false, last: null };
  };
  /**
   * Asks for a run and waits until one asked for then has ended; false when none did within a minute (the ledger
   * down). A run over tens of thousands of provider records outlasts the gateway's UPSTREAM_TIMEOUT_MS, whose 503
   * leaves it running: its end is read in the ledger's database, as an operator would read the cases it opened.
   */
  const runReconciliation = async () => {
    const giveUp = Date.now() + 60_000;
    while (Date.now() < giveUp) {
      const before = await runState();
      if (before.running) {
        // Another ask's run (one whose answer was a 503): it started before this ask, so wait for it, then ask.
        await sleep(250);
        continue;
      }
      const asked = await admin.reconciliation.run({ maxRetries: 0 }).then(
        () => 'answered' as const,
        (error: unknown) => (error instanceof ConflictError ? ('busy' as const) : ('unanswered' as const)),
      );
      if (asked === 'answered') return true;
      if (asked === 'busy') continue;
      for (; Date.now() < giveUp; await sleep(250)) {
        const now = await runState();
        if (!now.running && now.last !== before.last) return true;
      }
    }
    return false;
  };
  /**
   * Reconciles now and decides every open case as an operator would: money the books never took in (a second
   * capture, an object naming a transaction that never asked for it) is given back at the provider; anything else
   * is booked as the provider's records say. Answers how many cases were open, or null when no run ended.
   */
  const reconcileAll = async (): Promise<number | null> => {
    if (!(await runReconciliation())) return null;
    reconciled.runs += 1;
    const { rows } = await context.ledgerDb.pool.query<{
      id: string;
      kind: string;
      provider_reference: string;
    }>(`SELECT id, kind, provider_reference FROM reconciliation_cases WHERE status = 'open'`);
    // Thousands at a time under load (with no grace, every event still on its way is a case): a few at once.
    const decisions = createWorkPool<(typeof rows)[number]>(
      DECIDING_AT_ONCE,
      async ({ id, kind, provider_reference: reference }) => {
        const giveBack = NEVER_TAKEN_IN.includes(kind);
        try {
          await admin.reconciliation.resolveCase(id, {
            decision: giveBack ? (reference.startsWith('pi_') ? 'refund' : 'reverse') : 'book',
            reason: giveBack
              ? "the drill's operator: money the books never took in goes back"
              : "the drill's operator: as the provider's records say",
          });
          reconciled[giveBack ? 'givenBack' : 'booked'] += 1;
        } catch (error) {
          if (error instanceof ConflictError) reconciled.unexplained.add(id);
        }
      },
    );
    for (const row of rows) decisions.push(row);
    await decisions.drained();
    return rows.length;
  };
  let reconciledAt = 0;
  /** Reconciles at most every few seconds (a run reads every record since the lookback). */
  const reconcileNowAndThen = async () => {
    if (Date.now() - reconciledAt < 3_000) return;
    await reconcileAll();
    reconciledAt = Date.now();
  };

  log(
    `provider drill: ${USERS} payers, each funded with ${formatUsd(BigInt(FUNDING_MINOR))} USD paid at the sandbox`,
  );
  const payers: Payer[] = await Promise.all(
    Array.from({ length: USERS }, async () => {
      const { client, token } = await signUp(target.gatewayUrl, 'provider');
      const account = await client.accounts.open({ currency: 'USD' });
      await client.payoutAccount.link();
      return { accountId: account.id, client, token };
    }),
  );
  const funding = await Promise.all(
    payers.map(({ client, accountId }) =>
      client.money.deposit(accountId, { amount: FUNDING_MINOR / 100, currency: 'USD' }),
    ),
  );
  const fundingIds = funding.map((deposit) => deposit.id);
  const fundingDeadline = Date.now() + 60_000;
  reconciledAt = Date.now();
  while ((await context.ledgerDb.completedAmong(fundingIds)).length < fundingIds.length) {
    if (Date.now() > fundingDeadline)
      throw new Error('the sandbox did not pay the funding deposits within 60 s');
    await sleep(100);
    // A payment whose event the sandbox never sent is credited by reconciliation.
    await reconcileNowAndThen();
  }

  /** Waits until the transactions completed, reconciling now and then for events the sandbox never sent. */
  const completed = async (transactionIds: string[], what: string) => {
    const deadline = Date.now() + 60_000;
    while ((await context.ledgerDb.completedAmong(transactionIds)).length < transactionIds.length) {
      if (Date.now() > deadline) throw new Error(`${what} not completed within 60 s`);
      await sleep(100);
      await reconcileNowAndThen();
    }
  };

  // Leavers: paid in and out through the sandbox, then deleted; the platform refunds their deposits afterwards, in
  // two parts. Nobody is left to take the money back from: the ledger books each as a platform loss (an event the
  // sandbox forgets is found by reconciliation and booked by the admin).
  log(
    `provider drill: ${LEAVERS} payers paid out in full, deleted, and their deposits refunded at the sandbox`,
  );
  const leavers = await Promise.all(
    Array.from({ length: LEAVERS }, async () => {
      const { client, userId } = await signUp(target.gatewayUrl, 'leaver');
      const account = await client.accounts.open({ currency: 'USD' });
      await client.payoutAccount.link();
      const deposit = await client.money.deposit(account.id, { amount: LEAVER_DEPOSIT, currency: 'USD' });
      await completed([deposit.id], "a leaver's deposit");
      const payout = await client.money.withdraw(account.id, { amount: LEAVER_DEPOSIT, currency: 'USD' });
      await completed([payout.id], "a leaver's payout");
      const reference = (await client.transactions.get(deposit.id)).provider_payment?.reference;
      await client.users.delete(userId, { confirm: true });
      if (!reference) throw new Error(`deposit ${deposit.id} has no PaymentIntent`);
      return { id: deposit.id, reference };
    }),
  );
  const refundedLeavers: RefundedDeposit[] = [];
  for (const leaver of leavers) {
    const parts = [(LEAVER_DEPOSIT * 100) / 4, undefined];
    refundedLeavers.push(
      await refundInParts(stripe, leaver.reference, { transactionId: leaver.id, currency: 'USD' }, parts),
    );
  }
  const lostOnLeavers = async () => {
    const { rows } = await context.ledgerDb.pool.query<{ taken: string | null }>(
      `SELECT sum(amount) AS taken FROM platform_losses WHERE deposit_id = ANY($1::uuid[])`,
      [leavers.map((leaver) => leaver.id)],
    );
    return BigInt(rows[0]?.taken ?? 0);
  };
  const refundedInAll = refundedLeavers.reduce((sum, deposit) => sum + deposit.refunded, 0n);
  for (const giveUp = Date.now() + 60_000; (await lostOnLeavers()) < refundedInAll;) {
    if (Date.now() > giveUp) break;
    await sleep(100);
    await reconcileNowAndThen();
  }

  const ids = payers.map((payer) => payer.accountId);
  const deposits: { payer: Payer; id: string }[] = fundingIds.map((id, i) => ({
    payer: payers[i] as Payer,
    id,
  }));
  const until = Date.now() + seconds * 1000;
  const pick = () => payers[Math.floor(Math.random() * payers.length)] as Payer;
  const count = (status: number, kind: 'deposits' | 'withdrawals' | 'transfers') => {
    if (status === 202) stats[kind] += 1;
    else if (status === 422) stats.refused += 1;
    else unexpected[`${kind} ${status}`] = (unexpected[`${kind} ${status}`] ?? 0) + 1;
  };

  const client = async () => {
    while (Date.now() < until) {
      const payer = pick();
      const amount = amountMinor() / 100;
      const roll = Math.random();
      if (roll < 0.35) {
        const answer = await request(
          payer,
          `/account/${payer.accountId}/deposit`,
          { amount, currency: 'USD' },
          until,
        );
        if (answer) count(answer.status, 'deposits');
        if (answer?.status === 202)
          deposits.push({ payer, id: (JSON.parse(answer.body) as { id: string }).id });
      } else if (roll < 0.65) {
        const answer = await request(
          payer,
          `/account/${payer.accountId}/withdraw`,
          { amount, currency: 'USD' },
          until,
        );
        if (answer) count(answer.status, 'withdrawals');
      } else {
        let to = pick();
        while (to === payer) to = pick();
        const body = { amount, currency: 'USD', to_account_id: to.accountId };
        const answer = await request(payer, `/account/${payer.accountId}/transfer`, body, until);
        if (answer) count(answer.status, 'transfers');
      }
    }
  };

  /** The platform refunds a part of a completed deposit now and then, at the sandbox (Stripe's way). */
  const refunder = async () => {
    while (Date.now() < until) {
      await sleep(500);
      const chosen = deposits[Math.floor(Math.random() * deposits.length)];
      if (!chosen) continue;
      // One attempt: through a kill, the next pass picks another deposit.
      const shown = await chosen.payer.client.transactions
        .get(chosen.id, { maxRetries: 0 })
        .catch(() => null);
      if (shown?.status !== 'completed' || !shown.provider_payment) continue;
      const refunded = await stripe.refunds
        .create({ payment_intent: shown.provider_payment.reference, amount: 100 })
        .then(() => true)
        .catch(() => false);
      if (refunded) stats.refunds += 1;
    }
  };

  /**
   * Now and then a payer pays a deposit of theirs with Stripe's `pm_card_createDispute` before the sandbox pays it
   * (it waits 100 ms for a client), and the cardholder disputes it at once; the dispute is lost or won a second later.
   */
  const disputed: string[] = [];
  const decide = async (disputeId: string) => {
    const lost = Math.random() < 0.5;
    const closed = await (
      lost
        ? stripe.disputes.close(disputeId)
        : stripe.disputes.update(disputeId, { evidence: { uncategorized_text: 'winning_evidence' } })
    ).then(
      () => true,
      () => false,
    );
    if (closed) stats[lost ? 'disputesLost' : 'disputesWon'] += 1;
  };
  const disputer = async () => {
    while (Date.now() < until) {
      await sleep(1_000);
      const payer = pick();
      const answer = await request(
        payer,
        `/account/${payer.accountId}/deposit`,
        { amount: 20, currency: 'USD' },
        until,
      );
      if (answer?.status !== 202) continue;
      stats.deposits += 1;
      const id = (JSON.parse(answer.body) as { id: string }).id;
      let reference: string | undefined;
      for (const giveUp = Date.now() + 5_000; !reference && Date.now() < giveUp; await sleep(10)) {
        // One attempt each: the loop polls every 10 ms, to pay before the sandbox would (100 ms).
        reference = await payer.client.transactions
          .get(id, { maxRetries: 0 })
          .then((shown) => shown.provider_payment?.reference)
          .catch(() => undefined);
      }
      if (!reference) continue;
      const paid = await stripe.paymentIntents
        .confirm(reference, { payment_method: 'pm_card_createDispute' })
        .then(
          () => true,
          () => false,
        );
      if (!paid) continue;
      const [dispute] = (await stripe.disputes.list({ payment_intent: reference })).data;
      if (dispute) disputed.push(dispute.id);
    }
  };
  /**
   * Someone with the platform's Stripe keys (or a bug) makes a second PaymentIntent naming a payer's deposit in its
   * metadata, or a transfer (which never asks the provider), and pays it: the books must take none of it in.
   */
  const attacks: { reference: string; amount: bigint }[] = [];
  const attacker = async () => {
    const transfers = async () =>
      (
        await context.ledgerDb.pool.query<{ id: string }>(
          `SELECT id FROM transactions WHERE type = 'transfer' ORDER BY random() LIMIT 1`,
        )
      ).rows;
    while (Date.now() < until) {
      await sleep(1_500);
      const named =
        attacks.length % 3 === 2
          ? (await transfers().catch(() => []))[0]?.id
          : deposits[Math.floor(Math.random() * deposits.length)]?.id;
      if (!named) continue;
      const amount = 100 + Math.floor(Math.random() * 400) * 2;
      const paid = await stripe.paymentIntents
        .create({
          amount,
          currency: 'usd',
          metadata: { transaction_id: named },
          payment_method: 'pm_card_visa',
          confirm: true,
        })
        .catch(() => null);
      if (paid?.status === 'succeeded') attacks.push({ reference: paid.id, amount: BigInt(amount) });
    }
  };

  /** Decides the disputes opened, a second later, until the disputer is done and none is left open. */
  const decider = async (disputing: Promise<void>) => {
    let done = false;
    void disputing.finally(() => (done = true));
    while (!done || disputed.length > 0) {
      await sleep(1_000);
      const due = disputed.splice(0, disputed.length);
      await Promise.all(due.map(decide));
    }
  };

  log(
    `provider drill: ${USERS} clients for ${seconds} s (deposits, withdrawals, transfers; 1 in ${DECLINED_ONE_IN} ` +
      `declined at the sandbox); refunds and disputes at the sandbox; SIGKILL of the ledger every ${killEverySeconds} s`,
  );
  const [outages] = await Promise.all([
    repeatFault(killEverySeconds * 1000, until, async () => {
      await system.kill('ledger', 'SIGKILL');
      await system.restart('ledger');
    }),
    refunder(),
    decider(disputer()),
    attacker(),
    ...payers.map(() => client()),
  ]);

  // A call the crash cut short is made again once its lease (45 s) is over, and a payout that fails asks for its
  // transfer back only then; what the sandbox never told is found by reconciliation, every few seconds. Settled is
  // when nothing is pending, nothing waits for the provider, and a run after that leaves no case to decide: money
  // can still move without leaving anything pending (a refund or a dispute's event on its way, a lost one).
  const settleDeadline = Date.now() + settleSeconds * 1000 + PROVIDER_CALL_LEASE_MS;
  reconciledAt = Date.now();
  const unfinished = async () => {
    const { rows } = await context.ledgerDb.pool.query<{ pending: string; waiting: string }>(
      `SELECT (SELECT count(*) FROM transactions WHERE status = 'pending' AND account_id = ANY($1::uuid[])) AS pending,
              (SELECT count(*) FROM provider_payments WHERE next_attempt_at IS NOT NULL) AS waiting`,
      [ids],
    );
    return { pending: Number(rows[0]?.pending ?? 0), waiting: Number(rows[0]?.waiting ?? 0) };
  };
  let left = await unfinished();
  let settled = false;
  while (!settled && Date.now() < settleDeadline) {
    if (left.pending === 0 && left.waiting === 0) settled = (await reconcileAll()) === 0;
    else {
      await sleep(300);
      await reconcileNowAndThen();
    }
    left = await unfinished();
  }
  const waiting = left.waiting;
  const stillPending = await waitSettled(context, ids, 0);
  log(
    `provider drill: ${settled ? 'settled' : 'not settled by the deadline'} (${stillPending} pending, ${waiting} ` +
      `provider requests waiting, ${reconciled.runs} reconciliation runs); checking the books`,
  );
  const { rows: stuck } = await context.ledgerDb.pool.query<{ about: string }>(
    `SELECT p.kind || ' ' || p.state || ' (' || t.status || ', ' || p.attempts || ' attempts): ' ||
            coalesce(p.last_error, 'no error') AS about
     FROM provider_payments p JOIN transactions t ON t.id = p.transaction_id
     WHERE p.next_attempt_at IS NOT NULL LIMIT 3`,
  );

  // The sandbox's books: what the platform holds at the provider.
  const atProvider = async () =>
    BigInt((await stripe.balance.retrieve()).available.find((b) => b.currency === 'usd')?.amount ?? 0);
  const systemBalance = async (code: string) => {
    const { rows } = await context.ledgerDb.pool.query<{ balance: string }>(
      `SELECT balance FROM accounts WHERE kind = 'system' AND system_code = $1 AND currency = 'USD'`,
      [code],
    );
    return BigInt(rows[0]?.balance ?? 0);
  };
  // One after the other, with nothing left to move either.
  const clearing = await systemBalance('provider_clearing');
  const providerHolds = await atProvider();
  const ledgerSays = -clearing;
  // The payers hold what is at the provider and what the platform lost on the leavers besides (no fees here).
  const lost = -(await systemBalance('platform_loss'));
  const checks = await checkBooks(context, { accountIds: ids, expectedTotalMinor: providerHolds + lost });
  const losses = await bookedLosses(context);
  checks.push(
    {
      name: "the provider's books = the ledger's provider-clearing account",
      ok: providerHolds === ledgerSays,
      detail: `the sandbox holds ${formatUsd(providerHolds)} USD for the platform; the ledger says ${formatUsd(ledgerSays)}`,
      discrepancies: providerHolds === ledgerSays ? 0 : 1,
    },
    await reconciliationCheck(context, reconciled),
    await foreignPaymentsCheck(context, attacks),
    platformLossCheck(await referenceValuation('USD'), refundedLeavers, losses, new Map([['USD', -lost]])),
    {
      name: 'every request to the provider done',
      ok: waiting === 0,
      detail: `${waiting} still waiting in provider_payments${stuck.length ? `, e.g. ${stuck.map((r) => r.about).join('; ')}` : ''}`,
      discrepancies: waiting,
    },
    {
      name: 'every request a client sent has a known outcome',
      ok: stats.unresolved === 0 && Object.keys(unexpected).length === 0,
      detail: `${stats.unresolved} given up on, ${stats.retries} retried with their Idempotency-Key; unexpected: ${JSON.stringify(unexpected)}`,
      discrepancies: stats.unresolved + Object.values(unexpected).reduce((a, b) => a + b, 0),
    },
  );
  const { rows: moved } = await context.ledgerDb.pool.query<{ amount: string | null }>(
    `SELECT sum(amount) AS amount FROM transactions
     WHERE status = 'completed' AND type <> 'reversal' AND account_id = ANY($1::uuid[])`,
    [ids],
  );
  const average = outages.length ? outages.reduce((a, b) => a + b, 0) / outages.length : 0;
  return {
    name: 'provider: the ledger asks the sandbox, SIGKILL the ledger every 10 s',
    injected: [
      `${outages.length} × SIGKILL of the ledger process, each restarted at once (down ${(average / 1000).toFixed(1)} s on average until healthy)`,
      `1 in ${DECLINED_ONE_IN} amounts declined at the sandbox (card or bank); ${stats.refunds} refunds at the sandbox; ` +
        `${stats.disputesLost + stats.disputesWon} disputes (${stats.disputesLost} lost, ${stats.disputesWon} won)`,
      `1 in ${Math.round(1 / FORGET_EVENTS)} money-moving events never sent by the sandbox: found by reconciliation ` +
        `(${reconciled.runs} runs), each case booked by an admin`,
      `${LEAVERS} payers paid out in full and deleted, then their deposits refunded at the sandbox in two parts ` +
        `(${formatUsd(refundedInAll)} USD): the platform's loss`,
      `${attacks.length} PaymentIntents made and paid at the sandbox by someone else, naming a payer's deposit or a ` +
        'transfer in their metadata: each a case, given back at the provider by an admin',
    ],
    operations: {
      'deposits accepted': stats.deposits,
      'withdrawals accepted': stats.withdrawals,
      'transfers accepted': stats.transfers,
      'refused (422)': stats.refused,
      'refunds at the provider': stats.refunds,
      'disputes lost': stats.disputesLost,
      'disputes won': stats.disputesWon,
      'retried requests': stats.retries,
      'reconciliation cases booked': reconciled.booked,
      'reconciliation cases given back': reconciled.givenBack,
      'foreign payments at the provider': attacks.length,
    },
    faults: outages.length,
    moneyMovedMinor: BigInt(moved[0]?.amount ?? 0),
    checks,
    durationMs: Date.now() - started,
  };
}

/**
 * Every event the sandbox never sent of a type whose loss leaves the books short (a payment succeeded, a payout
 * paid or failed) has a case on its transaction, and no case is left open: each was booked, and the books agree.
 */
async function reconciliationCheck(
  context: ProviderDrillContext,
  reconciled: { booked: number; unexplained: Set<string> },
) {
  const answer = await fetch(`${context.sandboxUrl}/sandbox/forgotten-events`, {
    headers: { authorization: `Bearer ${context.sandboxApiKey}` },
  });
  const lost = ((await answer.json()) as { data: { type: string; transaction_id: string | null }[] }).data;
  const { rows: cases } = await context.ledgerDb.pool.query<{
    transaction_id: string | null;
    kind: string;
    status: string;
  }>(`SELECT transaction_id, kind, status FROM reconciliation_cases`);
  const withCase = new Set(cases.map((found) => found.transaction_id));
  const missed = lost.filter(
    (event) =>
      ALWAYS_FOUND.includes(event.type) && event.transaction_id && !withCase.has(event.transaction_id),
  );
  const open = cases.filter((found) => found.status === 'open').length;
  const tally = (values: string[]) =>
    Object.entries(
      values.reduce<Record<string, number>>(
        (counts, value) => ({ ...counts, [value]: (counts[value] ?? 0) + 1 }),
        {},
      ),
    )
      .map(([value, count]) => `${count} ${value}`)
      .join(', ') || 'none';
  return {
    name: 'reconciliation found every lost event, and every case was booked',
    ok: missed.length === 0 && open === 0,
    detail:
      `${lost.length} events never sent (${tally(lost.map((event) => event.type))}); ` +
      `${cases.length} cases (${tally(cases.map((found) => found.kind))}), ${reconciled.booked} booked, ` +
      `${reconciled.unexplained.size} unexplained, ${open} left open; ${missed.length} lost ` +
      `${ALWAYS_FOUND.join('/')} events without a case`,
    discrepancies: missed.length + open,
  };
}

/**
 * The PaymentIntents someone else made and paid, naming a payer's deposit or a transfer: none was credited (no
 * transaction names it as its payment), each had a case, and each was refunded in full at the provider.
 */
async function foreignPaymentsCheck(
  context: ProviderDrillContext,
  attacks: { reference: string; amount: bigint }[],
) {
  const references = attacks.map((attack) => attack.reference);
  const { rows: credited } = await context.ledgerDb.pool.query<{ payment_id: string }>(
    `SELECT payment_id FROM transactions WHERE payment_id = ANY($1::text[])`,
    [references],
  );
  const { rows: cased } = await context.ledgerDb.pool.query<{ provider_reference: string }>(
    `SELECT DISTINCT provider_reference FROM reconciliation_cases WHERE provider_reference = ANY($1::text[])`,
    [references],
  );
  const withCase = new Set(cased.map((row) => row.provider_reference));
  let kept = 0;
  for (const attack of attacks) {
    const refunds = await context.stripe.refunds.list({ payment_intent: attack.reference, limit: 100 });
    const givenBack = refunds.data.reduce((sum, refund) => sum + BigInt(refund.amount), 0n);
    if (givenBack !== attack.amount) kept += 1;
  }
  const missed = attacks.filter((attack) => !withCase.has(attack.reference)).length;
  return {
    name: 'foreign payments moved no money in the books, and each was given back',
    ok: credited.length === 0 && missed === 0 && kept === 0,
    detail:
      `${attacks.length} foreign PaymentIntents paid: ${credited.length} credited by the ledger, ${missed} without ` +
      `a case, ${kept} not refunded in full at the provider`,
    discrepancies: credited.length + missed + kept,
  };
}
