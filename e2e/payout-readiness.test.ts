import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import type Stripe from 'stripe';
import { eventually, useSystem } from '@payments/testkit';
import {
  nowSeconds,
  postProviderEvent,
  providerSignature,
  rawApi,
  sandboxStripe,
  signUp,
  type ApiResponse,
  type TestUser,
} from '@payments/test-support';

interface Owner extends TestUser {
  accountId: string;
  /** The connected account linked for the owner at the provider (`acct_…`). */
  connected: string;
}

/** Long enough for an event that (wrongly) took effect to show before a test checks that nothing changed. */
const SETTLE_MS = 1_500;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Payout readiness through the real system: the sandbox plays Stripe Connect, its test values drive each connected
 * account's verification, and its signed `account.updated` events travel through webhook-ingest to the ledger. Every
 * payout waits for the test to release it (SANDBOX_HOLD_PAYOUTS), so a withdrawal stays in flight as long as a test
 * needs.
 */
describe('payout readiness: account.updated, withdrawals to accounts that cannot be paid out, replacement', function () {
  this.timeout(120_000);
  let stripe: Stripe;

  const system = useSystem(
    { serviceEnv: { 'provider-sandbox': { SANDBOX_HOLD_PAYOUTS: 'true' } } },
    { booksBalance: true },
  );
  const api = rawApi(system);

  before(() => {
    stripe = sandboxStripe(system);
  });

  const settled = (owner: TestUser, id: string) =>
    eventually(
      () => owner.client.transactions.get(id),
      (transaction) => transaction.status !== 'pending',
      { timeoutMs: 20_000 },
    );

  /** A user with `amount` USD paid in (the sandbox pays deposits by itself) and a payout account linked. */
  const owner = async (amount = 100): Promise<Owner> => {
    const user = await signUp(system.gatewayUrl);
    const { id: accountId } = await user.client.accounts.open({ currency: 'USD' });
    const deposit = await user.client.money.deposit(accountId, { amount, currency: 'USD' });
    expect((await settled(user, deposit.id)).status).to.equal('completed');
    const linked = await api.post('/v1.1/payout-account', undefined, user.token);
    expect(linked.status, linked.text).to.equal(201);
    return { ...user, accountId, connected: linked.body.account as string };
  };

  const payoutAccount = async (who: TestUser) => {
    const shown = await api.get('/v1.1/payout-account', who.token);
    expect(shown.status, shown.text).to.equal(200);
    return shown.body as {
      account: string;
      payouts_enabled: boolean;
      requirements: { currently_due: string[]; disabled_reason: string | null };
    };
  };
  const readiness = (who: TestUser, enabled: boolean) =>
    eventually(
      () => payoutAccount(who),
      (shown) => shown.payouts_enabled === enabled,
      {
        timeoutMs: 15_000,
        what: `the payout account shown ${enabled ? 'enabled' : 'disabled'}`,
      },
    );

  /** The user at the provider's onboarding: the sandbox's test ID numbers move the account's verification. */
  const onboard = (connected: string, idNumber: string) =>
    stripe.accounts.update(connected, { individual: { id_number: idNumber } });

  const withdraw = (who: Owner, amount: number, headers?: Record<string, string>) =>
    api.post(`/v1.1/account/${who.accountId}/withdraw`, { amount, currency: 'USD' }, who.token, headers);

  /** The payout the provider made for a withdrawal, which the sandbox holds until released. */
  const payoutOf = async (who: TestUser, transactionId: string) => {
    const shown = await eventually(
      () => who.client.transactions.get(transactionId),
      (transaction) => transaction.provider_payment?.reference?.startsWith('po_') === true,
      { timeoutMs: 15_000 },
    );
    return shown.provider_payment?.reference as string;
  };
  const release = async (payout: string) => {
    const sandbox = new URL(`/sandbox/payouts/${payout}/release`, system.urls['provider-sandbox']);
    const answer = await fetch(sandbox, {
      method: 'POST',
      headers: { authorization: `Bearer ${system.sandboxApiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ outcome: 'paid' }),
    });
    expect(answer.status, await answer.text()).to.equal(200);
  };
  const withdrawn = async (who: Owner, amount: number) => {
    const accepted = await withdraw(who, amount);
    expect(accepted.status, accepted.text).to.equal(202);
    const payout = await payoutOf(who, accepted.body.id as string);
    await release(payout);
    expect((await settled(who, accepted.body.id as string)).status).to.equal('completed');
    return { id: accepted.body.id as string, payout };
  };

  const balance = (who: Owner) => who.client.balances.get(who.accountId);
  const withdrawalsOf = async (who: Owner) =>
    (await who.client.transactions.historyPage(who.accountId, { type: 'withdrawal' })).data;

  /** A Stripe `account.updated` about `connected`, made by the test and signed with the secret given. */
  const accountUpdated = (
    connected: string,
    state: { payouts_enabled: boolean; currently_due?: string[]; disabled_reason?: string | null },
    options: { created?: number; envelopeAccount?: string } = {},
  ) => ({
    id: `evt_${randomUUID().replaceAll('-', '')}`,
    object: 'event',
    type: 'account.updated',
    api_version: '2025-12-15.clover',
    created: options.created ?? nowSeconds(),
    livemode: false,
    account: options.envelopeAccount ?? connected,
    data: {
      object: {
        id: connected,
        object: 'account',
        payouts_enabled: state.payouts_enabled,
        requirements: {
          currently_due: state.currently_due ?? [],
          disabled_reason: state.disabled_reason ?? null,
        },
      },
    },
  });
  const deliver = async (event: object, secret = system.webhookSecret) => {
    const response = await postProviderEvent(api, event, secret);
    expect(response.status, response.text).to.equal(200);
  };

  const expectProblem = (response: ApiResponse, status: number, code: string) => {
    expect(response.status, response.text).to.equal(status);
    expect(response.headers.get('content-type')).to.match(/^application\/problem\+json/);
    expect(response.body.code, response.text).to.equal(code);
    expect(response.text).not.to.match(/SELECT|UPDATE|constraint|at .*\.ts:/);
  };

  it('shows a linked account as the provider reports it: payouts enabled, nothing due', async () => {
    const alice = await owner(10);
    const shown = await payoutAccount(alice);
    expect(shown).to.include({ account: alice.connected, payouts_enabled: true });
    expect(shown.requirements).to.deep.equal({ currently_due: [], disabled_reason: null });
  });

  it('refuses a withdrawal while requirements are due (holding nothing), and accepts it once account.updated enables the account', async () => {
    const alice = await owner(100);
    // The provider's verification fails (Stripe's test ID number 111111111): the ID number is due, payouts off.
    await onboard(alice.connected, '111111111');
    const disabled = await readiness(alice, false);
    expect(disabled.requirements).to.deep.equal({
      currently_due: ['individual.id_number'],
      disabled_reason: 'requirements.past_due',
    });

    const refused = await withdraw(alice, 20, { 'idempotency-key': `readiness-${randomUUID()}` });
    expectProblem(refused, 422, 'PAYOUTS_NOT_ENABLED');
    expect(refused.body.detail).to.include('individual.id_number').and.include('requirements.past_due');
    // SPEC's refusal comes first: over the balance it is INSUFFICIENT_FUNDS, as without a payout account.
    expectProblem(await withdraw(alice, 500), 422, 'INSUFFICIENT_FUNDS');
    expect(await balance(alice)).to.include({ balance: 100, available_balance: 100 });
    expect(await withdrawalsOf(alice)).to.deep.equal([]);

    // Verification pending (the sandbox's 222222222), then verified moments later: two account.updated events.
    await onboard(alice.connected, '222222222');
    const enabled = await readiness(alice, true);
    expect(enabled.requirements).to.deep.equal({ currently_due: [], disabled_reason: null });
    await withdrawn(alice, 20);
    expect(await balance(alice)).to.include({ balance: 80, available_balance: 80 });
  });

  it('never lets an older account.updated arriving late flip the account back', async () => {
    const bob = await owner(50);
    await onboard(bob.connected, '111111111');
    await readiness(bob, false);
    // Signed, but an hour old, and saying the account pays out: not taken on its word.
    await deliver(
      accountUpdated(bob.connected, { payouts_enabled: true }, { created: nowSeconds() - 3_600 }),
    );
    await sleep(SETTLE_MS);
    expect((await payoutAccount(bob)).payouts_enabled).to.equal(false);
    expectProblem(await withdraw(bob, 10), 422, 'PAYOUTS_NOT_ENABLED');

    // And the other way: enabled now, a late event of when it was disabled changes nothing.
    await onboard(bob.connected, '000000000');
    await readiness(bob, true);
    await deliver(
      accountUpdated(
        bob.connected,
        {
          payouts_enabled: false,
          currently_due: ['external_account'],
          disabled_reason: 'requirements.past_due',
        },
        { created: nowSeconds() - 3_600 },
      ),
    );
    await sleep(SETTLE_MS);
    expect(await payoutAccount(bob)).to.include({ payouts_enabled: true });
    await withdrawn(bob, 10);
  });

  it('changes nothing for an unsigned or forged account.updated', async () => {
    const carol = await owner(30);
    const forged = JSON.stringify(
      accountUpdated(carol.connected, {
        payouts_enabled: false,
        currently_due: ['individual.id_number'],
        disabled_reason: 'requirements.past_due',
      }),
    );
    const unsigned = await api.request('POST', '/webhook/provider', {
      raw: forged,
      headers: { 'content-type': 'application/json' },
    });
    expect(unsigned.status, unsigned.text).to.equal(400);
    const wrongKey = await api.request('POST', '/webhook/provider', {
      raw: forged,
      headers: {
        'content-type': 'application/json',
        'stripe-signature': providerSignature(forged, 'whsec_not_the_secret'),
      },
    });
    expect(wrongKey.status, wrongKey.text).to.equal(400);
    await sleep(SETTLE_MS);
    expect(await payoutAccount(carol)).to.include({ payouts_enabled: true });

    // And the other way round: a forged event cannot enable an account the provider disabled.
    await onboard(carol.connected, '111111111');
    await readiness(carol, false);
    const enabling = JSON.stringify(accountUpdated(carol.connected, { payouts_enabled: true }));
    const forgedEnable = await api.request('POST', '/webhook/provider', {
      raw: enabling,
      headers: { 'content-type': 'application/json', 'stripe-signature': providerSignature(enabling, 'x') },
    });
    expect(forgedEnable.status).to.equal(400);
    await sleep(SETTLE_MS);
    expect(await payoutAccount(carol)).to.include({ payouts_enabled: false });
    expectProblem(await withdraw(carol, 10), 422, 'PAYOUTS_NOT_ENABLED');
    expect(await balance(carol)).to.include({ balance: 30, available_balance: 30 });
  });

  it("takes an account.updated only for the account it is about: never another user's, nor one linked to nobody", async () => {
    const dave = await owner(20);
    const erin = await owner(20);
    // An account at the provider that nobody here linked (made directly with the platform's key).
    const stray = await stripe.accounts.create({ type: 'express', individual: { id_number: '111111111' } });
    expect(stray.payouts_enabled).to.equal(false);
    await deliver(accountUpdated(stray.id, { payouts_enabled: false, currently_due: ['external_account'] }));
    // Erin's account, in the envelope of an event whose object is Dave's: recorded, and changes nobody's.
    await deliver(
      accountUpdated(dave.connected, { payouts_enabled: false }, { envelopeAccount: erin.connected }),
    );
    // Erin's own account disabled: Dave's stays as it is.
    await onboard(erin.connected, '111111111');
    await readiness(erin, false);
    await sleep(SETTLE_MS);
    expect(await payoutAccount(dave)).to.include({ account: dave.connected, payouts_enabled: true });
    await withdrawn(dave, 5);
  });

  it('replaces the payout account only while no withdrawal is in flight, and pays the next one to the new account', async () => {
    const frank = await owner(100);
    const accepted = await withdraw(frank, 10);
    expect(accepted.status, accepted.text).to.equal(202);
    const payout = await payoutOf(frank, accepted.body.id as string);

    // In flight: its payout waits at the bank. Replacing now is refused, and nothing changes.
    const early = await api.put('/v1.1/payout-account', { replaces: frank.connected }, frank.token);
    expectProblem(early, 409, 'CONFLICT');
    expect((await payoutAccount(frank)).account).to.equal(frank.connected);

    await release(payout);
    expect((await settled(frank, accepted.body.id as string)).status).to.equal('completed');

    const replaced = await api.put('/v1.1/payout-account', { replaces: frank.connected }, frank.token);
    expect(replaced.status, replaced.text).to.equal(200);
    const renewed = replaced.body.account as string;
    expect(renewed)
      .to.match(/^acct_/)
      .and.not.equal(frank.connected);
    expect(replaced.body).to.include({ provider: 'stripe', payouts_enabled: true });
    expect(replaced.body.onboarding_url).to.be.a('string');
    expect((await stripe.accounts.retrieve(renewed)).metadata).to.deep.include({ user_id: frank.userId });

    // Repeated (a retry): the same new account, no third one. An account never linked is a conflict.
    const again = await api.put('/v1.1/payout-account', { replaces: frank.connected }, frank.token);
    expect(again.status, again.text).to.equal(200);
    expect(again.body.account).to.equal(renewed);
    expectProblem(
      await api.put('/v1.1/payout-account', { replaces: 'acct_someone_else' }, frank.token),
      409,
      'CONFLICT',
    );
    expectProblem(
      await api.put('/v1.1/payout-account', { replace: renewed }, frank.token),
      400,
      'VALIDATION_ERROR',
    );
    expect((await payoutAccount(frank)).account).to.equal(renewed);

    // The next withdrawal goes to the new account; the old one is no longer followed.
    const next = await withdrawn(frank, 15);
    const onRenewed = await stripe.payouts.list({ limit: 10 }, { stripeAccount: renewed });
    expect(onRenewed.data.map((p) => p.id)).to.include(next.payout);
    const onOld = await stripe.payouts.list({ limit: 10 }, { stripeAccount: frank.connected });
    expect(onOld.data.map((p) => p.id)).not.to.include(next.payout);
    await deliver(
      accountUpdated(frank.connected, { payouts_enabled: false, currently_due: ['external_account'] }),
    );
    await sleep(SETTLE_MS);
    expect(await payoutAccount(frank)).to.include({ account: renewed, payouts_enabled: true });
    expect(await balance(frank)).to.include({ balance: 75, available_balance: 75 });
  });

  it('refuses to replace an account nobody linked (404), and keeps linking on withdrawal outside production (ADR 0099)', async () => {
    const grace = await signUp(system.gatewayUrl);
    expectProblem(
      await api.put('/v1.1/payout-account', { replaces: 'acct_x' }, grace.token),
      404,
      'RESOURCE_NOT_FOUND',
    );
    const { id: accountId } = await grace.client.accounts.open({ currency: 'USD' });
    const deposit = await grace.client.money.deposit(accountId, { amount: 10, currency: 'USD' });
    await settled(grace, deposit.id);
    const accepted = await api.post(
      `/v1.1/account/${accountId}/withdraw`,
      { amount: 4, currency: 'USD' },
      grace.token,
    );
    expect(accepted.status, accepted.text).to.equal(202);
    expect(await payoutAccount(grace)).to.include({ payouts_enabled: true });
    await release(await payoutOf(grace, accepted.body.id as string));
    expect((await settled(grace, accepted.body.id as string)).status).to.equal('completed');
  });
});
