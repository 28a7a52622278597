import { expect } from 'chai';
import type Stripe from 'stripe';
import { eventually, useStarted } from '@payments/testkit';
import { API_KEY, startSandboxWithReceiver } from './support/stripe-sandbox.js';

const PUBLISHABLE_KEY = 'pk_test_sandbox_development_only';
const PAGE_ORIGIN = 'http://localhost:8080';

interface Answer {
  status: number;
  headers: Headers;
  body: {
    id?: string;
    status?: string;
    payment_method?: string | null;
    error?: { type: string; code?: string; decline_code?: string; param?: string; message: string };
  };
}

/**
 * A payer's card typed into a page and sent as Stripe.js sends it: plain fetch from the page's origin, the
 * publishable key, the client secret and `payment_method_data`, form-encoded.
 */
describe('provider-sandbox: a payer confirms with card details from a browser page', () => {
  const sandbox = useStarted(() => startSandboxWithReceiver({ SANDBOX_AUTO_CONFIRM: 'false' }));
  const base = () => `http://127.0.0.1:${sandbox.port}/v1`;

  const anIntent = (amount = 1500) => sandbox.stripe.paymentIntents.create({ amount, currency: 'usd' });

  const confirmWithCard = async (
    intent: Stripe.PaymentIntent,
    number: string,
    card: { exp_month?: string; exp_year?: string; cvc?: string } = {},
  ): Promise<Answer> => {
    const form = new URLSearchParams({
      client_secret: intent.client_secret as string,
      'payment_method_data[type]': 'card',
      'payment_method_data[card][number]': number,
      'payment_method_data[card][exp_month]': card.exp_month ?? '12',
      'payment_method_data[card][exp_year]': card.exp_year ?? '2034',
      'payment_method_data[card][cvc]': card.cvc ?? '123',
    });
    const response = await fetch(`${base()}/payment_intents/${intent.id}/confirm`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${PUBLISHABLE_KEY}`,
        'content-type': 'application/x-www-form-urlencoded',
        origin: PAGE_ORIGIN,
      },
      body: form,
    });
    return {
      status: response.status,
      headers: response.headers,
      body: (await response.json()) as Answer['body'],
    };
  };

  const typesOf = (intent: Stripe.PaymentIntent) =>
    sandbox.receiver.about(intent.id).map((delivery) => delivery.event.type);

  it('pays with 4242 4242 4242 4242, keeping only the brand, last4 and expiry on a new payment method', async () => {
    const intent = await anIntent();
    const paid = await confirmWithCard(intent, '4242 4242 4242 4242');
    expect(paid.status).to.equal(200);
    expect(paid.body.status).to.equal('succeeded');
    const methodId = paid.body.payment_method as string;
    expect(methodId).to.match(/^pm_/);
    const method = await sandbox.stripe.paymentMethods.retrieve(methodId);
    expect(method.type).to.equal('card');
    expect(method.card).to.deep.equal({
      brand: 'visa',
      last4: '4242',
      exp_month: 12,
      exp_year: 2034,
      funding: 'credit',
    });
    await eventually(
      async () => typesOf(intent),
      (types) => types.includes('payment_intent.succeeded'),
    );
    expect(sandbox.receiver.deliveries.some((d) => d.raw.includes('4242424242424242'))).to.equal(false);
  });

  const outcomes: [string, string, { status: number; code?: string; decline_code?: string }][] = [
    ['5555555555554444', 'a Mastercard', { status: 200 }],
    ['4000000000000002', 'declined', { status: 402, code: 'card_declined', decline_code: 'generic_decline' }],
    [
      '4000000000009995',
      'insufficient funds',
      { status: 402, code: 'card_declined', decline_code: 'insufficient_funds' },
    ],
    ['4000000000000069', 'expired', { status: 402, code: 'expired_card' }],
    ['4000000000000127', 'with an incorrect CVC', { status: 402, code: 'incorrect_cvc' }],
    [
      '4111111111111111',
      'a real card in test mode',
      { status: 402, code: 'card_declined', decline_code: 'test_mode_live_card' },
    ],
  ];
  for (const [number, what, expected] of outcomes) {
    it(`answers card ${number} (${what}) as Stripe does`, async () => {
      const intent = await anIntent();
      const answer = await confirmWithCard(intent, number);
      expect(answer.status).to.equal(expected.status);
      if (expected.status === 200) {
        expect(answer.body.status).to.equal('succeeded');
        return;
      }
      expect(answer.body.error).to.include({ type: 'card_error', code: expected.code });
      expect(answer.body.error?.decline_code).to.equal(expected.decline_code);
      const after = await sandbox.stripe.paymentIntents.retrieve(intent.id);
      expect(after.status).to.equal('requires_payment_method');
      expect(after.last_payment_error).to.include({ code: expected.code });
      await eventually(
        async () => typesOf(intent),
        (types) => types.includes('payment_intent.payment_failed'),
      );
    });
  }

  it("behaves as Stripe's refund and dispute test cards when paid with their numbers", async () => {
    const pendingRefund = await anIntent();
    expect((await confirmWithCard(pendingRefund, '4000000000007726')).status).to.equal(200);
    const refund = await sandbox.stripe.refunds.create({ payment_intent: pendingRefund.id });
    expect(refund.status).to.equal('pending');
    const failingRefund = await anIntent();
    expect((await confirmWithCard(failingRefund, '4000000000005126')).status).to.equal(200);
    expect((await sandbox.stripe.refunds.create({ payment_intent: failingRefund.id })).status).to.equal(
      'pending',
    );
    const disputed = await anIntent();
    expect((await confirmWithCard(disputed, '4000000000000259')).status).to.equal(200);
    const disputes = await sandbox.stripe.disputes.list({ payment_intent: disputed.id });
    expect(disputes.data.map((dispute) => dispute.status)).to.deep.equal(['needs_response']);
  });

  it('lets the payer try another card after a decline, and the second one pays it', async () => {
    const intent = await anIntent(2500);
    const declined = await confirmWithCard(intent, '4000000000000002');
    expect(declined.status).to.equal(402);
    const paid = await confirmWithCard(intent, '4242424242424242');
    expect(paid.body.status).to.equal('succeeded');
    expect(
      await eventually(
        async () => typesOf(intent),
        (types) => types.length >= 3,
      ),
    ).to.deep.equal(['payment_intent.created', 'payment_intent.payment_failed', 'payment_intent.succeeded']);
    const again = await confirmWithCard(intent, '4242424242424242');
    expect(again.body.error).to.include({ code: 'payment_intent_unexpected_state' });
  });

  it('refuses details Stripe refuses before any charge, and leaves the PaymentIntent and its events as they were', async () => {
    const intent = await anIntent();
    const refusals: [string, Parameters<typeof confirmWithCard>[2], string, string][] = [
      ['4242424242424241', {}, 'incorrect_number', 'number'],
      ['4242-abcd', {}, 'invalid_number', 'number'],
      ['4242424242424242', { exp_year: '2020' }, 'invalid_expiry_year', 'exp_year'],
      ['4242424242424242', { exp_month: '13' }, 'invalid_expiry_month', 'exp_month'],
      ['4242424242424242', { cvc: '12' }, 'invalid_cvc', 'cvc'],
    ];
    for (const [number, card, code, field] of refusals) {
      const answer = await confirmWithCard(intent, number, card);
      expect(answer.status, code).to.equal(402);
      expect(answer.body.error).to.include({
        type: 'card_error',
        code,
        param: `payment_method_data[card][${field}]`,
      });
    }
    const after = await sandbox.stripe.paymentIntents.retrieve(intent.id);
    expect(after).to.include({ status: 'requires_payment_method', last_payment_error: null });
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(typesOf(intent)).to.deep.equal(['payment_intent.created']);
  });

  it('refuses card details with a payment_method as well, and card details that are not a card', async () => {
    const intent = await anIntent();
    const both = await fetch(`${base()}/payment_intents/${intent.id}/confirm`, {
      method: 'POST',
      headers: { authorization: `Bearer ${API_KEY}`, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        payment_method: 'pm_card_visa',
        'payment_method_data[type]': 'card',
        'payment_method_data[card][number]': '4242424242424242',
      }),
    });
    expect(both.status).to.equal(400);
    const missing = await fetch(`${base()}/payment_intents/${intent.id}/confirm`, {
      method: 'POST',
      headers: { authorization: `Bearer ${API_KEY}`, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        'payment_method_data[type]': 'card',
        'payment_method_data[card][number]': '4242424242424242',
      }),
    });
    expect(missing.status).to.equal(400);
    expect(((await missing.json()) as Answer['body']).error).to.include({
      code: 'parameter_missing',
      param: 'payment_method_data[card][exp_month]',
    });
    expect((await sandbox.stripe.paymentIntents.retrieve(intent.id)).status).to.equal(
      'requires_payment_method',
    );
  });

  describe('CORS, as Stripe answers publishable-key calls', () => {
    const preflight = (path: string) =>
      fetch(`${base()}${path}`, {
        method: 'OPTIONS',
        headers: {
          origin: PAGE_ORIGIN,
          'access-control-request-method': 'POST',
          'access-control-request-headers': 'authorization,content-type',
        },
      });

    it('allows any origin to confirm, with Authorization and Content-Type', async () => {
      const intent = await anIntent();
      const allowed = await preflight(`/payment_intents/${intent.id}/confirm`);
      expect(allowed.status).to.equal(204);
      expect(allowed.headers.get('access-control-allow-origin')).to.equal('*');
      expect(allowed.headers.get('access-control-allow-methods')).to.equal('POST');
      expect(allowed.headers.get('access-control-allow-headers')?.toLowerCase()).to.equal(
        'authorization,content-type',
      );
      expect(allowed.headers.get('access-control-allow-credentials')).to.equal(null);
      const declined = await confirmWithCard(intent, '4000000000000002');
      expect(declined.headers.get('access-control-allow-origin')).to.equal('*');
      const refused = await fetch(`${base()}/payment_intents/${intent.id}/confirm`, {
        method: 'POST',
        headers: { authorization: 'Bearer pk_test_wrong', origin: PAGE_ORIGIN },
      });
      expect(refused.status).to.equal(401);
      expect(refused.headers.get('access-control-allow-origin'), 'a refusal the page can read').to.equal('*');
    });

    it('gives no other route CORS headers, so a secret key is never usable from a browser', async () => {
      const intent = await anIntent();
      for (const path of ['/payment_intents', `/payment_intents/${intent.id}`, '/refunds', '/balance']) {
        const answer = await preflight(path);
        expect(answer.status, path).to.equal(401);
        expect(answer.headers.get('access-control-allow-origin'), path).to.equal(null);
      }
      const read = await fetch(`${base()}/payment_intents/${intent.id}`, {
        headers: { authorization: `Bearer ${PUBLISHABLE_KEY}`, origin: PAGE_ORIGIN },
      });
      expect(read.status).to.equal(403);
      expect(read.headers.get('access-control-allow-origin')).to.equal(null);
      const secret = await fetch(`${base()}/payment_intents/${intent.id}`, {
        headers: { authorization: `Bearer ${API_KEY}`, origin: PAGE_ORIGIN },
      });
      expect(secret.status).to.equal(200);
      expect(secret.headers.get('access-control-allow-origin')).to.equal(null);
    });
  });
});

describe('provider-sandbox: a payer declined at the page is not paid for by the sandbox', () => {
  const sandbox = useStarted(() => startSandboxWithReceiver({ SANDBOX_DELAY_MS: '200' }));

  it('stops paying by itself once the payer tried a card, and takes their next card', async () => {
    const intent = await sandbox.stripe.paymentIntents.create({ amount: 800, currency: 'usd' });
    const confirm = (number: string) =>
      fetch(`http://127.0.0.1:${sandbox.port}/v1/payment_intents/${intent.id}/confirm`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${PUBLISHABLE_KEY}`,
          'content-type': 'application/x-www-form-urlencoded',
        },
        body: new URLSearchParams({
          client_secret: intent.client_secret as string,
          'payment_method_data[type]': 'card',
          'payment_method_data[card][number]': number,
          'payment_method_data[card][exp_month]': '4',
          'payment_method_data[card][exp_year]': '2033',
          'payment_method_data[card][cvc]': '321',
        }),
      });
    expect((await confirm('4000000000009995')).status).to.equal(402);
    await new Promise((resolve) => setTimeout(resolve, 700));
    expect((await sandbox.stripe.paymentIntents.retrieve(intent.id)).status).to.equal(
      'requires_payment_method',
    );
    expect(sandbox.receiver.about(intent.id).map((d) => d.event.type)).to.deep.equal([
      'payment_intent.created',
      'payment_intent.payment_failed',
    ]);
    expect((await confirm('4242424242424242')).status).to.equal(200);
    const paid = await sandbox.stripe.paymentIntents.retrieve(intent.id);
    expect(paid).to.include({ status: 'succeeded', amount_received: 800 });
  });
});
