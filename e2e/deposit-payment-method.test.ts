import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import Stripe from 'stripe';
import { eventually, useSystem } from '@payments/testkit';
import { rawApi, sandboxStripe, signUp, type ApiResponse, type TestUser } from '@payments/test-support';

interface Payer extends TestUser {
  accountId: string;
}

/** The sandbox pays a PaymentIntent nobody tried to pay this long after it was made (SANDBOX_DELAY_MS). */
const AUTO_PAY_DELAY_MS = 200;

/**
 * A deposit that names its payment method (ADR 0120), through the real system: the ledger creates the PaymentIntent
 * at the sandbox already confirmed with it, as Stripe's confirm=true does; a decline leaves the deposit pending with
 * the reason, and only the provider's event of a payment credits it. The sandbox pays, by itself, every PaymentIntent
 * nobody tried to pay within AUTO_PAY_DELAY_MS: a deposit paid with a declined card must never be among them.
 */
describe('a deposit paid with the payment method it names, end to end', function () {
  this.timeout(90_000);

  const system = useSystem(
    { serviceEnv: { 'provider-sandbox': { SANDBOX_DELAY_MS: String(AUTO_PAY_DELAY_MS) } } },
    { booksBalance: true },
  );
  const api = rawApi(system);
  let stripe: Stripe;

  before(() => {
    stripe = sandboxStripe(system);
  });

  const payer = async (): Promise<Payer> => {
    const user = await signUp(system.gatewayUrl);
    const { id } = await user.client.accounts.open({ currency: 'USD' });
    return { ...user, accountId: id };
  };

  const deposit = (who: Payer, body: Record<string, unknown>, headers?: Record<string, string>) =>
    api.post(`/account/${who.accountId}/deposit`, { currency: 'USD', ...body }, who.token, headers);

  const accepted = async (who: Payer, amount: number, paymentMethod: string) => {
    const response = await deposit(who, { amount, payment_method: paymentMethod });
    expect(response.status, response.text).to.equal(202);
    expect(response.body).to.include({ status: 'pending', amount });
    return response.body.id as string;
  };

  const get = (who: Payer, id: string) => who.client.transactions.get(id);
  const balances = (who: Payer) => who.client.balances.get(who.accountId);
  const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

  /** The attempt declined: its reason on the deposit, which stays pending. */
  const declinedAttempt = (who: Payer, id: string) =>
    eventually(
      () => get(who, id),
      (transaction) => transaction.failure_reason !== null || transaction.status !== 'pending',
    );

  const expectProblem = (response: ApiResponse, status: number, code: string, field: string) => {
    expect(response.status, response.text).to.equal(status);
    expect(response.headers.get('content-type')).to.match(/^application\/problem\+json/);
    expect(response.body.code, response.text).to.equal(code);
    expect(
      (response.body.errors as { field: string }[]).map((e) => e.field),
      response.text,
    ).to.include(field);
    expect(response.text).not.to.match(/SELECT|INSERT|constraint|at .*\.ts:/);
  };

  it('completes a deposit paid with pm_card_visa through the provider, its PaymentIntent confirmed as made', async () => {
    const alice = await payer();
    const id = await accepted(alice, 12.5, 'pm_card_visa');
    const completed = await eventually(
      () => get(alice, id),
      (transaction) => transaction.status !== 'pending',
    );
    expect(completed).to.include({ status: 'completed', failure_reason: null });
    expect(await balances(alice)).to.include({ balance: 12.5, available_balance: 12.5 });

    const reference = completed.provider_payment?.reference as string;
    const intent = await stripe.paymentIntents.retrieve(reference);
    expect(intent).to.include({ status: 'succeeded', amount: 1250, payment_method: 'pm_card_visa' });
    expect(intent.metadata).to.include({ transaction_id: id });
  });

  it('keeps a declined deposit pending with the reason, and never credits it, past the sandbox paying by itself', async () => {
    const alice = await payer();
    const id = await accepted(alice, 25, 'pm_card_chargeDeclined');
    const declined = await declinedAttempt(alice, id);
    expect(declined).to.include({ status: 'pending', failure_reason: 'Your card was declined.' });
    const reference = declined.provider_payment?.reference as string;
    const intent = await stripe.paymentIntents.retrieve(reference);
    expect(intent.status).to.equal('requires_payment_method');
    expect(intent.last_payment_error).to.include({ code: 'card_declined', decline_code: 'generic_decline' });

    // Well past the moment the sandbox pays (or declines and cancels) a PaymentIntent nobody tried to pay.
    await sleep(AUTO_PAY_DELAY_MS * 10);
    expect(await get(alice, id)).to.include({ status: 'pending', failure_reason: 'Your card was declined.' });
    expect((await stripe.paymentIntents.retrieve(reference)).status).to.equal('requires_payment_method');
    expect(await balances(alice)).to.include({ balance: 0, available_balance: 0 });

    const poor = await accepted(alice, 7, 'pm_card_chargeDeclinedInsufficientFunds');
    expect(await declinedAttempt(alice, poor)).to.include({
      status: 'pending',
      failure_reason: 'Your card has insufficient funds.',
    });
  });

  it('completes a declined deposit once when its payer pays it again with a good card', async () => {
    const alice = await payer();
    const id = await accepted(alice, 40, 'pm_card_chargeDeclined');
    const declined = await declinedAttempt(alice, id);
    expect(declined.status).to.equal('pending');
    const payment = declined.provider_payment as { reference: string; client_secret: string };

    // The payer's app, as Stripe.js: the publishable key and the deposit's client secret, another method.
    const sandbox = new URL(system.urls['provider-sandbox']);
    const payerStripe = new Stripe('pk_test_sandbox_development_only', {
      host: sandbox.hostname,
      port: Number(sandbox.port),
      protocol: 'http',
      maxNetworkRetries: 0,
    });
    const paid = await payerStripe.paymentIntents.confirm(payment.reference, {
      payment_method: 'pm_card_visa',
      client_secret: payment.client_secret,
    } as Stripe.PaymentIntentConfirmParams);
    expect(paid.status).to.equal('succeeded');

    const completed = await eventually(
      () => get(alice, id),
      (transaction) => transaction.status !== 'pending',
    );
    expect(completed).to.include({ status: 'completed', failure_reason: null });
    await sleep(AUTO_PAY_DELAY_MS * 3);
    expect(await balances(alice)).to.include({ balance: 40, available_balance: 40 });
    const history = await alice.client.transactions.listPage({ account_id: alice.accountId });
    expect(history.data.map((t) => [t.type, t.status])).to.deep.equal([['deposit', 'completed']]);
  });

  it('refuses a payment_method of the wrong shape with a 400, creating nothing', async () => {
    const alice = await payer();
    for (const bad of [
      'card_visa',
      'pm_',
      'pm_card visa',
      'pm_card-visa',
      `pm_${'a'.repeat(253)}`,
      42,
      null,
      '',
    ]) {
      const response = await deposit(alice, { amount: 5, payment_method: bad });
      expectProblem(response, 400, 'VALIDATION_ERROR', 'payment_method');
    }
    // Nothing was created: no transaction, and nothing asked of the provider for it.
    const history = await alice.client.transactions.listPage({ account_id: alice.accountId });
    expect(history.data).to.deep.equal([]);
    expect(await balances(alice)).to.include({ balance: 0, available_balance: 0 });
  });

  it('fails a deposit whose payment method the provider does not know, crediting nothing', async () => {
    const alice = await payer();
    const id = await accepted(alice, 9, 'pm_card_unknownToTheProvider');
    const failed = await eventually(
      () => get(alice, id),
      (transaction) => transaction.status !== 'pending',
    );
    expect(failed.status).to.equal('failed');
    expect(failed.failure_reason).to.match(/^The payment provider refused it: No such PaymentMethod/);
    expect(await balances(alice)).to.include({ balance: 0, available_balance: 0 });
  });

  it('answers a repeated request once, and refuses another payment method under the same Idempotency-Key', async () => {
    const alice = await payer();
    const key = randomUUID();
    const first = await deposit(
      alice,
      { amount: 3, payment_method: 'pm_card_visa' },
      { 'idempotency-key': key },
    );
    expect(first.status, first.text).to.equal(202);
    const again = await deposit(
      alice,
      { amount: 3, payment_method: 'pm_card_visa' },
      { 'idempotency-key': key },
    );
    expect(again.status, again.text).to.equal(202);
    expect(again.headers.get('idempotent-replayed')).to.equal('true');
    expect(again.body.id).to.equal(first.body.id);
    const other = await deposit(
      alice,
      { amount: 3, payment_method: 'pm_card_chargeDeclined' },
      { 'idempotency-key': key },
    );
    expect(other.status, other.text).to.equal(409);
    expect(other.body.code).to.equal('CONFLICT');

    await eventually(
      () => get(alice, first.body.id as string),
      (transaction) => transaction.status === 'completed',
    );
    await sleep(AUTO_PAY_DELAY_MS * 3);
    expect(await balances(alice)).to.include({ balance: 3, available_balance: 3 });
  });
});
