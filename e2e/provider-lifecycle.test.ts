import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import Stripe from 'stripe';
import {
  runPayments,
  eventually,
  auditOf,
  expectBooksBalance,
  systemBalance,
  useSystem,
} from '@payments/testkit';
import { createPaymentsClient, type PaymentsClient } from '@payments/client';
import { rawApi, sandboxStripe, signUp } from '@payments/test-support';

interface Payer {
  token: string;
  accountId: string;
  client: PaymentsClient<'1.1'>;
}

/**
 * A deposit's life at the provider, through the real system: the ledger creates a PaymentIntent at the sandbox
 * (Stripe's API, through the stripe library) and the client pays it there, as Stripe.js would, with Stripe's test
 * payment methods; Stripe's events come back to webhook-ingest and settle it.
 */
describe('deposits paid at the provider (the sandbox plays Stripe), end to end', function () {
  this.timeout(120_000);
  let stripe: Stripe;

  // Nobody pays on their own here: each test pays as the client would, or does not.
  const system = useSystem(
    { serviceEnv: { 'provider-sandbox': { SANDBOX_AUTO_CONFIRM: 'false' } } },
    { booksBalance: true },
  );
  const api = rawApi(system);

  before(async () => {
    stripe = sandboxStripe(system);
  });

  const payer = async (): Promise<Payer> => {
    const { token, client } = await signUp(system.gatewayUrl);
    const account = await client.accounts.open({ currency: 'USD' });
    return { token, client, accountId: account.id };
  };
  /** A deposit or withdrawal accepted (pending); resolves with its transaction id. */
  const move = async (operation: 'deposit' | 'withdraw', who: Payer, amount: number) => {
    const accepted = await who.client.money[operation](who.accountId, { amount, currency: 'USD' });
    expect(accepted.status).to.equal('pending');
    return accepted.id;
  };
  const deposit = (who: Payer, amount: number) => move('deposit', who, amount);
  /** The PaymentIntent the ledger created for a deposit, as its owner sees it. */
  const paymentOf = async (who: Payer, id: string, timeoutMs = 15_000) => {
    const shown = await eventually(
      () => who.client.transactions.get(id),
      (transaction) => transaction.provider_payment?.client_secret !== undefined,
      { timeoutMs },
    );
    return shown.provider_payment as { provider: string; reference: string; client_secret: string };
  };
  const settled = (who: Payer, id: string, status: string) =>
    eventually(
      () => who.client.transactions.get(id),
      (transaction) => transaction.status === status,
    );
  const balanceOf = async (who: Payer) => (await who.client.balances.get(who.accountId)).balance;

  it('creates one PaymentIntent per deposit, for its amount, with the transaction id, shown to the owner alone', async () => {
    const alice = await payer();
    const id = await deposit(alice, 12.5);
    const payment = await paymentOf(alice, id);
    expect(payment.provider).to.equal('stripe');
    const intent = await stripe.paymentIntents.retrieve(payment.reference);
    expect(intent).to.include({ amount: 1250, currency: 'usd', client_secret: payment.client_secret });
    expect(intent.metadata).to.deep.equal({ transaction_id: id });
    const mallory = await payer();
    const stolen = await api.get(`/transaction/${id}`, mallory.token);
    expect(stolen.status).to.equal(403);
    expect(stolen.text).not.to.include(payment.client_secret);
  });

  it('keeps a deposit pending through a declined attempt, and credits it once when a retry succeeds', async () => {
    const alice = await payer();
    const id = await deposit(alice, 40);
    const { reference } = await paymentOf(alice, id);
    const declined = await stripe.paymentIntents
      .confirm(reference, { payment_method: 'pm_card_chargeDeclinedInsufficientFunds' })
      .catch((error: unknown) => error);
    expect(declined).to.be.instanceOf(Stripe.errors.StripeCardError);
    const noted = await eventually(
      () => alice.client.transactions.get(id),
      (transaction) => transaction.failure_reason !== null,
    );
    expect(noted).to.include({ status: 'pending', failure_reason: 'Your card has insufficient funds.' });

    const paid = await stripe.paymentIntents.confirm(reference, { payment_method: 'pm_card_visa' });
    expect(paid.status).to.equal('succeeded');
    await settled(alice, id, 'completed');
    expect(await balanceOf(alice)).to.equal(40);
    // A second success for the same payment (a redelivery) changes nothing.
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(await balanceOf(alice)).to.equal(40);
  });

  it('cancels the deposit when its PaymentIntent is canceled at the provider, crediting nothing', async () => {
    const alice = await payer();
    const id = await deposit(alice, 15);
    const { reference } = await paymentOf(alice, id);
    await stripe.paymentIntents.cancel(reference, { cancellation_reason: 'requested_by_customer' });
    const canceled = await settled(alice, id, 'canceled');
    expect(canceled.failure_reason).to.match(/requested_by_customer/);
    expect(await balanceOf(alice)).to.equal(0);
  });

  it('reverses a deposit by what each refund at the provider adds, once', async () => {
    const alice = await payer();
    const id = await deposit(alice, 25);
    const { reference } = await paymentOf(alice, id);
    await stripe.paymentIntents.confirm(reference, { payment_method: 'pm_card_visa' });
    await settled(alice, id, 'completed');
    const first = await stripe.refunds.create({ payment_intent: reference, amount: 500 });
    expect(first).to.include({ object: 'refund', amount: 500, status: 'succeeded' });
    await eventually(
      () => balanceOf(alice),
      (balance) => balance === 20,
    );
    await stripe.refunds.create({ payment_intent: reference });
    await eventually(
      () => balanceOf(alice),
      (balance) => balance === 0,
    );
    const history = await alice.client.transactions.historyPage(alice.accountId, { type: 'reversal' });
    expect(history.data.map((t) => [t.amount, t.reversal_reason])).to.have.deep.members([
      [5, 'refund'],
      [20, 'refund'],
    ]);
    const again = await stripe.refunds.create({ payment_intent: reference }).catch((error: unknown) => error);
    expect(again).to.include({ statusCode: 400, code: 'charge_already_refunded' });
  });

  it('holds a disputed deposit, takes it back when the dispute is lost and gives it back when won', async () => {
    const alice = await payer();
    const disputed = async (amount: number) => {
      const id = await deposit(alice, amount);
      const { reference } = await paymentOf(alice, id);
      // Stripe's test card for a charge its cardholder disputes at once.
      await stripe.paymentIntents.confirm(reference, { payment_method: 'pm_card_createDispute' });
      await settled(alice, id, 'completed');
      const [dispute] = (await stripe.disputes.list({ payment_intent: reference })).data;
      expect(dispute).to.include({ status: 'needs_response', amount: amount * 100 });
      return dispute!.id;
    };
    const balance = () => alice.client.balances.get(alice.accountId);

    const lost = await disputed(30);
    await eventually(balance, (b) => b.balance === 30 && b.available_balance === 0);
    await stripe.disputes.close(lost);
    await eventually(balance, (b) => b.balance === 0 && b.available_balance === 0);

    const won = await disputed(20);
    await eventually(balance, (b) => b.balance === 20 && b.available_balance === 0);
    await stripe.disputes.update(won, { evidence: { uncategorized_text: 'winning_evidence' } });
    await eventually(balance, (b) => b.balance === 20 && b.available_balance === 20);
    const reversals = await alice.client.transactions.historyPage(alice.accountId, { type: 'reversal' });
    expect(reversals.data.map((t) => t.status)).to.have.members(['completed', 'canceled']);
  });

  /** A payer whose deposit of `amount` was paid, with a payout account linked at the provider. */
  const funded = async (amount: number) => {
    const who = await payer();
    const id = await deposit(who, amount);
    const { reference } = await paymentOf(who, id);
    await stripe.paymentIntents.confirm(reference, { payment_method: 'pm_card_visa' });
    await settled(who, id, 'completed');
    const linked = await who.client.payoutAccount.link();
    return { who, connected: linked.account };
  };
  const withdraw = (who: Payer, amount: number) => move('withdraw', who, amount);

  it("pays a withdrawal out through the payer's connected account, and debits it once paid", async () => {
    const { who, connected } = await funded(50);
    expect((await stripe.accounts.retrieve(connected)).metadata).to.have.property('user_id');
    const id = await withdraw(who, 20);
    const done = await settled(who, id, 'completed');
    expect(done.provider_payment?.reference).to.match(/^po_/);
    expect(done.provider_payment).not.to.have.property('client_secret');
    expect(await balanceOf(who)).to.equal(30);
  });

  it('releases the hold of a withdrawal whose payout the bank refused, crediting nothing twice', async () => {
    const { who } = await funded(50);
    // The sandbox's bank refuses an amount whose minor units end in 13.
    const id = await withdraw(who, 20.13);
    const failed = await settled(who, id, 'failed');
    expect(failed.failure_reason).to.match(/closed/);
    const balance = await who.client.balances.get(who.accountId);
    expect(balance).to.include({ balance: 50, available_balance: 50 });
  });

  it('lets the CLI pay a deposit as the payer: a declined card shows the failed attempt, a good one completes it', async () => {
    const configHome = await mkdtemp(path.join(tmpdir(), 'payments-cli-pay-'));
    const payments = async (...args: string[]) => {
      const run = await runPayments(args, {
        PAYMENTS_API_URL: system.gatewayUrl,
        PAYMENTS_PROVIDER_URL: system.urls['provider-sandbox'],
        XDG_CONFIG_HOME: configHome,
      });
      return { code: run.code, stdout: run.stdout.trim(), stderr: run.stderr.trim() };
    };
    try {
      const username = `payer_${randomBytes(4).toString('hex')}`;
      const password = `pw-${randomBytes(6).toString('hex')}`;
      const email = `${username}@example.com`;
      expect(
        (await payments('register', '--username', username, '--email', email, '--password', password)).code,
      ).to.equal(0);
      expect((await payments('login', '--username', username, '--password', password)).code).to.equal(0);
      const account = (await payments('account', 'create', 'USD')).stdout;

      const declined = await payments('deposit', account, '25', '--pay-with', 'pm_card_chargeDeclined');
      expect(declined.code, declined.stderr).to.equal(1);
      expect(declined.stderr).to.match(/declined: Your card was declined/);
      expect(declined.stderr).to.match(/stays pending/);
      const id = /deposit ([0-9a-f-]{36})/.exec(declined.stderr)?.[1] as string;
      const client = createPaymentsClient({
        baseUrl: system.gatewayUrl,
        credentials: { username, password },
      });
      const pending = await eventually(
        () => client.transactions.get(id),
        (transaction) => transaction.failure_reason !== null,
      );
      expect(pending).to.include({ status: 'pending', failure_reason: 'Your card was declined.' });

      const paid = await payments('deposit', account, '25', '--pay-with', 'pm_card_visa');
      expect(paid.code, paid.stderr).to.equal(0);
      expect(paid.stdout).to.equal(`Deposited 25.00 to account ${account}. New balance: 25.00`);
    } finally {
      await rm(configHome, { recursive: true, force: true });
    }
  });

  it("ends with the provider's books equal to the ledger's provider-clearing account", async () => {
    // Everything above has settled: what the sandbox holds for the platform (captured, less refunded, less
    // transferred to connected accounts, plus transfers taken back) is what the ledger says is at the provider.
    const held = async () =>
      (await stripe.balance.retrieve()).available.find((b) => b.currency === 'usd')?.amount ?? 0;
    const clearing = async () =>
      -systemBalance(await auditOf(system.urls.ledger), 'provider_clearing', 'USD');
    const [provider, ledger] = await eventually(
      async () => [BigInt(await held()), await clearing()] as const,
      ([atProvider, inLedger]) => atProvider === inLedger,
      { timeoutMs: 15_000 },
    );
    expect(provider).to.equal(ledger);
    expect(provider > 0n, 'money the tests left at the provider').to.equal(true);
  });

  it('asks a provider that was down again once it is back: one PaymentIntent, credited once', async () => {
    await system.kill('provider-sandbox');
    const alice = await payer();
    const id = await deposit(alice, 33);
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    const meanwhile = await alice.client.transactions.get(id);
    expect(meanwhile.status).to.equal('pending');
    expect(meanwhile.provider_payment).to.equal(undefined);
    await system.restart('provider-sandbox');
    const { reference } = await paymentOf(alice, id, 30_000);
    await stripe.paymentIntents.confirm(reference, { payment_method: 'pm_card_visa' });
    await settled(alice, id, 'completed');
    expect(await balanceOf(alice)).to.equal(33);
  });
});

describe('an unpaid deposit expires, and its PaymentIntent is canceled at the provider (the sandbox), end to end', function () {
  this.timeout(120_000);
  let stripe: Stripe;

  const system = useSystem({
    serviceEnv: {
      ledger: { DEPOSIT_EXPIRY_SECONDS: '2', HOLD_SWEEP_INTERVAL_MS: '200' },
      'provider-sandbox': { SANDBOX_AUTO_CONFIRM: 'false' },
    },
  });

  before(async () => {
    stripe = sandboxStripe(system);
  });

  it('cancels the deposit and its PaymentIntent, which can then no longer be paid', async () => {
    const { client } = await signUp(system.gatewayUrl);
    const account = await client.accounts.open({ currency: 'USD' });
    const accepted = await client.money.deposit(account.id, { amount: 9, currency: 'USD' });
    expect(accepted.status).to.equal('pending');
    const shown = await eventually(
      () => client.transactions.get(accepted.id),
      (transaction) => transaction.provider_payment !== undefined,
    );
    const { reference } = shown.provider_payment as { reference: string };
    const canceled = await eventually(
      () => client.transactions.get(accepted.id),
      (transaction) => transaction.status === 'canceled',
      { timeoutMs: 20_000 },
    );
    expect(canceled.failure_reason).to.match(/expired/);
    const intent = await eventually(
      () => stripe.paymentIntents.retrieve(reference),
      (found) => found.status === 'canceled',
      { timeoutMs: 20_000 },
    );
    expect(intent.cancellation_reason).to.equal('abandoned');
    const late = await stripe.paymentIntents
      .confirm(reference, { payment_method: 'pm_card_visa' })
      .catch((error: unknown) => error);
    expect(late).to.include({ statusCode: 400, code: 'payment_intent_unexpected_state' });
    expect((await client.balances.get(account.id)).balance).to.equal(0);
    await expectBooksBalance(system.urls.ledger);
  });
});
