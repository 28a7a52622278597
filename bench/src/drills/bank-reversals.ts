import { sleep } from '../harness/load.js';
import { postUntilAnswered } from '../harness/post-until-answered.js';
import type { BankAccount, PaymentMethod, RequestedDeposit } from './bank-clients.js';
import type { BankDrillContext } from './bank-drill.js';
import type { DrillReport } from './drill-context.js';

type Check = DrillReport['checks'][number];

/** One thing that happens at the sandbox to a deposit's PaymentIntent. */
export type SandboxStep =
  | { pay: PaymentMethod }
  | { refund: number }
  /** The dispute its payment opened (pm_card_createDispute) is lost (closed) or won (winning evidence). */
  | { dispute: 'lost' | 'won' };

/** A deposit the provider later refunds or disputes, and what the drill expects it to reverse in the end. */
export interface ReversalPlan {
  scenario: string;
  deposit: RequestedDeposit;
  /** How its payer pays it before the clients start; unset, one of its steps pays it during the drill. */
  paidBefore?: PaymentMethod;
  /** Made at the sandbox one right after the other, so that their events travel at the same time. */
  steps: SandboxStep[];
  /** The owner first moves everything available to `to`, so the refund takes the account below zero. */
  spendFirst?: { to: string };
  expectedReversedMinor: bigint;
}

export interface ReversalStats {
  /** Deposits paid during the drill, and what the sandbox captured for them. */
  payments: number;
  capturedMinor: bigint;
  refunds: number;
  disputesLost: number;
  disputesWon: number;
  /** What the sandbox took back from the platform: refunds and lost disputes. */
  takenBackMinor: bigint;
  /** Calls the sandbox refused or that failed: each leaves the plan's expectation wrong. */
  failedCalls: string[];
  /** Accounts seen below zero after a refund of money already spent. */
  overdrawn: number;
  /** Withdrawals or transfers accepted (202) from an account while it was below zero: must stay 0. */
  spentWhileOverdrawn: number;
  /** The attacker's withdrawals accepted (once clients had paid the account back), paid out through the sandbox. */
  payouts: number;
}

/** What each of the attacker's withdrawals and transfers asks for: one cent. */
const ATTACK_MINOR = 1;

interface Scenario {
  scenario: string;
  paidBefore?: PaymentMethod;
  steps(amount: number): SandboxStep[];
  expected(amount: number): number;
}

const part = (amount: number) => Math.floor(amount * 0.3);

const SCENARIOS: Scenario[] = [
  {
    scenario: 'partial refund, then the rest at once',
    paidBefore: 'pm_card_visa',
    steps: (amount) => [{ refund: part(amount) }, { refund: amount - part(amount) }],
    expected: (amount) => amount,
  },
  {
    scenario: 'three partial refunds at once',
    paidBefore: 'pm_card_visa',
    steps: (amount) => [{ refund: part(amount) }, { refund: part(amount) }, { refund: part(amount) }],
    expected: (amount) => 3 * part(amount),
  },
  {
    scenario: 'dispute opened at payment, then lost',
    paidBefore: 'pm_card_createDispute',
    steps: () => [{ dispute: 'lost' }],
    expected: (amount) => amount,
  },
  {
    scenario: 'paid, disputed and lost at once',
    steps: () => [{ pay: 'pm_card_createDispute' }, { dispute: 'lost' }],
    expected: (amount) => amount,
  },
  {
    scenario: 'dispute opened at payment, then won',
    paidBefore: 'pm_card_createDispute',
    steps: () => [{ dispute: 'won' }],
    expected: () => 0,
  },
  {
    scenario: 'paid, disputed and won at once',
    steps: () => [{ pay: 'pm_card_createDispute' }, { dispute: 'won' }],
    expected: () => 0,
  },
  {
    scenario: 'paid and refunded in full at once',
    steps: (amount) => [{ pay: 'pm_card_visa' }, { refund: amount }],
    expected: (amount) => amount,
  },
  {
    scenario: 'one partial refund',
    paidBefore: 'pm_card_visa',
    steps: (amount) => [{ refund: part(amount) }],
    expected: (amount) => part(amount),
  },
];
const LEFT_ALONE: Scenario = {
  scenario: 'left alone',
  paidBefore: 'pm_card_visa',
  steps: () => [],
  expected: () => 0,
};

/**
 * What the provider does to each deposit, at the sandbox: partial refunds made back to back (their refunded totals
 * may arrive in either order), disputes lost and won, some opened when the deposit was paid and decided later, some
 * paid, disputed and decided at once (the close may arrive before the opening, or before the payment), a refund
 * made right after the payment, and a refund of money already spent; the rest are left alone.
 */
export function planReversals(deposits: readonly RequestedDeposit[]): ReversalPlan[] {
  const plans: ReversalPlan[] = deposits.map((deposit, index) => {
    const { scenario, paidBefore, steps, expected } = SCENARIOS[index] ?? LEFT_ALONE;
    return {
      scenario,
      deposit,
      paidBefore,
      steps: steps(deposit.amountMinor),
      expectedReversedMinor: BigInt(expected(deposit.amountMinor)),
    };
  });
  // The money spent before the provider takes it back: the refund overdraws, and nothing more can leave.
  const [spender, receiver] = deposits.slice(SCENARIOS.length);
  if (spender && receiver) {
    plans[SCENARIOS.length] = {
      scenario: 'refund of money already spent',
      deposit: spender,
      paidBefore: 'pm_card_visa',
      steps: [{ refund: spender.amountMinor }],
      spendFirst: { to: receiver.account.accountId },
      expectedReversedMinor: BigInt(spender.amountMinor),
    };
  }
  return plans;
}

/** Links a payout account for each owner who will try to withdraw, so that only the overdraft can refuse them. */
export async function linkPayoutAccounts(plans: readonly ReversalPlan[]): Promise<void> {
  for (const { deposit } of plans.filter((plan) => plan.spendFirst)) {
    await deposit.account.client.payoutAccount.link();
  }
}

/**
 * Makes every plan's steps at the sandbox, spread over the drill until `until`, each plan's one right after the
 * other; the sandbox sends their events, delayed, out of order and twice, as it is configured to.
 */
export async function runReversals(
  context: Pick<BankDrillContext, 'stripe' | 'gateway'>,
  plans: readonly ReversalPlan[],
  until: number,
): Promise<ReversalStats> {
  const { stripe, gateway } = context;
  const stats: ReversalStats = {
    payments: 0,
    capturedMinor: 0n,
    refunds: 0,
    disputesLost: 0,
    disputesWon: 0,
    takenBackMinor: 0n,
    failedCalls: [],
    overdrawn: 0,
    spentWhileOverdrawn: 0,
    payouts: 0,
  };
  const take = async ({ deposit }: ReversalPlan, step: SandboxStep) => {
    const paymentIntent = deposit.paymentIntent;
    if ('pay' in step) {
      await stripe.paymentIntents.confirm(paymentIntent, { payment_method: step.pay });
      stats.payments += 1;
      stats.capturedMinor += BigInt(deposit.amountMinor);
    } else if ('refund' in step) {
      await stripe.refunds.create({ payment_intent: paymentIntent, amount: step.refund });
      stats.refunds += 1;
      stats.takenBackMinor += BigInt(step.refund);
    } else {
      const [dispute] = (await stripe.disputes.list({ payment_intent: paymentIntent })).data;
      if (!dispute) throw new Error(`no dispute of ${paymentIntent}`);
      if (step.dispute === 'lost') {
        await stripe.disputes.close(dispute.id);
        stats.disputesLost += 1;
        stats.takenBackMinor += BigInt(dispute.amount);
      } else {
        await stripe.disputes.update(dispute.id, { evidence: { uncategorized_text: 'winning_evidence' } });
        stats.disputesWon += 1;
      }
    }
  };

  /**
   * Moves what is available out of the account (clients keep moving money in and out meanwhile), trying through a
   * ledger outage as long as a client would.
   */
  const spendAll = async ({ deposit: { account } }: ReversalPlan, to: string) => {
    while (Date.now() < until + 30_000) {
      const available = await availableOf(account);
      if (available !== undefined && available > 1) {
        const accepted = await account.client.money
          .transfer(account.accountId, {
            amount: Math.floor(available * 100 - 100) / 100,
            currency: 'USD',
            to_account_id: to,
          })
          .then(
            () => true,
            () => false,
          );
        if (accepted) return;
      }
      await sleep(200);
    }
  };
  /** The available balance, or undefined through an outage (one attempt: the callers poll on their own pace). */
  const availableOf = async (account: BankAccount) =>
    (await account.client.balances.get(account.accountId, { maxRetries: 0 }).catch(() => null))
      ?.available_balance;
  /**
   * One request of the attacker's, retried with its Idempotency-Key while the ledger is down, so that a request
   * accepted just before a kill is known too.
   */
  const sendUntilAnswered = (path: string, body: object, token: string) =>
    postUntilAnswered(gateway, { path, body, token, giveUpAt: until + 30_000 });
  /** Once the refund shows, the owner tries to spend from below zero: every attempt must be refused. */
  const attackWhileOverdrawn = async ({ deposit: { account } }: ReversalPlan, to: string) => {
    const deadline = Date.now() + 10_000;
    let available = await availableOf(account);
    while ((available === undefined || available >= 0) && Date.now() < deadline) {
      await sleep(20);
      available = await availableOf(account);
    }
    if (available === undefined || available >= 0) return;
    stats.overdrawn += 1;
    const amount = ATTACK_MINOR / 100;
    const attempts = await Promise.all(
      Array.from({ length: 10 }, async (_, i) => {
        const withdrawal = i % 2 === 1;
        const answer = await sendUntilAnswered(
          `/account/${account.accountId}/${withdrawal ? 'withdraw' : 'transfer'}`,
          { amount, currency: 'USD', ...(withdrawal ? {} : { to_account_id: to }) },
          account.token,
        );
        return answer?.status === 202 ? [{ withdrawal }] : [];
      }),
    );
    const accepted = attempts.flat();
    // Clients may pay the account back above zero meanwhile; only what left while it was below zero counts.
    const after = await availableOf(account);
    if (after !== undefined && after < 0) stats.spentWhileOverdrawn += accepted.length;
    // A withdrawal accepted is paid out through the sandbox, as the ledger asks it to.
    stats.payouts += accepted.filter(({ withdrawal }) => withdrawal).length;
  };

  const span = Math.max(1000, (until - Date.now()) * 0.6);
  await Promise.all(
    plans.map(async (plan) => {
      await sleep(Math.random() * span);
      if (plan.spendFirst) {
        await spendAll(plan, plan.spendFirst.to);
        // Its settlement and the clients' transfers in between; then the provider takes the deposit back.
        await sleep(300);
      }
      for (const step of plan.steps) {
        try {
          await take(plan, step);
        } catch (error) {
          stats.failedCalls.push(`${plan.scenario}: ${(error as Error).message}`);
        }
      }
      if (plan.spendFirst) await attackWhileOverdrawn(plan, plan.spendFirst.to);
    }),
  );
  return stats;
}

/** Each plan's deposit as the ledger has it: its status, what its reversals took back, how many are pending. */
async function reversalsOf(context: Pick<BankDrillContext, 'ledgerDb'>, plans: readonly ReversalPlan[]) {
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
    [plans.map((plan) => plan.deposit.depositId)],
  );
  const byDeposit = new Map(rows.map((row) => [row.original_transaction_id, row]));
  const wrong = plans.filter((plan) => {
    const found = byDeposit.get(plan.deposit.depositId);
    return (
      !found ||
      found.deposit_status !== 'completed' ||
      BigInt(found.reversed) !== plan.expectedReversedMinor ||
      Number(found.pending) !== 0
    );
  });
  return { byDeposit, wrong };
}

/** How many plans the ledger has not (yet) reversed as planned. */
export async function reversalsNotAsPlanned(
  context: Pick<BankDrillContext, 'ledgerDb'>,
  plans: readonly ReversalPlan[],
): Promise<number> {
  return (await reversalsOf(context, plans)).wrong.length;
}

/** The reversals the ledger booked for each plan: exactly what the provider took back, once, nothing pending. */
export async function checkReversals(
  context: Pick<BankDrillContext, 'ledgerDb'>,
  plans: readonly ReversalPlan[],
): Promise<Check[]> {
  const { byDeposit, wrong } = await reversalsOf(context, plans);
  const expected = plans.reduce((sum, plan) => sum + plan.expectedReversedMinor, 0n);
  return [
    {
      name: 'each refund and dispute took effect once (duplicates, reordering, caps)',
      ok: wrong.length === 0,
      detail:
        wrong.length === 0
          ? `${plans.filter((p) => p.steps.length > 0).length} deposits refunded or disputed at the sandbox, ${expected} minor units reversed as planned, none left pending, every deposit completed`
          : wrong
              .map((plan) => {
                const found = byDeposit.get(plan.deposit.depositId);
                return `${plan.scenario}: ${found?.reversed ?? 'nothing'} reversed (${found?.pending ?? 0} pending, deposit ${found?.deposit_status ?? 'missing'}), ${plan.expectedReversedMinor} expected`;
              })
              .join('; '),
      discrepancies: wrong.length,
    },
  ];
}
