import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { eventually, useStarted } from '@payments/testkit';
import { aConnectedAccount, API_KEY, startSandboxWithReceiver } from './support/stripe-sandbox.js';

describe('provider-sandbox: payouts held until released (SANDBOX_HOLD_PAYOUTS)', () => {
  const sandbox = useStarted(() =>
    startSandboxWithReceiver({ SANDBOX_DELAY_MS: '50', SANDBOX_HOLD_PAYOUTS: 'true' }),
  );
  /** The types of the events about one object, in the order they arrived. */
  const typesAbout = (objectId: string) => sandbox.receiver.about(objectId).map((d) => d.event.type);

  /** A payout of `amount` cents on a new connected account whose bank is `accountNumber`. */
  const payout = async (amount: number, accountNumber = '000123456789') => {
    const account = await aConnectedAccount(sandbox.stripe, accountNumber);
    const transactionId = randomUUID();
    await sandbox.stripe.transfers.create({
      amount,
      currency: 'usd',
      destination: account.id,
      metadata: { transaction_id: transactionId },
    });
    const made = await sandbox.stripe.payouts.create(
      { amount, currency: 'usd', metadata: { transaction_id: transactionId } },
      { stripeAccount: account.id },
    );
    return { account: account.id, id: made.id };
  };
  const statusOf = async ({ account, id }: { account: string; id: string }) =>
    (await sandbox.stripe.payouts.retrieve(id, {}, { stripeAccount: account })).status;
  const release = async (payoutId: string, body: unknown, key = API_KEY) => {
    const response = await fetch(`${sandbox.service.url}/sandbox/payouts/${payoutId}/release`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    return { status: response.status, body: (await response.json()) as Record<string, unknown> };
  };
  const typesOf = (objectId: string, count: number) =>
    eventually(
      async () => typesAbout(objectId),
      (types) => types.length >= count,
    );

  it('keeps a payout pending past SANDBOX_DELAY_MS, then pays it once released, once', async () => {
    const held = await payout(2_500);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(await statusOf(held)).to.equal('pending');
    expect(typesAbout(held.id)).to.deep.equal(['payout.created']);

    const released = await release(held.id, { outcome: 'paid' });
    expect(released.status).to.equal(200);
    expect(released.body).to.include({ id: held.id, object: 'payout', status: 'paid' });
    expect(await typesOf(held.id, 2)).to.deep.equal(['payout.created', 'payout.paid']);

    const again = await release(held.id, { outcome: 'failed' });
    expect(again.status).to.equal(409);
    expect(await statusOf(held)).to.equal('paid');
  });

  it('fails a released payout as told, whatever the bank, and its money is back on the account', async () => {
    const held = await payout(1_800);
    expect((await release(held.id, { outcome: 'failed' })).body).to.include({
      status: 'failed',
      failure_code: 'could_not_process',
    });
    expect(await typesOf(held.id, 2)).to.deep.equal(['payout.created', 'payout.failed']);
    const again = await sandbox.stripe.payouts.create(
      { amount: 1_800, currency: 'usd' },
      { stripeAccount: held.account },
    );
    expect(again.status).to.equal('pending');

    // Told to pay, a payout is paid even to Stripe's closed test bank account, and whatever its amount.
    const closed = await payout(1_013, '000111111113');
    expect((await release(closed.id, { outcome: 'paid' })).body).to.include({ status: 'paid' });
  });

  it('refuses a release without an outcome, of a payout it does not hold, or without the secret key', async () => {
    const held = await payout(700);
    const unsaid = await release(held.id, {});
    expect(unsaid.status).to.equal(400);
    expect(unsaid.body.error).to.include({ type: 'invalid_request_error', param: 'outcome' });
    expect((await release('po_missing', { outcome: 'paid' })).status).to.equal(404);
    expect((await release(held.id, { outcome: 'paid' }, 'sk_test_wrong')).status).to.equal(401);
    expect(await statusOf(held)).to.equal('pending');
  });
});
