import { expect } from 'chai';
import Stripe from 'stripe';
import { eventually, startSystem, type TestSystem } from '@payments/testkit';
import { apiClient, type ApiClient } from './api-client.js';
import { expectBooksBalance } from './support/ledger-audit.js';

interface Payer {
  token: string;
  accountId: string;
}

/**
 * A deposit's life at the provider, through the real system: the ledger creates a PaymentIntent at the sandbox
 * (Stripe's API, through the stripe library) and the client pays it there, as Stripe.js would, with Stripe's test
 * payment methods; Stripe's events come back to webhook-ingest and settle it.
 */
describe('deposits paid at the provider (the sandbox plays Stripe), end to end', function () {
  this.timeout(120_000);
  let system: TestSystem;
  let api: ApiClient;
  let stripe: Stripe;
  let failures = 0;

  before(async () => {
    // Nobody pays on their own here: each test pays as the client would, or does not.
    system = await startSystem({ serviceEnv: { 'provider-sandbox': { SANDBOX_AUTO_CONFIRM: 'false' } } });
    api = apiClient(system.gatewayUrl);
    const sandbox = new URL(system.urls['provider-sandbox']);
    stripe = new Stripe(system.sandboxApiKey, {
      host: sandbox.hostname,
      port: Number(sandbox.port),
      protocol: 'http',
      maxNetworkRetries: 0,
    });
  });
  afterEach(async function () {
    if (this.currentTest?.state === 'failed') failures += 1;
    await expectBooksBalance(system.urls.ledger);
  });
  after(async () => {
    if (failures > 0) console.error(system?.logs());
    await system?.stop();
  });

  const payer = async (): Promise<Payer> => {
    const user = await api.signUp();
    const account = await api.post('/account', { currency: 'USD' }, user.token);
    expect(account.status, account.text).to.equal(201);
    return { token: user.token, accountId: account.body.id };
  };
  const deposit = async (who: Payer, amount: number) => {
    const accepted = await api.post(
      `/account/${who.accountId}/deposit`,
      { amount, currency: 'USD' },
      who.token,
    );
    expect(accepted.status, accepted.text).to.equal(202);
    return accepted.body.id as string;
  };
  /** The PaymentIntent the ledger created for a deposit, as its owner sees it. */
  const paymentOf = async (who: Payer, id: string, timeoutMs = 15_000) => {
    const shown = await eventually(
      () => api.get(`/transaction/${id}`, who.token),
      (r) => r.body?.provider_payment?.client_secret !== undefined,
      { timeoutMs },
    );
    return shown.body.provider_payment as { provider: string; reference: string; client_secret: string };
  };
  const settled = (who: Payer, id: string, status: string) =>
    eventually(
      () => api.get(`/transaction/${id}`, who.token),
      (r) => r.body?.status === status,
    );
  const balanceOf = async (who: Payer) =>
    (await api.get(`/account/${who.accountId}/balance`, who.token)).body.balance as number;

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
      () => api.get(`/transaction/${id}`, alice.token),
      (r) => r.body?.failure_reason !== null,
    );
    expect(noted.body).to.include({ status: 'pending', failure_reason: 'Your card has insufficient funds.' });

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
    expect(canceled.body.failure_reason).to.match(/requested_by_customer/);
    expect(await balanceOf(alice)).to.equal(0);
  });

  /** A payer whose deposit of `amount` was paid, with a payout account linked at the provider. */
  const funded = async (amount: number) => {
    const who = await payer();
    const id = await deposit(who, amount);
    const { reference } = await paymentOf(who, id);
    await stripe.paymentIntents.confirm(reference, { payment_method: 'pm_card_visa' });
    await settled(who, id, 'completed');
    const linked = await api.post('/payout-account', {}, who.token);
    expect(linked.status, linked.text).to.equal(201);
    return { who, connected: linked.body.account as string };
  };
  const withdraw = async (who: Payer, amount: number) => {
    const accepted = await api.post(
      `/account/${who.accountId}/withdraw`,
      { amount, currency: 'USD' },
      who.token,
    );
    expect(accepted.status, accepted.text).to.equal(202);
    return accepted.body.id as string;
  };

  it("pays a withdrawal out through the payer's connected account, and debits it once paid", async () => {
    const { who, connected } = await funded(50);
    expect((await stripe.accounts.retrieve(connected)).metadata).to.have.property('user_id');
    const id = await withdraw(who, 20);
    const done = await settled(who, id, 'completed');
    expect(done.body.provider_payment.reference).to.match(/^po_/);
    expect(done.body.provider_payment).not.to.have.property('client_secret');
    expect(await balanceOf(who)).to.equal(30);
  });

  it('releases the hold of a withdrawal whose payout the bank refused, crediting nothing twice', async () => {
    const { who } = await funded(50);
    // The sandbox's bank refuses an amount whose minor units end in 13.
    const id = await withdraw(who, 20.13);
    const failed = await settled(who, id, 'failed');
    expect(failed.body.failure_reason).to.match(/closed/);
    const balance = await api.get(`/account/${who.accountId}/balance`, who.token);
    expect(balance.body).to.include({ balance: 50, available_balance: 50 });
  });

  it('asks a provider that was down again once it is back: one PaymentIntent, credited once', async () => {
    await system.kill('provider-sandbox');
    const alice = await payer();
    const id = await deposit(alice, 33);
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    const meanwhile = await api.get(`/transaction/${id}`, alice.token);
    expect(meanwhile.body.status).to.equal('pending');
    expect(meanwhile.body.provider_payment).to.equal(undefined);
    await system.restart('provider-sandbox');
    const { reference } = await paymentOf(alice, id, 30_000);
    await stripe.paymentIntents.confirm(reference, { payment_method: 'pm_card_visa' });
    await settled(alice, id, 'completed');
    expect(await balanceOf(alice)).to.equal(33);
  });
});
