import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import Stripe from 'stripe';
import { toMinorUnits } from '@payments/contracts';
import { closedPort, useStarted } from '@payments/testkit';
import { ProviderRefusal, type ProviderRecord } from '../src/provider/payment-provider.js';
import { createStripeProvider } from '../src/provider/stripe-provider.js';
import { SANDBOX_KEY as KEY, startStripeSandbox } from './support/stripe-sandbox.js';

/** The Stripe adapter against the provider sandbox, which serves Stripe's API (its events go nowhere here). */
describe('ledger: the Stripe adapter, against the sandbox', () => {
  // Its bank answers a payout this soon.
  const sandbox = useStarted(() => startStripeSandbox({ SANDBOX_DELAY_MS: '50' }));

  const adapter = (secretKey = KEY, apiUrl = sandbox.url) =>
    createStripeProvider({
      secretKey,
      apiUrl,
      onboardingReturnUrl: 'http://127.0.0.1:8080/payout-account',
      maxNetworkRetries: 0,
    });
  const stripe = () =>
    new Stripe(KEY, {
      host: '127.0.0.1',
      port: new URL(sandbox.url).port as unknown as number,
      protocol: 'http',
    });
  const money = (amount = 1234n) => ({
    transactionId: randomUUID(),
    amount: toMinorUnits(amount),
    currency: 'USD',
  });

  it('creates one PaymentIntent per transaction however often it is asked (the idempotency key)', async () => {
    const request = money();
    const [first, again] = [await adapter().createPayment(request), await adapter().createPayment(request)];
    expect(again).to.deep.equal(first);
    const intent = await stripe().paymentIntents.retrieve(first.reference);
    expect(intent).to.include({ amount: 1234, currency: 'usd', client_secret: first.clientSecret });
    expect(intent.metadata).to.deep.equal({ transaction_id: request.transactionId });
  });

  it('refunds a PaymentIntent once per refund id, naming the refund and the deposit; a refusal is for good', async () => {
    const request = money(3000n);
    const { reference } = await adapter().createPayment(request);
    await stripe().paymentIntents.confirm(reference, { payment_method: 'pm_card_visa' });
    const refund = {
      refundId: randomUUID(),
      transactionId: request.transactionId,
      payment: reference,
      amount: toMinorUnits(1000n),
      currency: 'USD',
      reason: 'duplicate' as const,
    };
    const [first, again] = [await adapter().createRefund(refund), await adapter().createRefund(refund)];
    expect(again).to.deep.equal(first);
    expect(first).to.include({ status: 'succeeded', failureReason: null });
    const made = await stripe().refunds.retrieve(first.reference);
    expect(made).to.include({ amount: 1000, reason: 'duplicate', payment_intent: reference });
    expect(made.metadata).to.deep.equal({
      transaction_id: request.transactionId,
      refund_id: refund.refundId,
    });
    const tooMuch = await adapter()
      .createRefund({ ...refund, refundId: randomUUID(), amount: toMinorUnits(2500n) })
      .catch((error: unknown) => error);
    expect(tooMuch).to.be.instanceOf(ProviderRefusal);
  });

  it('cancels a PaymentIntent once, and takes one already ended or unknown as done', async () => {
    const request = money();
    const { reference } = await adapter().createPayment(request);
    await adapter().cancelPayment(reference, request.transactionId);
    await adapter().cancelPayment(reference, request.transactionId);
    expect((await stripe().paymentIntents.retrieve(reference)).status).to.equal('canceled');
    await adapter().cancelPayment('pi_unknown', randomUUID());
  });

  it('pays out through a connected account (a transfer, then a payout), each once, and takes a failed one back', async () => {
    const account = await adapter().createPayoutAccount({ userId: randomUUID() });
    expect(await adapter().onboardingLink(account)).to.equal('http://127.0.0.1:8080/payout-account');
    // The sandbox's bank refuses an amount whose minor units end in 13: its money returns to the account.
    const request = { ...money(2513n), destination: account };
    const made = await adapter().createPayout(request);
    expect(await adapter().createPayout(request)).to.deep.equal(made);
    expect(made.reference).to.match(/^po_/);
    const transfer = await stripe().transfers.retrieve(made.transfer);
    expect(transfer).to.include({
      amount: 2513,
      destination: account,
      transfer_group: request.transactionId,
    });
    await new Promise((resolve) => setTimeout(resolve, 300));
    await adapter().reversePayout(made.transfer, request.transactionId);
    await adapter().reversePayout(made.transfer, request.transactionId);
    expect(await stripe().transfers.retrieve(made.transfer)).to.include({
      reversed: true,
      amount_reversed: 2513,
    });
  });

  it("reads the provider's records since a moment, through every page: payments with their refunds and disputes, payouts with their reversals", async () => {
    const since = new Date(Math.floor(Date.now() / 1000) * 1000);
    const refunded = money(1000n);
    const disputed = money(2000n);
    const unpaid = money(700n);
    const [withRefund, withDispute] = [
      await adapter().createPayment(refunded),
      await adapter().createPayment(disputed),
    ];
    await adapter().createPayment(unpaid);
    await stripe().paymentIntents.confirm(withRefund.reference, { payment_method: 'pm_card_visa' });
    await stripe().refunds.create({ payment_intent: withRefund.reference, amount: 300 });
    await stripe().paymentIntents.confirm(withDispute.reference, { payment_method: 'pm_card_createDispute' });
    const [dispute] = (await stripe().disputes.list({ payment_intent: withDispute.reference })).data;
    // More than a page of payments besides.
    const more = await Promise.all(Array.from({ length: 101 }, () => adapter().createPayment(money(50n))));

    const account = await adapter().createPayoutAccount({ userId: randomUUID() });
    const paidOut = { ...money(2500n), destination: account };
    const failedOut = { ...money(2513n), destination: account };
    const paid = await adapter().createPayout(paidOut);
    const failed = await adapter().createPayout(failedOut);
    await new Promise((resolve) => setTimeout(resolve, 300));
    await adapter().reversePayout(failed.transfer, failedOut.transactionId);

    const read = async () => {
      const records = new Map<string, ProviderRecord>();
      for await (const record of adapter().recordsSince(since))
        records.set(record.transactionId ?? '', record);
      return records;
    };
    let records = await read();
    expect(records.get(refunded.transactionId)).to.deep.include({
      kind: 'payment',
      reference: withRefund.reference,
      currency: 'USD',
      amount: 1000n,
      captured: 1000n,
      refunded: 300n,
      disputes: [],
      settled: true,
    });
    expect(records.get(disputed.transactionId)).to.deep.include({ captured: 2000n, settled: false });
    expect(records.get(unpaid.transactionId)).to.deep.include({ captured: 0n, settled: false });
    for (const made of more)
      expect([...records.values()].some((r) => r.reference === made.reference)).to.equal(true);
    expect(records.get(paidOut.transactionId)).to.deep.include({
      kind: 'payout',
      reference: paid.transfer,
      payout: paid.reference,
      amount: 2500n,
      reversed: 0n,
      status: 'paid',
    });
    expect(records.get(failedOut.transactionId)).to.deep.include({
      reference: failed.transfer,
      reversed: 2513n,
      status: 'failed',
    });

    await stripe().disputes.close(dispute!.id);
    records = await read();
    expect(records.get(disputed.transactionId)).to.deep.include({
      disputes: [{ id: dispute!.id, amount: 2000n, outcome: 'lost' }],
      settled: true,
    });
    expect(await adapter().recordOf(withRefund.reference, refunded.transactionId)).to.deep.include({
      refunded: 300n,
    });
    expect(await adapter().recordOf(paid.transfer, paidOut.transactionId)).to.deep.include({
      payout: paid.reference,
      status: 'paid',
    });
    expect(await adapter().recordOf('pi_unknown', null)).to.equal(null);
  });

  it("refuses for good what Stripe refuses with a 400 or 402, with Stripe's reason", async () => {
    const refused = await adapter()
      .createPayout({ ...money(), destination: 'acct_nobody' })
      .catch((error: unknown) => error);
    expect(refused).to.be.instanceOf(ProviderRefusal);
    expect((refused as ProviderRefusal).reason).to.match(/No such account: 'acct_nobody'/);
    const invalid = await adapter()
      .createPayment({ ...money(), currency: 'U$D' })
      .catch((error: unknown) => error);
    expect(invalid).to.be.instanceOf(ProviderRefusal);
    expect((invalid as ProviderRefusal).reason).to.match(/Invalid currency/);
  });

  it('treats a wrong key and a provider that does not answer as passing, to be tried again', async () => {
    const wrongKey = await adapter('sk_test_wrong')
      .createPayment(money())
      .catch((error: unknown) => error);
    expect(wrongKey).to.be.instanceOf(Stripe.errors.StripeAuthenticationError);
    const down = await adapter(KEY, `http://127.0.0.1:${await closedPort()}`)
      .createPayment(money())
      .catch((error: unknown) => error);
    expect(down).to.be.instanceOf(Stripe.errors.StripeConnectionError);
  });
});
