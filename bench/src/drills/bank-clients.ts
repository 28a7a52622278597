import { randomUUID } from 'node:crypto';
import { sleep } from '../harness/load.js';
import { signUp, type BenchClient } from '../harness/users.js';
import type { BankDrillContext } from './bank-drill.js';
import type { DrillContext } from './drill-context.js';
import { sendStorm } from './webhook-storm.js';

export interface BankAccount {
  accountId: string;
  userId: string;
  /** The owner's client, for set-up and reads. */
  client: BenchClient;
  /** The owner's bearer token, for the raw requests of the clients under faults (runBankClients). */
  token: string;
}

/** A deposit the ledger has asked the provider for: the PaymentIntent its payer pays at the sandbox. */
export interface RequestedDeposit {
  account: BankAccount;
  depositId: string;
  amountMinor: number;
  paymentIntent: string;
}

/** The test payment methods the drill's payers pay with: a card, or one whose holder disputes the charge at once. */
export type PaymentMethod = 'pm_card_visa' | 'pm_card_createDispute';

/** `count` users with one USD account each. */
export async function openAccounts(
  context: Pick<DrillContext, 'target'>,
  count: number,
): Promise<BankAccount[]> {
  return Promise.all(
    Array.from({ length: count }, async () => {
      const { userId, client, token } = await signUp(context.target.gatewayUrl, 'drill');
      const account = await client.accounts.open({ currency: 'USD' });
      return { accountId: account.id, userId, client, token };
    }),
  );
}

/**
 * `count` users with one USD account each, funded the way a customer funds one where the drill plays the provider:
 * a deposit through the gateway, confirmed by a signed provider webhook; resolves once every deposit is credited.
 */
export async function openFundedAccounts(
  context: DrillContext,
  count: number,
  amountMinor: number,
): Promise<BankAccount[]> {
  const { gateway, target, ledgerDb } = context;
  const accounts = await openAccounts(context, count);
  const deposits = await Promise.all(
    accounts.map(async (account) => {
      const transaction = await account.client.money.deposit(account.accountId, {
        amount: amountMinor / 100,
        currency: 'USD',
      });
      return { transactionId: transaction.id, amount: amountMinor };
    }),
  );
  // Raw: the provider's webhooks (the drill plays the provider), which the client does not send.
  await sendStorm(gateway, target.webhookSecret, deposits, { rate: 100, giveUpAt: Date.now() + 60_000 });
  const ids = deposits.map((deposit) => deposit.transactionId);
  const deadline = Date.now() + 60_000;
  while ((await ledgerDb.completedAmong(ids)).length < ids.length) {
    if (Date.now() > deadline) throw new Error('the funding deposits were not credited within 60 s');
    await sleep(50);
  }
  return accounts;
}

/**
 * A deposit of `amountMinor` on each account through the gateway; resolves once the ledger has asked the sandbox
 * for each one's PaymentIntent (the owner sees it on the transaction), all of them still unpaid.
 */
export async function requestDeposits(
  accounts: readonly BankAccount[],
  amountMinor: number,
): Promise<RequestedDeposit[]> {
  return Promise.all(
    accounts.map(async (account) => {
      const { client } = account;
      const { id } = await client.money.deposit(account.accountId, {
        amount: amountMinor / 100,
        currency: 'USD',
      });
      for (const deadline = Date.now() + 60_000; Date.now() < deadline; await sleep(50)) {
        const shown = await client.transactions.get(id);
        if (shown.provider_payment)
          return { account, depositId: id, amountMinor, paymentIntent: shown.provider_payment.reference };
      }
      throw new Error(`the ledger did not ask the sandbox for deposit ${id} within 60 s`);
    }),
  );
}

/**
 * Pays each deposit at the sandbox with its payment method, as its payer's client would (stripe-node, as with
 * Stripe.js); resolves once the ledger has completed every one.
 */
export async function payDeposits(
  context: Pick<BankDrillContext, 'stripe' | 'ledgerDb'>,
  payments: readonly { deposit: RequestedDeposit; paymentMethod: PaymentMethod }[],
): Promise<void> {
  await Promise.all(
    payments.map(({ deposit, paymentMethod }) =>
      context.stripe.paymentIntents.confirm(deposit.paymentIntent, { payment_method: paymentMethod }),
    ),
  );
  const ids = payments.map(({ deposit }) => deposit.depositId);
  const deadline = Date.now() + 60_000;
  while ((await context.ledgerDb.completedAmong(ids)).length < ids.length) {
    if (Date.now() > deadline)
      throw new Error('the deposits paid at the sandbox were not credited within 60 s');
    await sleep(50);
  }
}

export interface ClientStats {
  transfersAccepted: number;
  /** Refused with 422 (the source had not enough available). */
  transfersRefused: number;
  balanceReads: number;
  /** Answers of 5xx or failed connections: the outage as clients saw it. */
  failedAttempts: number;
  /** Requests repeated with the same Idempotency-Key after such a failure. */
  retries: number;
  /** Requests given up on when the drill ended, their outcome unknown to the client. */
  unresolved: number;
  unexpected: Record<string, number>;
  /** Negative balances or available balances a reader was shown. */
  negativeReads: number;
  /** The accounts those reads were of. */
  negativeReadAccounts: Set<string>;
}

/**
 * `clients` loops, each doing random transfers among the accounts (as the source's owner) and balance reads,
 * until `until`. A transfer whose answer is lost or 5xx is retried with its Idempotency-Key, as a careful client
 * would, so that every transfer the client meant to make has a definite outcome.
 */
export async function runBankClients(
  context: Pick<DrillContext, 'gateway'>,
  accounts: readonly BankAccount[],
  clients: number,
  until: number,
): Promise<ClientStats> {
  const stats: ClientStats = {
    transfersAccepted: 0,
    transfersRefused: 0,
    balanceReads: 0,
    failedAttempts: 0,
    retries: 0,
    unresolved: 0,
    unexpected: {},
    negativeReads: 0,
    negativeReadAccounts: new Set(),
  };
  const { gateway } = context;
  // Raw: the load under faults; each transfer is retried with its own fixed Idempotency-Key on this schedule, and
  // every attempt is counted, which the client's own retries would hide.
  const pick = () => accounts[Math.floor(Math.random() * accounts.length)] as BankAccount;
  const unexpected = (what: string) => (stats.unexpected[what] = (stats.unexpected[what] ?? 0) + 1);
  const retryable = (status: number | undefined) => status === undefined || status >= 500;

  const transfer = async () => {
    const from = pick();
    let to = pick();
    while (to === from) to = pick();
    const body = JSON.stringify({
      amount: (100 + Math.floor(Math.random() * 4900)) / 100,
      currency: 'USD',
      to_account_id: to.accountId,
    });
    const key = randomUUID();
    for (let attempt = 0; ; attempt += 1) {
      const answer = await gateway
        .send({
          method: 'POST',
          path: `/account/${from.accountId}/transfer`,
          headers: {
            authorization: `Bearer ${from.token}`,
            'content-type': 'application/json',
            'idempotency-key': key,
          },
          body,
        })
        .catch(() => null);
      if (!retryable(answer?.status)) {
        if (answer?.status === 202) stats.transfersAccepted += 1;
        else if (answer?.status === 422) stats.transfersRefused += 1;
        else unexpected(`transfer ${answer?.status}`);
        return;
      }
      stats.failedAttempts += 1;
      // After the drill ends, a pending retry still runs for a while: its outcome must become known.
      if (Date.now() > until + 30_000) {
        stats.unresolved += 1;
        return;
      }
      stats.retries += 1;
      await sleep(Math.min(100 * 2 ** attempt, 1000));
    }
  };

  const readBalance = async () => {
    const account = pick();
    const answer = await gateway
      .send({
        method: 'GET',
        path: `/account/${account.accountId}/balance`,
        headers: { authorization: `Bearer ${account.token}` },
      })
      .catch(() => null);
    if (answer?.status === 200) {
      stats.balanceReads += 1;
      const balance = JSON.parse(answer.body) as { balance: number; available_balance: number };
      if (balance.balance < 0 || balance.available_balance < 0) {
        stats.negativeReads += 1;
        stats.negativeReadAccounts.add(account.accountId);
      }
    } else if (retryable(answer?.status)) {
      stats.failedAttempts += 1;
      await sleep(100);
    } else {
      unexpected(`balance ${answer?.status}`);
    }
  };

  await Promise.all(
    Array.from({ length: clients }, async () => {
      while (Date.now() < until) {
        if (Math.random() < 0.7) await transfer();
        else await readBalance();
      }
    }),
  );
  return stats;
}
