import { expect } from 'chai';
import { createLogger, loadConfig } from '@payments/service-kit';
import { eventually } from '@payments/testkit';
import { payoutAccountAutoLinkOf } from '../src/config.js';
import { LedgerConfigSchema, startLedger } from '../src/index.js';
import { createFakeProvider } from './support/fake-provider.js';
import { aCustomer, useLedgerHarness, type TestUser } from './support/ledger-harness.js';

describe('ledger: a withdrawal links the payout account it needs (development systems)', function () {
  this.timeout(60_000);
  const provider = createFakeProvider();

  // PAYOUT_ACCOUNT_AUTO_LINK unset: on, as everywhere but production.
  const ledger = useLedgerHarness({ provider }, { booksBalance: true });
  beforeEach(() => {
    provider.behave = () => undefined;
  });

  /** A user with 100 USD who never linked a payout account. */
  const customer = () => aCustomer(ledger);
  const withdraw = (user: TestUser, accountId: string, body: Record<string, unknown>) =>
    ledger.call('POST', `/account/${accountId}/withdraw`, { user, body });
  const accountsMadeFor = (user: TestUser) =>
    provider.calls.filter((c) => c.call === 'createPayoutAccount' && c.userId === user.id);
  const linkedTo = async (user: TestUser) => ledger.db('payout_accounts').where({ user_id: user.id });
  const withdrawalsOf = (user: TestUser) =>
    ledger.db('transactions').where({ user_id: user.id, type: 'withdrawal' });
  const payoutOf = async (id: string) => {
    const [asked] = await eventually(
      async () => provider.callsAbout(id).filter((c) => c.call === 'createPayout'),
      (calls) => calls.length > 0,
    );
    return asked;
  };

  it('links one at the provider for a user with none, as POST /payout-account does, and pays out to it', async () => {
    const { user, account } = await customer();
    const accepted = await withdraw(user, account.id, { amount: 30, currency: 'USD' });
    expect(accepted.status, accepted.text).to.equal(202);
    expect(accountsMadeFor(user)).to.have.length(1);
    const shown = await ledger.call('GET', '/payout-account', { user });
    expect(shown.status).to.equal(200);
    expect(shown.body).to.include({ provider: 'stripe' });
    expect(await payoutOf(accepted.body.id)).to.deep.equal({
      call: 'createPayout',
      request: {
        transactionId: accepted.body.id,
        amount: 3000n,
        currency: 'USD',
        destination: shown.body.account,
      },
    });
    await ledger.confirm(accepted.body.id, 'completed', { movement: 'payout' });
    await ledger.waitForStatus(user, accepted.body.id, 'completed');
    expect(await ledger.balanceOf(user, account.id)).to.include({ balance: 70, available_balance: 70 });
    // Linked, it is kept: the next withdrawal asks the provider for no other account.
    expect((await withdraw(user, account.id, { amount: 10, currency: 'USD' })).status).to.equal(202);
    expect(accountsMadeFor(user)).to.have.length(1);
  });

  it("links nothing for a withdrawal refused for SPEC's reasons (amount, currency, funds), and holds nothing", async () => {
    const { user, account } = await customer();
    const refusals: [Record<string, unknown>, string][] = [
      [{ amount: 100.01, currency: 'USD' }, 'INSUFFICIENT_FUNDS'],
      [{ amount: 10, currency: 'EUR' }, 'INVALID_CURRENCY'],
      [{ amount: 0, currency: 'USD' }, 'INVALID_AMOUNT'],
      [{ amount: 1.001, currency: 'USD' }, 'INVALID_AMOUNT'],
    ];
    for (const [body, code] of refusals) {
      const refused = await withdraw(user, account.id, body);
      expect(refused.status, JSON.stringify(body)).to.equal(422);
      expect(refused.body, JSON.stringify(body)).to.include({ code });
    }
    expect(accountsMadeFor(user)).to.deep.equal([]);
    expect(await linkedTo(user)).to.deep.equal([]);
    expect(await withdrawalsOf(user)).to.deep.equal([]);
    expect(await ledger.balanceOf(user, account.id)).to.include({ balance: 100, available_balance: 100 });
  });

  it('links once for two withdrawals at once, and pays both out to that account', async () => {
    const { user, account } = await customer();
    const [first, second] = await Promise.all([
      withdraw(user, account.id, { amount: 30, currency: 'USD' }),
      withdraw(user, account.id, { amount: 40, currency: 'USD' }),
    ]);
    expect([first?.status, second?.status]).to.deep.equal([202, 202]);
    expect(accountsMadeFor(user)).to.have.length(1);
    const linked = await linkedTo(user);
    expect(linked).to.have.length(1);
    for (const accepted of [first, second]) {
      const asked = await payoutOf(accepted?.body.id);
      expect(asked?.call === 'createPayout' && asked.request.destination).to.equal(linked[0].account);
    }
    expect(await ledger.balanceOf(user, account.id)).to.include({ balance: 100, available_balance: 30 });
  });

  it('answers 503 and holds nothing while the provider cannot make the account; a later withdrawal links it', async () => {
    const { user, account } = await customer();
    provider.behave = (call) => {
      if (call.call === 'createPayoutAccount') throw new Error('connect ECONNREFUSED 127.0.0.1:3005');
    };
    const refused = await withdraw(user, account.id, { amount: 30, currency: 'USD' });
    expect(refused.status).to.equal(503);
    expect(refused.body).to.include({ code: 'SERVICE_UNAVAILABLE' });
    expect(await linkedTo(user)).to.deep.equal([]);
    expect(await withdrawalsOf(user)).to.deep.equal([]);
    expect(await ledger.balanceOf(user, account.id)).to.include({ balance: 100, available_balance: 100 });
    provider.behave = () => undefined;
    const accepted = await withdraw(user, account.id, { amount: 30, currency: 'USD' });
    expect(accepted.status, accepted.text).to.equal(202);
    expect(await linkedTo(user)).to.have.length(1);
  });

  it("links an account with the readiness the provider's account shows, and refuses a withdrawal it cannot pay out", async () => {
    const { user, account } = await customer();
    // The account the provider will make for this user has its verification to finish.
    const made = `acct_${user.id.replaceAll('-', '').slice(0, 16)}`;
    const due = {
      payoutsEnabled: false,
      currentlyDue: ['individual.id_number', 'external_account'],
      disabledReason: 'requirements.past_due',
    };
    provider.accountStatuses.set(made, due);
    const refused = await withdraw(user, account.id, { amount: 30, currency: 'USD' });
    expect(refused.status, refused.text).to.equal(422);
    expect(refused.body).to.include({ code: 'PAYOUTS_NOT_ENABLED' });
    expect(refused.body.detail).to.include('individual.id_number, external_account');
    // Linked (ADR 0099), but nothing held or recorded for the withdrawal.
    expect(await linkedTo(user)).to.have.length(1);
    expect(await withdrawalsOf(user)).to.deep.equal([]);
    expect(await ledger.balanceOf(user, account.id)).to.include({ balance: 100, available_balance: 100 });
    const shown = await ledger.call('GET', '/payout-account', { user });
    expect(shown.body).to.deep.include({
      account: made,
      payouts_enabled: false,
      requirements: { currently_due: due.currentlyDue, disabled_reason: due.disabledReason },
    });

    // Back from the provider's onboarding, the user links again: the account is read anew, and pays out.
    provider.accountStatuses.delete(made);
    const relinked = await ledger.call('POST', '/payout-account', { user });
    expect(relinked.status).to.equal(200);
    expect(relinked.body).to.include({ account: made, payouts_enabled: true });
    expect((await withdraw(user, account.id, { amount: 30, currency: 'USD' })).status).to.equal(202);
  });
});

describe('ledger: PAYOUT_ACCOUNT_AUTO_LINK', () => {
  const load = (env: Record<string, string>) => payoutAccountAutoLinkOf(loadConfig(LedgerConfigSchema, env));

  it('is on outside production unless turned off, and off in production', () => {
    expect(load({})).to.equal(true);
    expect(load({ NODE_ENV: 'test' })).to.equal(true);
    expect(load({ PAYOUT_ACCOUNT_AUTO_LINK: 'false' })).to.equal(false);
    expect(load({ NODE_ENV: 'production' })).to.equal(false);
    expect(load({ NODE_ENV: 'production', PAYOUT_ACCOUNT_AUTO_LINK: 'false' })).to.equal(false);
  });

  it('stops a production ledger from starting when it is turned on', async () => {
    const config = loadConfig(LedgerConfigSchema, {
      NODE_ENV: 'production',
      PAYOUT_ACCOUNT_AUTO_LINK: 'true',
    });
    const refusal = await startLedger(config, { logger: createLogger('ledger-test', 'silent') }).then(
      () => null,
      (error: unknown) => error,
    );
    expect(String(refusal)).to.match(/PAYOUT_ACCOUNT_AUTO_LINK=true is refused when NODE_ENV=production/);
  });
});
