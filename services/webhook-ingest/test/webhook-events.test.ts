import { expect } from 'chai';
import { loadConfig, DEVELOPMENT_WEBHOOK_SECRET } from '@payments/service-kit';
import { parsePaymentStatusWebhook, parsePaymentWebhook } from '../src/domain/payment-webhooks.js';
import { parseProviderEvent } from '../src/domain/provider-events.js';
import { envelopeIdOf } from '../src/domain/webhook-event.js';
import { resolveWebhookSettings, WebhookIngestConfigSchema } from '../src/config.js';

function providerEvent(type: string, object: Record<string, unknown> = {}) {
  return {
    id: 'evt_123',
    object: 'event',
    type,
    data: {
      object: {
        id: 'pi_123',
        amount: 10050,
        currency: 'usd',
        status: 'succeeded',
        metadata: { transaction_id: 'tx-1' },
        ...object,
      },
    },
  };
}

describe('provider events', () => {
  const cases = [
    ['payment_intent.succeeded', 'completed', 'payment'],
    ['payment_intent.payment_failed', 'attempt_failed', 'payment'],
    ['payment_intent.canceled', 'canceled', 'payment'],
    ['payout.paid', 'completed', 'payout'],
    ['payout.failed', 'failed', 'payout'],
  ] as const;
  for (const [type, status, movement] of cases) {
    it(`turns ${type} into a ${status} ${movement} with the provider's amount and currency`, () => {
      const event = parseProviderEvent(providerEvent(type));
      expect(event?.eventId).to.equal('evt_123');
      expect(event?.payment).to.include({
        transaction_id: 'tx-1',
        payment_id: 'pi_123',
        status,
        source: 'provider',
        amount: 10050,
        currency: 'USD',
        movement,
        provider_event_id: 'evt_123',
        provider_event_type: type,
      });
      expect(event?.payment?.failure_reason === undefined).to.equal(status === 'completed');
    });
  }

  it("finds the transaction by the object's id when the metadata names none", () => {
    const event = parseProviderEvent(providerEvent('payment_intent.succeeded', { metadata: {} }));
    expect(event?.payment?.transaction_id).to.equal('pi_123');
  });

  it("takes a failed payment's reason from last_payment_error, and a payout's from failure_message", () => {
    const payment = parseProviderEvent(
      providerEvent('payment_intent.payment_failed', { last_payment_error: { message: 'Card declined' } }),
    );
    const payout = parseProviderEvent(providerEvent('payout.failed', { failure_message: 'Account closed' }));
    const canceled = parseProviderEvent(
      providerEvent('payment_intent.canceled', { status: 'canceled', cancellation_reason: 'abandoned' }),
    );
    expect(payment?.payment?.failure_reason).to.equal('Card declined');
    expect(payout?.payment?.failure_reason).to.equal('Account closed');
    expect(canceled?.payment?.failure_reason).to.equal('canceled at the provider (abandoned)');
  });

  it('records other event types without effect, even when their object looks different', () => {
    const event = parseProviderEvent({
      id: 'evt_9',
      type: 'customer.created',
      data: { object: { id: 'cus_1' } },
    });
    expect(event).to.deep.include({ eventId: 'evt_9', type: 'customer.created', payment: null });
  });

  const REFUND_ID = '6f1c2a3b-4d5e-4f60-8a7b-9c0d1e2f3a4b';
  const refundEvent = (type: string, over: Record<string, unknown> = {}) => ({
    id: 'evt_re',
    type,
    data: {
      object: {
        id: 're_1',
        object: 'refund',
        amount: 3000,
        currency: 'usd',
        status: 'succeeded',
        charge: 'ch_1',
        payment_intent: 'pi_1',
        metadata: { transaction_id: 'tx-1', refund_id: REFUND_ID },
        ...over,
      },
    },
  });

  for (const type of ['refund.created', 'refund.updated', 'charge.refund.updated']) {
    it(`turns a ${type} of a refund the ledger asked for that succeeded into refund_succeeded`, () => {
      const event = parseProviderEvent(refundEvent(type));
      expect(event?.adjustment).to.deep.include({
        transaction_id: 'tx-1',
        payment_reference: 'pi_1',
        adjustment: 'refund_succeeded',
        amount: 3000,
        currency: 'USD',
        reference: 're_1',
        refund_id: REFUND_ID,
      });
    });
  }

  it("turns a failed or canceled refund into refund_failed with the provider's reason", () => {
    const failed = parseProviderEvent(
      refundEvent('refund.failed', { status: 'failed', failure_reason: 'expired_or_canceled_card' }),
    );
    expect(failed?.adjustment).to.deep.include({
      adjustment: 'refund_failed',
      refund_id: REFUND_ID,
      failure_reason: 'the provider could not refund (expired_or_canceled_card)',
    });
    const canceled = parseProviderEvent(refundEvent('refund.updated', { status: 'canceled' }));
    expect(canceled?.adjustment).to.deep.include({ adjustment: 'refund_failed' });
  });

  it('records a pending refund, or one the ledger did not ask for, without effect', () => {
    expect(parseProviderEvent(refundEvent('refund.created', { status: 'pending' }))).to.deep.include({
      adjustment: null,
    });
    const elsewhere = parseProviderEvent(
      refundEvent('refund.created', { metadata: { transaction_id: 'tx-1' } }),
    );
    expect(elsewhere).to.deep.include({ adjustment: null });
    // A refund id that is not the ledger's form is refused, not passed on.
    expect(
      parseProviderEvent(refundEvent('refund.created', { metadata: { refund_id: 'not-a-uuid' } })),
    ).to.equal(null);
  });

  const invalid: [string, unknown][] = [
    ['not an object', 'evt'],
    ['no id', { type: 'payout.paid', data: { object: {} } }],
    ['no data.object', { id: 'evt_1', type: 'payout.paid', data: {} }],
    ['a fractional amount', providerEvent('payout.paid', { amount: 10.5 })],
    ['a negative amount', providerEvent('payout.paid', { amount: -1 })],
    ['an amount as a string', providerEvent('payout.paid', { amount: '100' })],
    ['a currency that is not a code', providerEvent('payout.paid', { currency: 'dollars' })],
    ['no status', providerEvent('payout.paid', { status: undefined })],
    ['a non-string transaction id', providerEvent('payout.paid', { metadata: { transaction_id: 7 } })],
  ];
  for (const [what, body] of invalid) {
    it(`rejects a handled event with ${what}`, () => {
      expect(parseProviderEvent(JSON.parse(JSON.stringify(body)))).to.equal(null);
    });
  }
});

describe('payment webhooks', () => {
  it('derives the same event id from the same payment id and status', () => {
    const first = parsePaymentWebhook({ payment_id: 'tx-1', status: 'completed' });
    const again = parsePaymentWebhook({ payment_id: 'tx-1', status: 'completed' });
    const failed = parsePaymentWebhook({ payment_id: 'tx-1', status: 'failed' });
    expect(first?.eventId).to.equal(again?.eventId);
    expect(first?.eventId).to.not.equal(failed?.eventId);
    expect(envelopeIdOf(first?.eventId ?? '')).to.equal(envelopeIdOf(again?.eventId ?? ''));
    expect(envelopeIdOf(first?.eventId ?? '')).to.match(/^[0-9a-f-]{36}$/);
  });

  it('confirms the transaction named by payment_id', () => {
    expect(parsePaymentWebhook({ payment_id: 'tx-1', status: 'completed' })?.payment).to.deep.equal({
      transaction_id: 'tx-1',
      payment_id: 'tx-1',
      status: 'completed',
      source: 'payment',
    });
  });

  it('records a pending status without effect', () => {
    expect(parsePaymentWebhook({ payment_id: 'tx-1', status: 'pending' })?.payment).to.equal(null);
  });

  it('rejects unknown statuses and missing or mistyped fields', () => {
    for (const body of [
      { payment_id: 'tx-1', status: 'done' },
      { payment_id: 'tx-1' },
      { status: 'completed' },
      { payment_id: '', status: 'completed' },
      { payment_id: 42, status: 'completed' },
      null,
      [],
    ]) {
      expect(parsePaymentWebhook(body), JSON.stringify(body)).to.equal(null);
    }
  });

  it('passes on the amount and upper-cased currency of a payment-status call, and its failure reason', () => {
    const event = parsePaymentStatusWebhook({
      payment_id: 'pay_1',
      status: 'failed',
      amount: 1013,
      currency: 'eur',
      metadata: { transaction_id: 'tx-2', failure_reason: 'insufficient funds at the bank' },
    });
    expect(event?.payment).to.deep.equal({
      transaction_id: 'tx-2',
      payment_id: 'pay_1',
      status: 'failed',
      source: 'payment-status',
      amount: 1013,
      currency: 'EUR',
      failure_reason: 'insufficient funds at the bank',
    });
  });
});

describe('webhook-ingest configuration', () => {
  const load = (env: Record<string, string>) =>
    resolveWebhookSettings(loadConfig(WebhookIngestConfigSchema, env));
  /** Two secrets as long as production asks (Stripe's own `whsec_…` are 38 bytes). */
  const first = `whsec_${'a'.repeat(26)}`;
  const second = `whsec_${'b'.repeat(32)}`;

  it('uses the development secret outside production, and keeps the unsigned endpoint off', () => {
    for (const NODE_ENV of ['development', 'test']) {
      expect(load({ NODE_ENV })).to.deep.include({
        secrets: [DEVELOPMENT_WEBHOOK_SECRET],
        usesDevelopmentSecret: true,
        unsignedEnabled: false,
        toleranceSeconds: 300,
      });
    }
  });

  it('refuses to run in production without WEBHOOK_SECRETS', () => {
    expect(() => load({ NODE_ENV: 'production' })).to.throw(/WEBHOOK_SECRETS is required/);
  });

  it('refuses the development secret in production', () => {
    expect(() => load({ NODE_ENV: 'production', WEBHOOK_SECRETS: DEVELOPMENT_WEBHOOK_SECRET })).to.throw(
      /development secret/,
    );
  });

  it('refuses in production a secret under 32 bytes, without saying which one', () => {
    const short = `whsec_${'c'.repeat(25)}`;
    expect(() => load({ NODE_ENV: 'production', WEBHOOK_SECRETS: `${first},${short}` })).to.throw(
      'Invalid configuration: WEBHOOK_SECRETS has 1 secret(s) under 32 bytes, refused when NODE_ENV=production',
    );
    expect(load({ NODE_ENV: 'production', WEBHOOK_SECRETS: first }).secrets).to.deep.equal([first]);
    expect(load({ NODE_ENV: 'test', WEBHOOK_SECRETS: 'short' }).secrets).to.deep.equal(['short']);
  });

  it('turns the unsigned endpoint on only when asked to, and never in production', () => {
    expect(load({ NODE_ENV: 'production', WEBHOOK_SECRETS: ` ${first}, ${second}` })).to.deep.include({
      secrets: [first, second],
      unsignedEnabled: false,
    });
    expect(load({ UNSIGNED_WEBHOOK_ENABLED: 'true' }).unsignedEnabled).to.equal(true);
    expect(() =>
      load({ NODE_ENV: 'production', WEBHOOK_SECRETS: first, UNSIGNED_WEBHOOK_ENABLED: 'true' }),
    ).to.throw(/UNSIGNED_WEBHOOK_ENABLED=true is refused when NODE_ENV=production/);
  });

  it("takes a stand-in's confirmations except in production with PROVIDER=stripe, unless told to", () => {
    const standIn = (env: Record<string, string>) =>
      load({ WEBHOOK_SECRETS: first, ...env }).standInConfirmations;
    for (const NODE_ENV of ['development', 'test', 'production'])
      expect(standIn({ NODE_ENV }), NODE_ENV).to.equal(true);
    expect(standIn({ NODE_ENV: 'test', PROVIDER: 'stripe' })).to.equal(true);
    expect(standIn({ NODE_ENV: 'production', PROVIDER: 'stripe' })).to.equal(false);
    expect(standIn({ NODE_ENV: 'production', PROVIDER: 'stripe', STAND_IN_CONFIRMATIONS: 'true' })).to.equal(
      true,
    );
    expect(standIn({ NODE_ENV: 'test', STAND_IN_CONFIRMATIONS: 'false' })).to.equal(false);
    expect(() => load({ PROVIDER: 'paypal' })).to.throw(/PROVIDER/);
  });
});
