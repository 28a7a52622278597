import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import Stripe from 'stripe';
import { eventually, useStarted } from '@payments/testkit';
import { aConnectedAccount, startSandboxWithReceiver } from './support/stripe-sandbox.js';

describe("provider-sandbox: Stripe's API, through the stripe library", () => {
  // Every PaymentIntent here is confirmed (or not) by the test alone.
  const sandbox = useStarted(() => startSandboxWithReceiver({ SANDBOX_AUTO_CONFIRM: 'false' }));

  const eventsOf = async (paymentIntentId: string, count: number) => {
    const found = await eventually(
      async () => sandbox.receiver.about(paymentIntentId),
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
    const created = await sandbox.stripe.paymentIntents.create({
      amount: 1050,
      currency: 'usd',
      metadata: { transaction_id: transactionId },
    });
    expect(created).to.include({ object: 'payment_intent', amount: 1050, currency: 'usd' });
    expect(created.status).to.equal('requires_payment_method');
    expect(created.client_secret).to.match(new RegExp(`^${created.id}_secret_`));
    expect(created.metadata).to.deep.equal({ transaction_id: transactionId });

    const confirmed = await sandbox.stripe.paymentIntents.confirm(created.id, {
      payment_method: 'pm_card_visa',
    });
    expect(confirmed).to.include({ status: 'succeeded', amount_received: 1050 });
    expect((await sandbox.stripe.paymentIntents.retrieve(created.id)).status).to.equal('succeeded');

    const events = await eventsOf(created.id, 2);
    expect(events.map((e) => e.type)).to.deep.equal(['payment_intent.created', 'payment_intent.succeeded']);
    expect(events[1]?.data.object).to.deep.include({
      status: 'succeeded',
      metadata: { transaction_id: transactionId },
    });
  });

  it('declines pm_card_chargeDeclined and insufficient funds as Stripe does; another method then succeeds', async () => {
    const created = await sandbox.stripe.paymentIntents.create({ amount: 2000, currency: 'eur' });
    const declined = await sandbox.stripe.paymentIntents
      .confirm(created.id, { payment_method: 'pm_card_chargeDeclined' })
      .then(
        () => null,
        (error: unknown) => error,
      );
    expect(declined).to.be.instanceOf(Stripe.errors.StripeCardError);
    expect(declined).to.include({ statusCode: 402, code: 'card_declined', decline_code: 'generic_decline' });
    const poor = await sandbox.stripe.paymentIntents
      .confirm(created.id, { payment_method: 'pm_card_chargeDeclinedInsufficientFunds' })
      .then(
        () => null,
        (error: unknown) => error as Stripe.errors.StripeCardError,
      );
    expect(poor?.decline_code).to.equal('insufficient_funds');
    const after = await sandbox.stripe.paymentIntents.retrieve(created.id);
    expect(after.status).to.equal('requires_payment_method');
    expect(after.last_payment_error).to.include({
      code: 'card_declined',
      message: 'Your card has insufficient funds.',
    });

    expect(
      (await sandbox.stripe.paymentIntents.confirm(created.id, { payment_method: 'pm_card_visa' })).status,
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
    const open = await sandbox.stripe.paymentIntents.create({ amount: 500, currency: 'usd' });
    const canceled = await sandbox.stripe.paymentIntents.cancel(open.id, {
      cancellation_reason: 'abandoned',
    });
    expect(canceled).to.include({ status: 'canceled', cancellation_reason: 'abandoned' });
    expect((await eventsOf(open.id, 2)).map((e) => e.type)).to.deep.equal([
      'payment_intent.created',
      'payment_intent.canceled',
    ]);

    const paid = await sandbox.stripe.paymentIntents.create({
      amount: 700,
      currency: 'usd',
      payment_method: 'pm_card_visa',
      confirm: true,
    });
    expect(paid.status).to.equal('succeeded');
    const refused = await sandbox.stripe.paymentIntents.cancel(paid.id).then(
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
      sandbox.stripe.paymentIntents.create(params, { idempotencyKey }),
      sandbox.stripe.paymentIntents.create(params, { idempotencyKey }),
    ]);
    expect(second.id).to.equal(first.id);
    const third = await sandbox.stripe.paymentIntents.create(params, { idempotencyKey });
    expect(third.id).to.equal(first.id);
    expect(third.lastResponse.headers['idempotent-replayed']).to.equal('true');
    await eventsOf(first.id, 1);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(sandbox.receiver.about(first.id), 'one payment_intent.created').to.have.length(1);

    const other = await sandbox.stripe.paymentIntents
      .create({ ...params, amount: 4300 }, { idempotencyKey })
      .then(
        () => null,
        (error: unknown) => error,
      );
    expect(other).to.be.instanceOf(Stripe.errors.StripeIdempotencyError);
  });

  describe('Connect: paying a user out through their connected account', () => {
    const connected = (accountNumber?: string) =>
      aConnectedAccount(sandbox.stripe, accountNumber, { user_id: randomUUID() });
    const fund = (account: string, amount: number, transactionId: string) =>
      sandbox.stripe.transfers.create({
        amount,
        currency: 'usd',
        destination: account,
        metadata: { transaction_id: transactionId },
        transfer_group: transactionId,
      });

    it('transfers to the account, pays out from it to its bank, and says so with events naming the account', async () => {
      const account = await connected();
      expect(account).to.include({ object: 'account', type: 'express', payouts_enabled: true });
      const link = await sandbox.stripe.accountLinks.create({
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
      const payout = await sandbox.stripe.payouts.create(
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
      const again = await sandbox.stripe.payouts
        .create({ amount: 1, currency: 'usd' }, { stripeAccount: account.id })
        .catch((error: unknown) => error);
      expect(again).to.include({ statusCode: 400, code: 'balance_insufficient' });
    });

    it("fails a payout to Stripe's closed test bank account, and its money can then be taken back", async () => {
      const account = await connected('000111111113');
      const transactionId = randomUUID();
      const transfer = await fund(account.id, 1800, transactionId);
      const payout = await sandbox.stripe.payouts.create(
        { amount: 1800, currency: 'usd', metadata: { transaction_id: transactionId } },
        { stripeAccount: account.id },
      );
      const events = await eventsOf(payout.id, 2);
      expect(events[1]?.type).to.equal('payout.failed');
      expect(events[1]?.data.object).to.deep.include({ status: 'failed', failure_code: 'account_closed' });
      const reversal = await sandbox.stripe.transfers.createReversal(transfer.id, {
        metadata: { transaction_id: transactionId },
      });
      expect(reversal).to.include({ object: 'transfer_reversal', amount: 1800, transfer: transfer.id });
      expect(await sandbox.stripe.transfers.retrieve(transfer.id)).to.include({
        reversed: true,
        amount_reversed: 1800,
      });
      const twice = await sandbox.stripe.transfers
        .createReversal(transfer.id)
        .catch((error: unknown) => error);
      expect(twice).to.be.instanceOf(Stripe.errors.StripeInvalidRequestError);
    });

    it('refuses a transfer to an account it does not know, and a payout without Stripe-Account', async () => {
      const unknown = await fund('acct_missing', 100, randomUUID()).catch((error: unknown) => error);
      expect(unknown).to.include({ statusCode: 400, code: 'resource_missing', param: 'destination' });
      const platform = await sandbox.stripe.payouts
        .create({ amount: 100, currency: 'usd' })
        .catch((error: unknown) => error);
      expect(platform).to.include({ statusCode: 400 });
    });
  });

  it('refuses a wrong key, an unknown PaymentIntent and a missing amount with Stripe’s errors', async () => {
    const stranger = new Stripe('sk_test_wrong', {
      host: '127.0.0.1',
      port: sandbox.port,
      protocol: 'http',
      maxNetworkRetries: 0,
    });
    const unauthenticated = await stranger.paymentIntents.create({ amount: 100, currency: 'usd' }).then(
      () => null,
      (error: unknown) => error,
    );
    expect(unauthenticated).to.be.instanceOf(Stripe.errors.StripeAuthenticationError);

    const missing = await sandbox.stripe.paymentIntents.retrieve('pi_missing').then(
      () => null,
      (error: unknown) => error as Stripe.errors.StripeInvalidRequestError,
    );
    expect(missing).to.include({ statusCode: 404, code: 'resource_missing' });

    const incomplete = await sandbox.stripe.paymentIntents
      .create({ currency: 'usd' } as unknown as Stripe.PaymentIntentCreateParams)
      .then(
        () => null,
        (error: unknown) => error as Stripe.errors.StripeInvalidRequestError,
      );
    expect(incomplete).to.include({ statusCode: 400, code: 'parameter_missing', param: 'amount' });
  });
});

describe('provider-sandbox: paying what no client confirmed (SANDBOX_AUTO_CONFIRM)', () => {
  const sandbox = useStarted(() => startSandboxWithReceiver({ SANDBOX_DELAY_MS: '200' }));

  const typesOf = async (paymentIntentId: string, count: number) =>
    (
      await eventually(
        async () => sandbox.receiver.about(paymentIntentId),
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

  describe("refunds, with Stripe's refund test cards", () => {
    const paid = async (card: string) => {
      const created = await sandbox.stripe.paymentIntents.create({ amount: 5000, currency: 'usd' });
      return sandbox.stripe.paymentIntents.confirm(created.id, { payment_method: card });
    };
    const refundEvents = (refundId: string, count: number) =>
      eventually(
        async () => sandbox.receiver.about(refundId).map((r) => r.event),
        (events) => events.length >= count,
      );

    it('keeps reason and metadata, reads a refund back, and refuses a reason Stripe does not know', async () => {
      const intent = await paid('pm_card_visa');
      const refund = await sandbox.stripe.refunds.create({
        payment_intent: intent.id,
        amount: 1200,
        reason: 'requested_by_customer',
        metadata: { refund_id: 'r-1' },
      });
      expect(refund).to.include({ status: 'succeeded', amount: 1200, reason: 'requested_by_customer' });
      expect(await sandbox.stripe.refunds.retrieve(refund.id)).to.deep.equal(refund);
      const events = await refundEvents(refund.id, 1);
      expect(events.map((e) => e.type)).to.deep.equal(['refund.created']);
      const refused = await sandbox.stripe.refunds
        .create({ payment_intent: intent.id, reason: 'because' as Stripe.RefundCreateParams.Reason })
        .catch((error: unknown) => error);
      expect(refused).to.be.instanceOf(Stripe.errors.StripeInvalidRequestError);
      expect(refused).to.include({ statusCode: 400, param: 'reason' });
      const missing = await sandbox.stripe.refunds.retrieve('re_missing').catch((error: unknown) => error);
      expect(missing).to.include({ statusCode: 404, code: 'resource_missing' });
    });

    it('answers a refund of pm_card_pendingRefund pending, and succeeds it later with refund.updated', async () => {
      const intent = await paid('pm_card_pendingRefund');
      const refund = await sandbox.stripe.refunds.create({ payment_intent: intent.id });
      expect(refund).to.include({ status: 'pending', amount: 5000 });
      const events = await refundEvents(refund.id, 3);
      expect(events.map((e) => [e.type, (e.data.object as Stripe.Refund).status])).to.deep.equal([
        ['refund.created', 'pending'],
        ['refund.updated', 'succeeded'],
        ['charge.refund.updated', 'succeeded'],
      ]);
      expect((await sandbox.stripe.refunds.retrieve(refund.id)).status).to.equal('succeeded');
    });

    it('fails a refund of pm_card_refundFail later, and gives the charge its amount back', async () => {
      const intent = await paid('pm_card_refundFail');
      const refund = await sandbox.stripe.refunds.create({ payment_intent: intent.id, amount: 2000 });
      expect(refund.status).to.equal('pending');
      const events = await refundEvents(refund.id, 4);
      expect(events.map((e) => e.type)).to.deep.equal([
        'refund.created',
        'refund.updated',
        'refund.failed',
        'charge.refund.updated',
      ]);
      expect(await sandbox.stripe.refunds.retrieve(refund.id)).to.include({
        status: 'failed',
        failure_reason: 'expired_or_canceled_card',
      });
      // Failed, it no longer counts: the whole payment can be refunded again.
      const again = await sandbox.stripe.refunds.create({ payment_intent: intent.id, amount: 5000 });
      expect(again.amount).to.equal(5000);
    });
  });
});
