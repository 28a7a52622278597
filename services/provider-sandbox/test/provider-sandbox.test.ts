import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import type Stripe from 'stripe';
import { createEvent } from '@payments/contracts';
import { ConfigError, DEVELOPMENT_SERVICE_TOKEN, verifyWebhookSignature } from '@payments/service-kit';
import { eventually, useStarted } from '@payments/testkit';
import { API_KEY, startEventReceiver, startStripeSandbox, WEBHOOK_SECRET } from './support/stripe-sandbox.js';

describe('provider-sandbox', () => {
  const receiver = useStarted(startEventReceiver);
  const running: Awaited<ReturnType<typeof startStripeSandbox>>[] = [];

  const startSandbox = async (env: Record<string, string> = {}) => {
    const sandbox = await startStripeSandbox(receiver.url, { SANDBOX_AUTO_CONFIRM: 'false', ...env });
    running.push(sandbox);
    return sandbox;
  };

  /** A PaymentIntent paid at once, for a transaction of its own: two events about it (created, succeeded). */
  const payment = async (stripe: Stripe, transactionId = randomUUID()) => {
    await stripe.paymentIntents.create({
      amount: 700,
      currency: 'usd',
      metadata: { transaction_id: transactionId },
      payment_method: 'pm_card_visa',
      confirm: true,
    });
    return transactionId;
  };

  const deliveriesFor = (transactionId: string, count: number) =>
    eventually(
      async () => receiver.for(transactionId),
      (found) => found.length >= count,
    );

  afterEach(async () => {
    for (const sandbox of running.splice(0)) await sandbox.stop();
  });

  it('signs each event for /webhook/provider with the webhook secret, in Provider-Signature', async () => {
    const { stripe } = await startSandbox();
    const transactionId = await payment(stripe);
    const [delivery] = await deliveriesFor(transactionId, 2);
    expect(delivery?.path).to.equal('/webhook/provider');
    expect(delivery?.headers['content-type']).to.equal('application/json');
    const signature = delivery?.headers['provider-signature'] as string;
    expect(verifyWebhookSignature(delivery?.raw ?? '', signature, [WEBHOOK_SECRET])).to.deep.include({
      ok: true,
    });
    expect(verifyWebhookSignature(delivery?.raw ?? '', signature, ['whsec_other']).ok).to.equal(false);
  });

  it('retries the same event, freshly signed, while the webhook answers 5xx', async () => {
    const { stripe } = await startSandbox();
    const transactionId = randomUUID();
    receiver.answer(transactionId, [503, 500]);
    await payment(stripe, transactionId);
    const deliveries = await deliveriesFor(transactionId, 4);
    expect(deliveries.map((d) => d.event.type)).to.deep.equal([
      'payment_intent.created',
      'payment_intent.created',
      'payment_intent.created',
      'payment_intent.succeeded',
    ]);
    expect(new Set(deliveries.slice(0, 3).map((d) => d.event.id)).size).to.equal(1);
    for (const delivery of deliveries) {
      const header = delivery.headers['provider-signature'] as string;
      expect(verifyWebhookSignature(delivery.raw, header, [WEBHOOK_SECRET]).ok).to.equal(true);
    }
  });

  it('gives up on an event the webhook refuses with a 4xx at once, and sends the next', async () => {
    const { stripe } = await startSandbox();
    const transactionId = randomUUID();
    receiver.answer(transactionId, [400]);
    await payment(stripe, transactionId);
    const deliveries = await deliveriesFor(transactionId, 2);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(receiver.for(transactionId).map((d) => d.event.type)).to.deep.equal([
      'payment_intent.created',
      'payment_intent.succeeded',
    ]);
    expect(deliveries).to.have.length(2);
  });

  it('sends each event twice when SANDBOX_DUPLICATE_DELIVERY is on', async () => {
    const { stripe } = await startSandbox({ SANDBOX_DUPLICATE_DELIVERY: 'true' });
    const transactionId = await payment(stripe);
    const deliveries = await deliveriesFor(transactionId, 4);
    expect(deliveries.map((d) => d.event.type)).to.deep.equal([
      'payment_intent.created',
      'payment_intent.created',
      'payment_intent.succeeded',
      'payment_intent.succeeded',
    ]);
    expect(deliveries[0]?.event.id).to.equal(deliveries[1]?.event.id);
  });

  const forgottenEvents = async (url: string, key = API_KEY) => {
    const response = await fetch(`${url}/sandbox/forgotten-events`, {
      headers: { authorization: `Bearer ${key}` },
    });
    return { status: response.status, body: (await response.json()) as { data: Record<string, unknown>[] } };
  };

  it('never sends an event it forgets (SANDBOX_FORGET_EVENTS=1), not even as a duplicate, and lists it', async () => {
    const { service, stripe } = await startSandbox({
      SANDBOX_FORGET_EVENTS: '1',
      SANDBOX_FORGET_EVENT_TYPES: 'payment_intent.succeeded',
      SANDBOX_DUPLICATE_DELIVERY: 'true',
    });
    const transactionId = randomUUID();
    const intent = await stripe.paymentIntents.create({
      amount: 900,
      currency: 'usd',
      metadata: { transaction_id: transactionId },
      payment_method: 'pm_card_visa',
      confirm: true,
    });
    await stripe.refunds.create({ payment_intent: intent.id, amount: 200 });

    // Events go out in order: once charge.refunded (after the success) has arrived, nothing about it is on its way.
    const deliveries = await deliveriesFor(transactionId, 4);
    expect(deliveries.map((d) => d.event.type)).to.deep.equal([
      'payment_intent.created',
      'payment_intent.created',
      'charge.refunded',
      'charge.refunded',
    ]);
    expect(await stripe.paymentIntents.retrieve(intent.id)).to.include({
      status: 'succeeded',
      amount_received: 900,
    });

    const { status, body } = await forgottenEvents(service.url);
    expect(status).to.equal(200);
    expect(body.data).to.have.length(1);
    expect(body.data[0]).to.include({
      type: 'payment_intent.succeeded',
      object_id: intent.id,
      transaction_id: transactionId,
    });
    expect(body.data[0]?.id).to.match(/^evt_/);
    expect(body.data[0]?.created).to.be.a('number');
    expect((await forgottenEvents(service.url, 'sk_test_wrong')).status).to.equal(401);
  });

  it('forgets by default only the events that move money in the ledger, and none with the default ratio', async () => {
    const forgetful = await startSandbox({ SANDBOX_FORGET_EVENTS: '1', SANDBOX_DELAY_MS: '50' });
    const transactionId = randomUUID();
    const account = await forgetful.stripe.accounts.create({ type: 'express', country: 'US' });
    await forgetful.stripe.transfers.create({
      amount: 500,
      currency: 'usd',
      destination: account.id,
      metadata: { transaction_id: transactionId },
    });
    const payout = await forgetful.stripe.payouts.create(
      { amount: 500, currency: 'usd', metadata: { transaction_id: transactionId } },
      { stripeAccount: account.id },
    );
    const forgotten = await eventually(
      async () => (await forgottenEvents(forgetful.service.url)).body.data,
      (data) => data.length > 0,
    );
    expect(forgotten.map((event) => [event.type, event.object_id])).to.deep.equal([
      ['payout.paid', payout.id],
    ]);
    expect((await deliveriesFor(transactionId, 2)).map((d) => d.event.type)).to.deep.equal([
      'transfer.created',
      'payout.created',
    ]);
    expect(await forgetful.stripe.payouts.retrieve(payout.id, {}, { stripeAccount: account.id })).to.include({
      status: 'paid',
    });

    const { service, stripe } = await startSandbox();
    const paid = await payment(stripe);
    expect((await deliveriesFor(paid, 2)).map((d) => d.event.type)).to.deep.equal([
      'payment_intent.created',
      'payment_intent.succeeded',
    ]);
    expect((await forgottenEvents(service.url)).body).to.deep.equal({ data: [] });
  });

  for (const [variable, value] of [
    ['SANDBOX_FORGET_EVENTS', '1.5'],
    ['SANDBOX_FORGET_EVENTS', '-0.1'],
    ['SANDBOX_FORGET_EVENTS', 'some'],
    ['SANDBOX_FORGET_EVENT_TYPES', 'payout.paid,,payout.failed'],
    ['SANDBOX_FORGET_EVENT_TYPES', ','],
  ] as const) {
    it(`refuses ${variable}=${value} at start, naming it`, async () => {
      const failure = await startSandbox({ [variable]: value }).catch((error: unknown) => error);
      expect(failure).to.be.instanceOf(ConfigError);
      expect((failure as Error).message).to.include(variable);
    });
  }

  it('refuses to start in production when enabled: it would confirm every payment', async () => {
    const failure = await startSandbox({
      NODE_ENV: 'production',
      SANDBOX_ENABLED: 'true',
      SERVICE_TOKEN: 'a-production-service-token-of-enough-length',
    }).catch((error: unknown) => error);
    expect(failure).to.be.instanceOf(ConfigError);
    expect((failure as Error).message).to.match(/SANDBOX_ENABLED=true is refused when NODE_ENV=production/);
  });

  for (const [what, env] of [
    ['SANDBOX_ENABLED unset', { SANDBOX_ENABLED: '' }],
    ['SANDBOX_ENABLED=false', { SANDBOX_ENABLED: 'false' }],
  ] as const) {
    it(`serves no Stripe API with ${what}, but still answers /health and /ready`, async () => {
      const { service } = await startSandbox(env);
      const api = await fetch(`${service.url}/v1/payment_intents`, {
        method: 'POST',
        headers: { authorization: `Bearer ${API_KEY}` },
      });
      expect(api.status).to.equal(404);
      expect((await fetch(`${service.url}/health`)).status).to.equal(200);
      expect((await fetch(`${service.url}/ready`)).status).to.equal(200);
    });
  }

  for (const enabled of ['true', 'false']) {
    it(`empties its queue (SANDBOX_ENABLED=${enabled}), so requests routed to it do not pile up`, async () => {
      const { service, bus } = await startSandbox({ SANDBOX_ENABLED: enabled });
      const request = () =>
        createEvent(
          'WithdrawalRequested',
          {
            transaction_id: randomUUID(),
            account_id: randomUUID(),
            user_id: randomUUID(),
            amount: 250,
            currency: 'USD',
          },
          { id: randomUUID(), correlationId: `corr-${randomUUID()}` },
        );
      const requests = [request(), request()];
      for (const event of requests) await bus.publish(event);
      await eventually(
        async () =>
          (
            await fetch(`${service.url}/metrics`, {
              headers: { authorization: `Bearer ${DEVELOPMENT_SERVICE_TOKEN}` },
            })
          ).text(),
        (text) => /sandbox_requests_discarded_total\{[^}]*type="WithdrawalRequested"[^}]*\} 2/.test(text),
      );
      await service.stop();
      running.splice(0, 1);

      // Whatever the sandbox left on its queue would now reach this consumer; nothing was answered either.
      const left: string[] = [];
      const consumer = await bus.consume('provider-sandbox', {
        WithdrawalRequested: async (event) => void left.push(event.id),
      });
      await new Promise((resolve) => setTimeout(resolve, 200));
      await consumer.stop();
      await bus.close();
      expect(left).to.deep.equal([]);
      expect(receiver.for(requests[0]!.data.transaction_id)).to.deep.equal([]);
    });
  }
});
