import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import Stripe from 'stripe';
import { useStarted } from '@payments/testkit';
import { startSandboxWithReceiver } from './support/stripe-sandbox.js';

const DELAY_MS = 50;

describe('provider-sandbox: a PaymentIntent created with confirm=true and a payment method', () => {
  // The sandbox pays, by itself, what nobody tried to pay within DELAY_MS.
  const sandbox = useStarted(() => startSandboxWithReceiver({ SANDBOX_DELAY_MS: String(DELAY_MS) }));
  const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

  it('declines a declined card at once with the PaymentIntent, and never pays that PaymentIntent itself', async () => {
    const transactionId = randomUUID();
    const declined = await sandbox.stripe.paymentIntents
      .create(
        {
          amount: 500,
          currency: 'usd',
          metadata: { transaction_id: transactionId },
          payment_method: 'pm_card_chargeDeclined',
          confirm: true,
        },
        { idempotencyKey: transactionId },
      )
      .then(
        () => null,
        (error: unknown) => error as Stripe.errors.StripeCardError,
      );
    expect(declined).to.be.instanceOf(Stripe.errors.StripeCardError);
    expect(declined).to.include({ statusCode: 402, code: 'card_declined' });
    const intent = declined?.payment_intent as Stripe.PaymentIntent;
    expect(intent).to.include({ status: 'requires_payment_method' });
    expect(intent.metadata).to.deep.equal({ transaction_id: transactionId });

    await sleep(DELAY_MS * 6);
    const after = await sandbox.stripe.paymentIntents.retrieve(intent.id);
    expect(after).to.include({ status: 'requires_payment_method', amount_received: 0 });
  });

  it('pays with a good card at once', async () => {
    const paid = await sandbox.stripe.paymentIntents.create({
      amount: 700,
      currency: 'usd',
      payment_method: 'pm_card_visa',
      confirm: true,
    });
    expect(paid).to.include({ status: 'succeeded', amount_received: 700, payment_method: 'pm_card_visa' });
  });

  it('makes no PaymentIntent for a payment method it does not know', async () => {
    const before = (await sandbox.stripe.paymentIntents.list({ limit: 100 })).data.length;
    const refused = await sandbox.stripe.paymentIntents
      .create({ amount: 900, currency: 'usd', payment_method: 'pm_card_nonexistent', confirm: true })
      .then(
        () => null,
        (error: unknown) => error as Stripe.errors.StripeInvalidRequestError,
      );
    expect(refused).to.be.instanceOf(Stripe.errors.StripeInvalidRequestError);
    expect(refused).to.include({ statusCode: 400, code: 'resource_missing', param: 'payment_method' });
    expect((await sandbox.stripe.paymentIntents.list({ limit: 100 })).data.length).to.equal(before);
  });
});
