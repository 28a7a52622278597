import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import { expect } from 'chai';
import Stripe from 'stripe';
import { createLogger, createMemoryBus, loadConfig, verifyWebhookSignature } from '@payments/service-kit';
import { eventually } from '@payments/testkit';
import { ProviderSandboxConfigSchema, startProviderSandbox } from '../src/index.js';

const SECRET = 'whsec_sandbox_stripe_api_test';
const KEY = 'sk_test_sandbox_stripe_api_test';
const silent = createLogger('provider-sandbox-test', 'silent');

interface Received {
  event: Stripe.Event;
  verified: boolean;
}

/** Stands in for webhook-ingest: keeps every event in the order it came, with whether its signature verifies. */
async function startIngest() {
  const received: Received[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      const signature = String(req.headers['provider-signature'] ?? '');
      const verified = verifyWebhookSignature(raw, signature, [SECRET], 300).ok;
      received.push({ event: JSON.parse(raw) as Stripe.Event, verified });
      res.writeHead(200).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    /** The events about one object (a payment intent, a payout, a transfer), in the order they arrived. */
    about: (objectId: string) =>
      received.filter((r) => (r.event.data.object as { id?: string }).id === objectId),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** A sandbox playing Stripe, sending its events to `ingestUrl`, and stripe-node pointed at it. */
async function startStripeSandbox(ingestUrl: string, env: Record<string, string>) {
  const bus = createMemoryBus(silent, { deployment: { sandbox: true } });
  const config = loadConfig(ProviderSandboxConfigSchema, {
    PORT: '0',
    NODE_ENV: 'test',
    LOG_LEVEL: 'silent',
    WEBHOOK_INGEST_URL: ingestUrl,
    SANDBOX_WEBHOOK_SECRET: SECRET,
    SANDBOX_API_KEY: KEY,
    SANDBOX_ENABLED: 'true',
    ...env,
  });
  const service = await startProviderSandbox(config, { bus, logger: silent });
  return {
    port: service.port,
    stripe: new Stripe(KEY, {
      host: '127.0.0.1',
      port: service.port,
      protocol: 'http',
      maxNetworkRetries: 0,
    }),
    async stop() {
      await service.stop();
      await bus.close();
    },
  };
}

describe("provider-sandbox: Stripe's API, through the stripe library", () => {
  let ingest: Awaited<ReturnType<typeof startIngest>>;
  let stop: () => Promise<void>;
  let stripe: Stripe;
  let port: number;

  before(async () => {
    ingest = await startIngest();
    // Every PaymentIntent here is confirmed (or not) by the test alone.
    ({ port, stripe, stop } = await startStripeSandbox(ingest.url, { SANDBOX_AUTO_CONFIRM: 'false' }));
  });

  after(async () => {
    await stop?.();
    await ingest?.close();
  });

  const eventsOf = async (paymentIntentId: string, count: number) => {
    const found = await eventually(
      async () => ingest.about(paymentIntentId),
      (events) => events.length >= count,
    );
    expect(
      found.every((r) => r.verified),
      'every event signed with the webhook secret',
    ).to.equal(true);
    return found.map((r) => r.event);
  };

  it('creates a PaymentIntent and confirms it with pm_card_visa: succeeded, and the events in order', async () => {
    const transactionId = randomUUID();
    const created = await stripe.paymentIntents.create({
      amount: 1050,
      currency: 'usd',
      metadata: { transaction_id: transactionId },
    });
    expect(created).to.include({ object: 'payment_intent', amount: 1050, currency: 'usd' });
    expect(created.status).to.equal('requires_payment_method');
    expect(created.client_secret).to.match(new RegExp(`^${created.id}_secret_`));
    expect(created.metadata).to.deep.equal({ transaction_id: transactionId });

    const confirmed = await stripe.paymentIntents.confirm(created.id, { payment_method: 'pm_card_visa' });
    expect(confirmed).to.include({ status: 'succeeded', amount_received: 1050 });
    expect((await stripe.paymentIntents.retrieve(created.id)).status).to.equal('succeeded');

    const events = await eventsOf(created.id, 2);
    expect(events.map((e) => e.type)).to.deep.equal(['payment_intent.created', 'payment_intent.succeeded']);
    expect(events[1]?.data.object).to.deep.include({
      status: 'succeeded',
      metadata: { transaction_id: transactionId },
    });
  });

  it('declines pm_card_chargeDeclined and insufficient funds as Stripe does; another method then succeeds', async () => {
    const created = await stripe.paymentIntents.create({ amount: 2000, currency: 'eur' });
    const declined = await stripe.paymentIntents
      .confirm(created.id, { payment_method: 'pm_card_chargeDeclined' })
      .then(
        () => null,
        (error: unknown) => error,
      );
    expect(declined).to.be.instanceOf(Stripe.errors.StripeCardError);
    expect(declined).to.include({ statusCode: 402, code: 'card_declined', decline_code: 'generic_decline' });
    const poor = await stripe.paymentIntents
      .confirm(created.id, { payment_method: 'pm_card_chargeDeclinedInsufficientFunds' })
      .then(
        () => null,
        (error: unknown) => error as Stripe.errors.StripeCardError,
      );
    expect(poor?.decline_code).to.equal('insufficient_funds');
    const after = await stripe.paymentIntents.retrieve(created.id);
    expect(after.status).to.equal('requires_payment_method');
    expect(after.last_payment_error).to.include({
      code: 'card_declined',
      message: 'Your card has insufficient funds.',
    });

    expect(
      (await stripe.paymentIntents.confirm(created.id, { payment_method: 'pm_card_visa' })).status,
    ).to.equal('succeeded');
    const events = await eventsOf(created.id, 4);
    expect(events.map((e) => e.type)).to.deep.equal([
      'payment_intent.created',
      'payment_intent.payment_failed',
      'payment_intent.payment_failed',
      'payment_intent.succeeded',
    ]);
  });

  it('cancels a PaymentIntent with its reason, and refuses to cancel one that succeeded', async () => {
    const open = await stripe.paymentIntents.create({ amount: 500, currency: 'usd' });
    const canceled = await stripe.paymentIntents.cancel(open.id, { cancellation_reason: 'abandoned' });
    expect(canceled).to.include({ status: 'canceled', cancellation_reason: 'abandoned' });
    expect((await eventsOf(open.id, 2)).map((e) => e.type)).to.deep.equal([
      'payment_intent.created',
      'payment_intent.canceled',
    ]);

    const paid = await stripe.paymentIntents.create({
      amount: 700,
      currency: 'usd',
      payment_method: 'pm_card_visa',
      confirm: true,
    });
    expect(paid.status).to.equal('succeeded');
    const refused = await stripe.paymentIntents.cancel(paid.id).then(
      () => null,
      (error: unknown) => error as Stripe.errors.StripeInvalidRequestError,
    );
    expect(refused).to.be.instanceOf(Stripe.errors.StripeInvalidRequestError);
    expect(refused).to.include({ statusCode: 400, code: 'payment_intent_unexpected_state' });
  });

  it('answers a repeated Idempotency-Key with the first answer, once, and refuses it with other parameters', async () => {
    const idempotencyKey = `deposit-${randomUUID()}`;
    const params = { amount: 4200, currency: 'usd', metadata: { transaction_id: randomUUID() } };
    const [first, second] = await Promise.all([
      stripe.paymentIntents.create(params, { idempotencyKey }),
      stripe.paymentIntents.create(params, { idempotencyKey }),
    ]);
    expect(second.id).to.equal(first.id);
    const third = await stripe.paymentIntents.create(params, { idempotencyKey });
    expect(third.id).to.equal(first.id);
    expect(third.lastResponse.headers['idempotent-replayed']).to.equal('true');
    await eventsOf(first.id, 1);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(ingest.about(first.id), 'one payment_intent.created').to.have.length(1);

    const other = await stripe.paymentIntents.create({ ...params, amount: 4300 }, { idempotencyKey }).then(
      () => null,
      (error: unknown) => error,
    );
    expect(other).to.be.instanceOf(Stripe.errors.StripeIdempotencyError);
  });

  describe('Connect: paying a user out through their connected account', () => {
    const connected = async (accountNumber?: string) =>
      stripe.accounts.create({
        type: 'express',
        country: 'US',
        metadata: { user_id: randomUUID() },
        ...(accountNumber && {
          external_account: {
            object: 'bank_account',
            country: 'US',
            currency: 'usd',
            account_number: accountNumber,
            routing_number: '110000000',
          },
        }),
      });
    const fund = (account: string, amount: number, transactionId: string) =>
      stripe.transfers.create({
        amount,
        currency: 'usd',
        destination: account,
        metadata: { transaction_id: transactionId },
        transfer_group: transactionId,
      });

    it('transfers to the account, pays out from it to its bank, and says so with events naming the account', async () => {
      const account = await connected();
      expect(account).to.include({ object: 'account', type: 'express', payouts_enabled: true });
      const link = await stripe.accountLinks.create({
        account: account.id,
        type: 'account_onboarding',
        refresh_url: 'http://127.0.0.1:8080/payout-account',
        return_url: 'http://127.0.0.1:8080/payout-account',
      });
      expect(link.url).to.equal('http://127.0.0.1:8080/payout-account');
      const transactionId = randomUUID();
      const transfer = await fund(account.id, 2500, transactionId);
      expect(transfer).to.include({
        object: 'transfer',
        amount: 2500,
        destination: account.id,
        reversed: false,
      });
      const payout = await stripe.payouts.create(
        { amount: 2500, currency: 'usd', metadata: { transaction_id: transactionId } },
        { stripeAccount: account.id },
      );
      expect(payout).to.include({ object: 'payout', status: 'pending', amount: 2500 });
      const events = await eventsOf(payout.id, 2);
      expect(events.map((e) => e.type)).to.deep.equal(['payout.created', 'payout.paid']);
      expect(events.map((e) => e.account)).to.deep.equal([account.id, account.id]);
      expect(events[1]?.data.object).to.deep.include({
        status: 'paid',
        metadata: { transaction_id: transactionId },
      });
      // Paid out, the account holds nothing more to pay out.
      const again = await stripe.payouts
        .create({ amount: 1, currency: 'usd' }, { stripeAccount: account.id })
        .catch((error: unknown) => error);
      expect(again).to.include({ statusCode: 400, code: 'balance_insufficient' });
    });

    it("fails a payout to Stripe's closed test bank account, and its money can then be taken back", async () => {
      const account = await connected('000111111113');
      const transactionId = randomUUID();
      const transfer = await fund(account.id, 1800, transactionId);
      const payout = await stripe.payouts.create(
        { amount: 1800, currency: 'usd', metadata: { transaction_id: transactionId } },
        { stripeAccount: account.id },
      );
      const events = await eventsOf(payout.id, 2);
      expect(events[1]?.type).to.equal('payout.failed');
      expect(events[1]?.data.object).to.deep.include({ status: 'failed', failure_code: 'account_closed' });
      const reversal = await stripe.transfers.createReversal(transfer.id, {
        metadata: { transaction_id: transactionId },
      });
      expect(reversal).to.include({ object: 'transfer_reversal', amount: 1800, transfer: transfer.id });
      expect(await stripe.transfers.retrieve(transfer.id)).to.include({
        reversed: true,
        amount_reversed: 1800,
      });
      const twice = await stripe.transfers.createReversal(transfer.id).catch((error: unknown) => error);
      expect(twice).to.be.instanceOf(Stripe.errors.StripeInvalidRequestError);
    });

    it('refuses a transfer to an account it does not know, and a payout without Stripe-Account', async () => {
      const unknown = await fund('acct_missing', 100, randomUUID()).catch((error: unknown) => error);
      expect(unknown).to.include({ statusCode: 400, code: 'resource_missing', param: 'destination' });
      const platform = await stripe.payouts
        .create({ amount: 100, currency: 'usd' })
        .catch((error: unknown) => error);
      expect(platform).to.include({ statusCode: 400 });
    });
  });

  it('refuses a wrong key, an unknown PaymentIntent and a missing amount with Stripe’s errors', async () => {
    const stranger = new Stripe('sk_test_wrong', {
      host: '127.0.0.1',
      port,
      protocol: 'http',
      maxNetworkRetries: 0,
    });
    const unauthenticated = await stranger.paymentIntents.create({ amount: 100, currency: 'usd' }).then(
      () => null,
      (error: unknown) => error,
    );
    expect(unauthenticated).to.be.instanceOf(Stripe.errors.StripeAuthenticationError);

    const missing = await stripe.paymentIntents.retrieve('pi_missing').then(
      () => null,
      (error: unknown) => error as Stripe.errors.StripeInvalidRequestError,
    );
    expect(missing).to.include({ statusCode: 404, code: 'resource_missing' });

    const incomplete = await stripe.paymentIntents
      .create({ currency: 'usd' } as unknown as Stripe.PaymentIntentCreateParams)
      .then(
        () => null,
        (error: unknown) => error as Stripe.errors.StripeInvalidRequestError,
      );
    expect(incomplete).to.include({ statusCode: 400, code: 'parameter_missing', param: 'amount' });
  });
});

describe('provider-sandbox: paying what no client confirmed (SANDBOX_AUTO_CONFIRM)', () => {
  let ingest: Awaited<ReturnType<typeof startIngest>>;
  let sandbox: Awaited<ReturnType<typeof startStripeSandbox>>;

  before(async () => {
    ingest = await startIngest();
    sandbox = await startStripeSandbox(ingest.url, { SANDBOX_DELAY_MS: '200' });
  });
  after(async () => {
    await sandbox?.stop();
    await ingest?.close();
  });

  const typesOf = async (paymentIntentId: string, count: number) =>
    (
      await eventually(
        async () => ingest.about(paymentIntentId),
        (found) => found.length >= count,
      )
    ).map((r) => r.event.type);

  it('pays a PaymentIntent nobody confirmed within SANDBOX_DELAY_MS with pm_card_visa', async () => {
    const created = await sandbox.stripe.paymentIntents.create({ amount: 700, currency: 'usd' });
    expect((await sandbox.stripe.paymentIntents.retrieve(created.id)).status).to.equal(
      'requires_payment_method',
    );
    expect(await typesOf(created.id, 2)).to.deep.equal([
      'payment_intent.created',
      'payment_intent.succeeded',
    ]);
    const paid = await sandbox.stripe.paymentIntents.retrieve(created.id);
    expect(paid).to.include({ status: 'succeeded', payment_method: 'pm_card_visa', amount_received: 700 });
  });

  it('declines one whose minor units end in 13, then cancels it as abandoned', async () => {
    const created = await sandbox.stripe.paymentIntents.create({ amount: 1013, currency: 'usd' });
    expect(await typesOf(created.id, 3)).to.deep.equal([
      'payment_intent.created',
      'payment_intent.payment_failed',
      'payment_intent.canceled',
    ]);
    const ended = await sandbox.stripe.paymentIntents.retrieve(created.id);
    expect(ended).to.include({ status: 'canceled', cancellation_reason: 'abandoned' });
  });

  it('leaves alone a PaymentIntent a client confirmed or tried to: its payer is there', async () => {
    const created = await sandbox.stripe.paymentIntents.create({ amount: 900, currency: 'usd' });
    const declined = await sandbox.stripe.paymentIntents
      .confirm(created.id, { payment_method: 'pm_card_chargeDeclined' })
      .catch((error: unknown) => error);
    expect(declined).to.be.instanceOf(Stripe.errors.StripeCardError);
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(await typesOf(created.id, 2)).to.deep.equal([
      'payment_intent.created',
      'payment_intent.payment_failed',
    ]);
    expect((await sandbox.stripe.paymentIntents.retrieve(created.id)).status).to.equal(
      'requires_payment_method',
    );
  });

  it("lets a payer's client confirm with the publishable key and the client secret, and nothing else", async () => {
    const created = await sandbox.stripe.paymentIntents.create({ amount: 1200, currency: 'usd' });
    const payer = new Stripe('pk_test_sandbox_development_only', {
      host: '127.0.0.1',
      port: sandbox.port,
      protocol: 'http',
      maxNetworkRetries: 0,
    });
    const confirm = (clientSecret: string) =>
      payer.paymentIntents.confirm(created.id, {
        payment_method: 'pm_card_visa',
        client_secret: clientSecret,
      } as Stripe.PaymentIntentConfirmParams);
    const guessed = await confirm(`${created.id}_secret_guessed`).catch((error: unknown) => error);
    expect(guessed).to.include({ statusCode: 404, code: 'resource_missing' });
    const read = await payer.paymentIntents.retrieve(created.id).catch((error: unknown) => error);
    expect(read).to.include({ statusCode: 403 });
    const paid = await confirm(created.client_secret as string);
    expect(paid.status).to.equal('succeeded');
  });
});
