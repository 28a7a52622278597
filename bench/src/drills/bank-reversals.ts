import { randomUUID } from 'node:crypto';
import { sleep } from '../harness/load.js';
import {
  disputeEventBody,
  payoutEventBody,
  postProviderEvent,
  refundEventBody,
} from '../harness/provider-webhooks.js';
import type { BankAccount } from './bank-clients.js';
import type { DrillContext, DrillReport } from './drill-context.js';
import { sendStorm } from './webhook-storm.js';

type Check = DrillReport['checks'][number];

/** A deposit the provider later refunds or disputes, and what the drill expects it to reverse in the end. */
export interface ReversalPlan {
  scenario: string;
  accountId: string;
  depositId: string;
  /** The owner first moves everything available to `to`, so the reversal takes the account below zero. */
  spendFirst?: { token: string; to: string };
  /** Provider events, in the order sent (each delivered several times at once). */
  steps: string[];
  expectedReversedMinor: bigint;
}

export interface ReversalStats {
  events: number;
  /** POSTs made, duplicates and retries included. */
  attempts: number;
  /** Events still not answered 200 when the drill gave up on them. */
  abandoned: number;
  /** Accounts seen below zero after a refund of money already spent. */
  overdrawn: number;
  /** Withdrawals or transfers accepted (202) from an account while it was below zero: must stay 0. */
  spentWhileOverdrawn: number;
  /** The attacker's withdrawals accepted (once clients had paid the account back), which the drill pays out. */
  payouts: number;
}

export interface ReversibleDeposit {
  accountId: string;
  token: string;
  depositId: string;
}

/** Copies of each provider event sent at once: the provider's duplicates. */
const COPIES = 3;
/** What each of the attacker's withdrawals and transfers asks for: one cent. */
const ATTACK_MINOR = 1;

/**
 * One extra deposit per account (confirmed like the funding ones), for the provider to take back later:
 * resolves once every one is completed.
 */
export async function openReversibleDeposits(
  context: DrillContext,
  accounts: readonly BankAccount[],
  amountMinor: number,
): Promise<ReversibleDeposit[]> {
  const { gateway, target, ledgerDb } = context;
  const deposits = await Promise.all(
    accounts.map(async (account) => {
      const transaction = await gateway.json<{ id: string }>({
        method: 'POST',
        path: `/account/${account.accountId}/deposit`,
        json: { amount: amountMinor / 100, currency: 'USD' },
        token: account.token,
        headers: { 'idempotency-key': randomUUID() },
      });
      return { accountId: account.accountId, token: account.token, depositId: transaction.id };
    }),
  );
  await sendStorm(
    gateway,
    target.webhookSecret,
    deposits.map((d) => ({ transactionId: d.depositId, amount: amountMinor })),
    { rate: 100, giveUpAt: Date.now() + 60_000 },
  );
  const ids = deposits.map((d) => d.depositId);
  const deadline = Date.now() + 60_000;
  while ((await ledgerDb.completedAmong(ids)).length < ids.length) {
    if (Date.now() > deadline) throw new Error('the reversible deposits were not credited within 60 s');
    await sleep(50);
  }
  return deposits;
}

/**
 * What the provider does to each deposit of `amountMinor`: partial refunds in and out of order, a refund told
 * twice, disputes lost and won (their close before or after their opening), a refund and a dispute that together
 * would take more than the deposit; the rest are left alone.
 */
export function planReversals(deposits: readonly ReversibleDeposit[], amountMinor: number): ReversalPlan[] {
  const amount = amountMinor;
  const part = Math.floor(amount * 0.3);
  const scenarios: [string, (id: string) => string[], number][] = [
    [
      'partial refund, then the rest',
      (id) => [
        refundEventBody({ transactionId: id, amount, refundedTotal: part, refundId: 're_1' }),
        refundEventBody({ transactionId: id, amount, refundedTotal: amount, refundId: 're_2' }),
      ],
      amount,
    ],
    [
      'full refund, then the older partial total late',
      (id) => [
        refundEventBody({ transactionId: id, amount, refundedTotal: amount, refundId: 're_2' }),
        refundEventBody({ transactionId: id, amount, refundedTotal: part, refundId: 're_1' }),
      ],
      amount,
    ],
    [
      'dispute opened, then lost',
      (id) => [
        disputeEventBody({ transactionId: id, disputeId: `dp_${id}`, amount, status: 'needs_response' }),
        disputeEventBody({ transactionId: id, disputeId: `dp_${id}`, amount, status: 'lost' }),
      ],
      amount,
    ],
    [
      'dispute lost before it was seen opened',
      (id) => [
        disputeEventBody({ transactionId: id, disputeId: `dp_${id}`, amount, status: 'lost' }),
        disputeEventBody({ transactionId: id, disputeId: `dp_${id}`, amount, status: 'needs_response' }),
      ],
      amount,
    ],
    [
      'dispute opened, then won',
      (id) => [
        disputeEventBody({ transactionId: id, disputeId: `dp_${id}`, amount, status: 'needs_response' }),
        disputeEventBody({ transactionId: id, disputeId: `dp_${id}`, amount, status: 'won' }),
      ],
      0,
    ],
    [
      'dispute won before it was seen opened',
      (id) => [
        disputeEventBody({ transactionId: id, disputeId: `dp_${id}`, amount, status: 'won' }),
        disputeEventBody({ transactionId: id, disputeId: `dp_${id}`, amount, status: 'needs_response' }),
      ],
      0,
    ],
    [
      'one refund told twice under two event ids',
      (id) => [
        refundEventBody({ transactionId: id, amount, refundedTotal: part, refundId: 're_1' }),
        refundEventBody({ transactionId: id, amount, refundedTotal: part, refundId: 're_1' }),
      ],
      part,
    ],
    [
      'a partial refund, then a dispute of the whole lost',
      (id) => [
        refundEventBody({ transactionId: id, amount, refundedTotal: part, refundId: 're_1' }),
        disputeEventBody({ transactionId: id, disputeId: `dp_${id}`, amount, status: 'lost' }),
      ],
      amount,
    ],
  ];
  const plans: ReversalPlan[] = deposits.map(({ accountId, depositId }, index) => {
    const [scenario, steps, expected] = scenarios[index] ?? ['left alone', () => [], 0];
    return {
      scenario,
      accountId,
      depositId,
      steps: steps(depositId),
      expectedReversedMinor: BigInt(expected),
    };
  });
  // The money spent before the provider takes it back: the reversal overdraws, and nothing more can leave.
  const [spender, receiver] = deposits.slice(scenarios.length);
  if (spender && receiver) {
    plans[scenarios.length] = {
      scenario: 'refund of money already spent',
      accountId: spender.accountId,
      depositId: spender.depositId,
      spendFirst: { token: spender.token, to: receiver.accountId },
      steps: [
        refundEventBody({
          transactionId: spender.depositId,
          amount,
          refundedTotal: amount,
          refundId: 're_spent',
        }),
      ],
      expectedReversedMinor: BigInt(amount),
    };
  }
  return plans;
}

/**
 * Sends every plan's events through the gateway, spread over the drill until `until`: each event several times at
 * once, each copy retried on anything but a 200 (the ledger may be down), a plan's events one after the other.
 */
export async function sendReversals(
  context: DrillContext,
  plans: readonly ReversalPlan[],
  until: number,
): Promise<ReversalStats> {
  const stats: ReversalStats = {
    events: 0,
    attempts: 0,
    abandoned: 0,
    overdrawn: 0,
    spentWhileOverdrawn: 0,
    payouts: 0,
  };
  const deliver = async (body: string) => {
    for (let attempt = 0; ; attempt += 1) {
      stats.attempts += 1;
      const answer = await postProviderEvent(context.gateway, body, context.target.webhookSecret).catch(
        () => null,
      );
      if (answer?.status === 200) return;
      if (Date.now() > until + 30_000) {
        stats.abandoned += 1;
        return;
      }
      await sleep(Math.min(100 * 2 ** attempt, 2000));
    }
  };
  /** Moves what is available out of the account (clients keep moving money in and out meanwhile). */
  const spendAll = async ({ accountId }: ReversalPlan, spend: NonNullable<ReversalPlan['spendFirst']>) => {
    for (let attempt = 0; attempt < 20 && Date.now() < until; attempt += 1) {
      const balance = await context.gateway
        .json<{ available_balance: number }>({
          method: 'GET',
          path: `/account/${accountId}/balance`,
          token: spend.token,
        })
        .catch(() => null);
      if (balance && balance.available_balance > 1) {
        const answer = await context.gateway
          .send({
            method: 'POST',
            path: `/account/${accountId}/transfer`,
            headers: {
              authorization: `Bearer ${spend.token}`,
              'content-type': 'application/json',
              'idempotency-key': randomUUID(),
            },
            body: JSON.stringify({
              amount: Math.floor(balance.available_balance * 100 - 100) / 100,
              currency: 'USD',
              to_account_id: spend.to,
            }),
          })
          .catch(() => null);
        if (answer?.status === 202) return;
      }
      await sleep(200);
    }
  };
  const availableOf = async (accountId: string, token: string) =>
    (
      await context.gateway
        .json<{ available_balance: number }>({ method: 'GET', path: `/account/${accountId}/balance`, token })
        .catch(() => null)
    )?.available_balance;
  /**
   * One request of the attacker's, retried with its Idempotency-Key while the ledger is down, so that a request
   * accepted just before a kill is known too.
   */
  const sendUntilAnswered = async (path: string, body: object, token: string) => {
    const key = randomUUID();
    for (let attempt = 0; ; attempt += 1) {
      const answer = await context.gateway
        .send({
          method: 'POST',
          path,
          headers: {
            authorization: `Bearer ${token}`,
            'content-type': 'application/json',
            'idempotency-key': key,
          },
          body: JSON.stringify(body),
        })
        .catch(() => null);
      if ((answer && answer.status < 500) || Date.now() > until + 30_000) return answer;
      await sleep(Math.min(100 * 2 ** attempt, 1000));
    }
  };
  /** Once the reversal shows, the owner tries to spend from below zero: every attempt must be refused. */
  const attackWhileOverdrawn = async (
    { accountId }: ReversalPlan,
    spend: NonNullable<ReversalPlan['spendFirst']>,
  ) => {
    const deadline = Date.now() + 10_000;
    let available = await availableOf(accountId, spend.token);
    while ((available === undefined || available >= 0) && Date.now() < deadline) {
      await sleep(20);
      available = await availableOf(accountId, spend.token);
    }
    if (available === undefined || available >= 0) return;
    stats.overdrawn += 1;
    const amount = ATTACK_MINOR / 100;
    const attempts = await Promise.all(
      Array.from({ length: 10 }, async (_, i) => {
        const withdrawal = i % 2 === 1;
        const answer = await sendUntilAnswered(
          `/account/${accountId}/${withdrawal ? 'withdraw' : 'transfer'}`,
          { amount, currency: 'USD', ...(withdrawal ? {} : { to_account_id: spend.to }) },
          spend.token,
        );
        return answer?.status === 202
          ? [{ withdrawal, id: (JSON.parse(answer.body) as { id: string }).id }]
          : [];
      }),
    );
    const accepted = attempts.flat();
    // Clients may pay the account back above zero meanwhile; only what left while it was below zero counts.
    const after = await availableOf(accountId, spend.token);
    if (after !== undefined && after < 0) stats.spentWhileOverdrawn += accepted.length;
    // A withdrawal accepted waits for its payout, and the provider here is the drill (the sandbox is off): without
    // this it would stay pending, holding its cent, long after the drill.
    for (const { id } of accepted.filter(({ withdrawal }) => withdrawal)) {
      stats.payouts += 1;
      const payout = payoutEventBody({
        transactionId: id,
        amount: ATTACK_MINOR,
        currency: 'USD',
        outcome: 'paid',
      });
      await Promise.all(Array.from({ length: COPIES }, () => deliver(payout)));
    }
  };
  const span = Math.max(1000, (until - Date.now()) * 0.6);
  await Promise.all(
    plans.map(async (plan) => {
      await sleep(Math.random() * span);
      if (plan.spendFirst) {
        await spendAll(plan, plan.spendFirst);
        // Its settlement and the clients' transfers in between; then the provider takes the deposit back.
        await sleep(300);
      }
      for (const body of plan.steps) {
        stats.events += 1;
        await Promise.all(Array.from({ length: COPIES }, () => deliver(body)));
        await sleep(Math.random() * 500);
      }
      if (plan.spendFirst) await attackWhileOverdrawn(plan, plan.spendFirst);
    }),
  );
  return stats;
}

/** The reversals the ledger booked for each plan: exactly what the provider took back, once, nothing pending. */
export async function checkReversals(
  context: DrillContext,
  plans: readonly ReversalPlan[],
): Promise<Check[]> {
  const { rows } = await context.ledgerDb.pool.query<{
    original_transaction_id: string;
    reversed: string;
    pending: string;
    deposit_status: string;
  }>(
    `SELECT d.id AS original_transaction_id, d.status AS deposit_status,
            coalesce(sum(r.amount) FILTER (WHERE r.status = 'completed'), 0) AS reversed,
            count(r.id) FILTER (WHERE r.status = 'pending') AS pending
     FROM transactions d LEFT JOIN transactions r ON r.original_transaction_id = d.id AND r.type = 'reversal'
     WHERE d.id = ANY($1::uuid[])
     GROUP BY d.id, d.status`,
    [plans.map((plan) => plan.depositId)],
  );
  const byDeposit = new Map(rows.map((row) => [row.original_transaction_id, row]));
  const wrong = plans.filter((plan) => {
    const found = byDeposit.get(plan.depositId);
    return (
      !found ||
      found.deposit_status !== 'completed' ||
      BigInt(found.reversed) !== plan.expectedReversedMinor ||
      Number(found.pending) !== 0
    );
  });
  const expected = plans.reduce((sum, plan) => sum + plan.expectedReversedMinor, 0n);
  return [
    {
      name: 'each refund and dispute took effect once (duplicates, reordering, caps)',
      ok: wrong.length === 0,
      detail:
        wrong.length === 0
          ? `${plans.filter((p) => p.steps.length > 0).length} deposits refunded or disputed, ${expected} minor units reversed as planned, none left pending, every deposit still completed`
          : wrong
              .map((plan) => {
                const found = byDeposit.get(plan.depositId);
                return `${plan.scenario}: ${found?.reversed ?? 'nothing'} reversed (${found?.pending ?? 0} pending), ${plan.expectedReversedMinor} expected`;
              })
              .join('; '),
      discrepancies: wrong.length,
    },
  ];
}
