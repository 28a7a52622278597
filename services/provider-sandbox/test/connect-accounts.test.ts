import { expect } from 'chai';
import type Stripe from 'stripe';
import { eventually, useStarted } from '@payments/testkit';
import { startSandboxWithReceiver } from './support/stripe-sandbox.js';

/**
 * A connected account's verification, driven by the sandbox's test ID numbers (stripe/account-requirements.ts), and
 * the account.updated events it sends for each change, through the stripe library.
 */
describe('provider-sandbox: connected accounts verified by test values, with account.updated', () => {
  const sandbox = useStarted(() => startSandboxWithReceiver({ SANDBOX_DELAY_MS: '200' }));

  const updatesOf = async (account: string, count: number) => {
    const found = await eventually(
      async () => sandbox.receiver.about(account),
      (events) => events.length >= count,
    );
    expect(found.every((r) => r.verified)).to.equal(true);
    return found.map((r) => r.event as Stripe.AccountUpdatedEvent);
  };

  it('makes an account verified by default, and one with 111111111 with its ID number due and payouts off', async () => {
    const verified = await sandbox.stripe.accounts.create({ type: 'express' });
    expect(verified.payouts_enabled).to.equal(true);
    expect(verified.requirements).to.deep.include({ currently_due: [], disabled_reason: null });

    const unverified = await sandbox.stripe.accounts.create({
      type: 'express',
      individual: { id_number: '111111111' },
    });
    expect(unverified.payouts_enabled).to.equal(false);
    expect(unverified.requirements).to.deep.include({
      currently_due: ['individual.id_number'],
      past_due: ['individual.id_number'],
      disabled_reason: 'requirements.past_due',
    });
    expect((await sandbox.stripe.accounts.retrieve(unverified.id)).payouts_enabled).to.equal(false);
    // Stripe pays nothing out from an account it has not enabled.
    const refused = await sandbox.stripe.payouts
      .create({ amount: 100, currency: 'usd' }, { stripeAccount: unverified.id })
      .catch((error: unknown) => error);
    expect(refused).to.include({ statusCode: 400, code: 'payouts_not_allowed' });
  });

  it('verifies an account updated with 222222222 after a pending verification: two account.updated', async () => {
    const account = await sandbox.stripe.accounts.create({
      type: 'express',
      individual: { id_number: '111111111' },
    });
    const pending = await sandbox.stripe.accounts.update(account.id, {
      individual: { id_number: '222222222' },
    });
    expect(pending.payouts_enabled).to.equal(false);
    expect(pending.requirements).to.deep.include({
      currently_due: [],
      pending_verification: ['individual.id_number'],
      disabled_reason: 'requirements.pending_verification',
    });
    const events = await updatesOf(account.id, 2);
    expect(events.map((e) => [e.type, e.account, e.data.object.payouts_enabled])).to.deep.equal([
      ['account.updated', account.id, false],
      ['account.updated', account.id, true],
    ]);
    expect(events[1]!.created).to.be.at.least(events[0]!.created);
    expect((await sandbox.stripe.accounts.retrieve(account.id)).requirements?.disabled_reason).to.equal(null);

    // Updated with nothing that changes it: no event.
    await sandbox.stripe.accounts.update(account.id, { individual: { id_number: '000000000' } });
    await new Promise((resolve) => setTimeout(resolve, 400));
    expect(sandbox.receiver.about(account.id)).to.have.length(2);
  });
});
