import { expect } from 'chai';
import { parseProviderEvent } from '../src/domain/provider-events.js';
import { REDACTED, redactWebhookPayload } from '../src/domain/payload-redaction.js';

/** A payment_intent.payment_failed as Stripe sends it, with the parts that must not be kept. */
function failedPaymentIntent() {
  return {
    id: 'evt_1',
    object: 'event',
    api_version: '2024-06-20',
    created: 1_700_000_000,
    livemode: true,
    request: { id: 'req_1', idempotency_key: 'tx-1' },
    type: 'payment_intent.payment_failed',
    data: {
      object: {
        id: 'pi_1',
        object: 'payment_intent',
        amount: 10050,
        currency: 'usd',
        status: 'requires_payment_method',
        client_secret: 'pi_1_secret_abc',
        metadata: { transaction_id: 'tx-1' },
        last_payment_error: {
          code: 'card_declined',
          decline_code: 'insufficient_funds',
          message: 'Your card has insufficient funds.',
          payment_method: {
            id: 'pm_1',
            object: 'payment_method',
            billing_details: { name: 'Ada', email: 'ada@example.com' },
            card: { brand: 'visa', last4: '4242', exp_month: 12, exp_year: 2030, fingerprint: 'fp' },
          },
        },
        next_action: {
          type: 'redirect_to_url',
          redirect_to_url: {
            url: 'https://hooks.stripe.com/3ds?payment_intent_client_secret=pi_1_secret_abc',
          },
        },
        return_url: 'https://shop.example/back?payment_intent_client_secret=pi_1_secret_abc',
      },
      previous_attributes: { client_secret: 'pi_1_secret_old' },
    },
  };
}

describe('redacting a webhook body before it is kept', () => {
  it("cuts a PaymentIntent's client secret wherever it is: its key, an earlier value, a URL that carries it", () => {
    const kept = redactWebhookPayload(failedPaymentIntent()) as ReturnType<typeof failedPaymentIntent>;
    expect(kept.data.object.client_secret).to.equal(REDACTED);
    expect(kept.data.previous_attributes.client_secret).to.equal(REDACTED);
    expect(kept.data.object.return_url).to.equal(REDACTED);
    expect(kept.data.object.next_action).to.equal(REDACTED);
    expect(JSON.stringify(kept)).not.to.contain('_secret_');
  });

  it('cuts card and bank details and the payer’s billing details, however they come', () => {
    const kept = redactWebhookPayload(failedPaymentIntent()) as ReturnType<typeof failedPaymentIntent>;
    expect(kept.data.object.last_payment_error.payment_method).to.equal(REDACTED);
    const charge = redactWebhookPayload({
      id: 'ch_1',
      object: 'charge',
      payment_method_details: { type: 'card', card: { last4: '4242' } },
      billing_details: { address: { line1: '1 Main St' } },
      receipt_url: 'https://pay.stripe.com/receipts/secret-link',
      receipt_email: 'ada@example.com',
      source: { id: 'card_1', object: 'card', last4: '4242' },
    });
    expect(charge).to.deep.equal({
      id: 'ch_1',
      object: 'charge',
      payment_method_details: REDACTED,
      billing_details: REDACTED,
      receipt_url: REDACTED,
      receipt_email: REDACTED,
      source: REDACTED,
    });
    const payout = redactWebhookPayload({
      id: 'po_1',
      object: 'payout',
      destination: { id: 'ba_1', object: 'bank_account', routing_number: '110000000', last4: '6789' },
    });
    expect(payout).to.deep.equal({ id: 'po_1', object: 'payout', destination: REDACTED });
  });

  it('cuts any key that names a secret, and values that are API keys or signing secrets', () => {
    expect(
      redactWebhookPayload({
        secret: 'ek_1',
        Webhook_Secret: 'x',
        password: 'p',
        note: 'sk_live_abc',
        restricted: 'rk_test_abc',
        signing: 'whsec_abc',
        nothing: null,
      }),
    ).to.deep.equal({
      secret: REDACTED,
      Webhook_Secret: REDACTED,
      password: REDACTED,
      note: REDACTED,
      restricted: REDACTED,
      signing: REDACTED,
      nothing: null,
    });
  });

  it('keeps what operators and reconciliation read: ids, type, amounts, status, metadata, failure reasons', () => {
    const kept = redactWebhookPayload(failedPaymentIntent()) as ReturnType<typeof failedPaymentIntent>;
    expect(kept).to.deep.include({
      id: 'evt_1',
      type: 'payment_intent.payment_failed',
      livemode: true,
      created: 1_700_000_000,
      request: { id: 'req_1', idempotency_key: 'tx-1' },
    });
    expect(kept.data.object).to.deep.include({
      id: 'pi_1',
      object: 'payment_intent',
      amount: 10050,
      currency: 'usd',
      status: 'requires_payment_method',
      metadata: { transaction_id: 'tx-1' },
    });
    expect(kept.data.object.last_payment_error).to.deep.include({
      code: 'card_declined',
      decline_code: 'insufficient_funds',
      message: 'Your card has insufficient funds.',
    });
  });

  it('reads back as the same event: the kept body still parses to what was published', () => {
    const received = failedPaymentIntent();
    const kept = redactWebhookPayload(received);
    const { payload: _received, ...fromReceived } = parseProviderEvent(received) ?? {};
    const { payload: _kept, ...fromKept } = parseProviderEvent(kept) ?? {};
    expect(fromReceived).to.have.property('payment').that.does.not.equal(null);
    expect(fromKept).to.deep.equal(fromReceived);
  });

  it('leaves the given body untouched, and a body without secrets as it was', () => {
    const received = failedPaymentIntent();
    const copy = structuredClone(received);
    redactWebhookPayload(received);
    expect(received).to.deep.equal(copy);
    const plain = { payment_id: 'tx-1', status: 'completed', amount: 500, metadata: { failure_reason: 'x' } };
    expect(redactWebhookPayload(plain)).to.deep.equal(plain);
  });

  it('cuts a body nested deeper than any provider object instead of overflowing the stack', () => {
    let deep: unknown = { id: 'bottom' };
    for (let level = 0; level < 100_000; level += 1) deep = [deep];
    const kept = JSON.stringify(redactWebhookPayload(deep));
    expect(kept).to.contain(REDACTED);
    expect(kept).not.to.contain('bottom');
  });
});
