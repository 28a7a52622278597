import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { createEvent } from '@payments/contracts';
import { eventually } from '@payments/testkit';
import { ProviderRefusal } from '../src/provider/payment-provider.js';
import { retryDelayMs } from '../src/use-cases/provider-requests.js';
import { createFakeProvider } from './support/fake-provider.js';
import { aCustomer, useLedgerHarness, type TestUser } from './support/ledger-harness.js';

describe('ledger: asking the payment provider for each deposit', function () {
  this.timeout(60_000);
  const provider = createFakeProvider();
  let alice: TestUser;

  // Two processes over the real broker: both consume the requests and both make calls (competing claimants).
  const ledger = useLedgerHarness(
    {
      transport: 'amqp',
      instances: 2,
      provider,
    },
    { booksBalance: true },
  );
  beforeEach(() => {
    alice = ledger.newUser();
    provider.behave = () => undefined;
  });

  const deposit = async (amount: number) => {
    const account = await ledger.openAccount(alice);
    const accepted = await ledger.deposit(alice, account.id, amount);
    expect(accepted.status, accepted.text).to.equal(202);
    return { account, id: accepted.body.id as string };
  };
  const paymentShown = (id: string, user: TestUser = alice) =>
    eventually(
      () => ledger.call('GET', `/transaction/${id}`, { user }),
      (r) => r.body?.provider_payment !== undefined,
    );

  it("shows the payment's reference and client secret to its owner only, once the provider made it", async () => {
    const { id } = await deposit(25);
    const shown = await paymentShown(id);
    const reference = `pi_${id.replaceAll('-', '')}`;
    expect(shown.body.provider_payment).to.deep.equal({
      provider: 'stripe',
      reference,
      client_secret: `${reference}_secret_test`,
      payment_url: `http://localhost:8080/pay/${id}`,
    });
    const admin = ledger.newUser('admin');
    const asAdmin = await ledger.call('GET', `/transaction/${id}`, { user: admin });
    expect(asAdmin.status).to.equal(200);
    expect(asAdmin.body.provider_payment).to.deep.equal({ provider: 'stripe', reference });
    const mallory = ledger.newUser();
    const asOther = await ledger.call('GET', `/transaction/${id}`, { user: mallory });
    expect(asOther.status).to.equal(403);
    expect(asOther.text).not.to.include('secret');
    // Paid, there is nothing left to pay with it: the secret is no longer shown.
    await ledger.confirm(id);
    const done = await ledger.waitForStatus(alice, id, 'completed');
    expect(done.body.provider_payment).to.deep.equal({ provider: 'stripe', reference });
  });

  it('finds the deposit a provider event names only by its PaymentIntent (a Stripe dispute or refund)', async () => {
    const { account, id } = await deposit(60);
    const { reference } = (await paymentShown(id)).body.provider_payment;
    await ledger.confirm(reference, 'completed', { amount: 6000, currency: 'USD' });
    await ledger.waitForStatus(alice, id, 'completed');
    await ledger.adjust(reference, 'refund', 1500, { reference: 're_by_payment_intent' });
    await eventually(
      () => ledger.balanceOf(alice, account.id),
      (balance) => balance.balance === 45,
    );
    // A reference the ledger never made names nothing: ignored.
    await ledger.adjust('pi_made_by_someone_else', 'refund', 1500);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect((await ledger.balanceOf(alice, account.id)).balance).to.equal(45);
  });

  it('asks once for a request delivered again and again, at once, to both processes', async () => {
    const { account, id } = await deposit(30);
    await paymentShown(id);
    const replayed = createEvent(
      'DepositRequested',
      { transaction_id: id, account_id: account.id, user_id: alice.id, amount: 3000, currency: 'USD' },
      { id: randomUUID(), correlationId: `replay-${id}` },
    );
    await Promise.all(
      Array.from({ length: 6 }, (_, i) =>
        ledger.bus.publish(i % 2 === 0 ? replayed : { ...replayed, id: randomUUID() }),
      ),
    );
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect(provider.paymentsOf(id)).to.have.length(1);
  });

  it('keeps asking a provider that is down, with backoff, and asks no more once it answered', async () => {
    let failures = 0;
    provider.behave = (call) => {
      if (call.call === 'createPayment' && failures < 3) {
        failures += 1;
        throw Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:3005'), { code: 'ECONNREFUSED' });
      }
    };
    const { id } = await deposit(40);
    await paymentShown(id);
    expect(failures).to.equal(3);
    expect(provider.paymentsOf(id)).to.have.length(4);
    const row = await ledger.db('provider_payments').where({ transaction_id: id }).first();
    expect(row).to.include({ state: 'created', attempts: 4, next_attempt_at: null, last_error: null });
    // It stays pending for the payer; nothing was credited by the trouble.
    expect(
      await ledger.balanceOf(alice, (await ledger.db('transactions').where({ id }).first()).account_id),
    ).to.include({ balance: 0 });
  });

  it("fails the deposit with the provider's reason when it refuses, and asks no more", async () => {
    provider.behave = (call) => {
      if (call.call === 'createPayment')
        throw new ProviderRefusal('Amount must be at least $0.50 usd', 'amount_too_small');
    };
    const { id } = await deposit(0.3);
    const failed = await ledger.waitForStatus(alice, id, 'failed');
    expect(failed.body.failure_reason).to.equal(
      'The payment provider refused it: Amount must be at least $0.50 usd',
    );
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    expect(provider.paymentsOf(id)).to.have.length(1);
  });
});

describe('ledger: an expired deposit is canceled at the provider', function () {
  this.timeout(30_000);
  const provider = createFakeProvider();
  let alice: TestUser;

  const ledger = useLedgerHarness({
    provider,
    env: { DEPOSIT_EXPIRY_SECONDS: '1', HOLD_SWEEP_INTERVAL_MS: '200' },
  });
  before(async () => {
    alice = ledger.newUser();
  });

  const deposit = async (amount: number) => {
    const account = await ledger.openAccount(alice);
    const accepted = await ledger.deposit(alice, account.id, amount);
    expect(accepted.status, accepted.text).to.equal(202);
    return { account, id: accepted.body.id as string };
  };
  const paymentShown = (id: string) =>
    eventually(
      () => ledger.call('GET', `/transaction/${id}`, { user: alice }),
      (r) => r.body?.provider_payment !== undefined,
    );

  it('cancels the payment at the provider when the deposit expires unpaid, once', async () => {
    const { id } = await deposit(12);
    const shown = await paymentShown(id);
    const canceled = await ledger.waitForStatus(alice, id, 'canceled', 10_000);
    expect(canceled.body.failure_reason).to.match(/expired/);
    const cancels = await eventually(
      async () => provider.calls.filter((c) => c.call === 'cancelPayment' && c.transactionId === id),
      (found) => found.length > 0,
    );
    expect(cancels).to.deep.equal([
      { call: 'cancelPayment', reference: shown.body.provider_payment.reference, transactionId: id },
    ]);
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect(provider.calls.filter((c) => c.call === 'cancelPayment' && c.transactionId === id)).to.have.length(
      1,
    );
  });

  it('cancels at the provider a deposit that expired while its calls failed (the payment may have been made)', async () => {
    // The answer is lost after the provider made the payment, as when the connection drops on the way back.
    provider.behave = (call) => {
      if (call.call === 'createPayment') throw new Error('socket hang up');
    };
    const { id } = await deposit(13);
    await eventually(
      async () => provider.paymentsOf(id),
      (calls) => calls.length > 0,
    );
    await ledger.waitForStatus(alice, id, 'canceled', 10_000);
    provider.behave = () => undefined;
    const row = await eventually(
      () => ledger.db('provider_payments').where({ transaction_id: id }).first(),
      (found) => found?.state === 'closed',
      { timeoutMs: 10_000 },
    );
    expect(row).to.include({ reference: `pi_${id.replaceAll('-', '')}`, next_attempt_at: null });
    expect(provider.calls.filter((c) => c.call === 'cancelPayment' && c.transactionId === id)).to.have.length(
      1,
    );
  });
});

describe('ledger: provider retry delays', () => {
  it('doubles from about a second up to five minutes, with jitter', () => {
    expect(retryDelayMs(1, () => 0)).to.equal(500);
    expect(retryDelayMs(1, () => 1)).to.equal(1_000);
    expect(retryDelayMs(4, () => 1)).to.equal(8_000);
    expect(retryDelayMs(30, () => 1)).to.equal(300_000);
    expect(retryDelayMs(30, () => 0)).to.equal(150_000);
  });
});

describe('ledger: paying withdrawals out through the provider (Connect)', function () {
  this.timeout(60_000);
  const provider = createFakeProvider();

  // As in production: a withdrawal links no payout account itself (payout-accounts.test.ts tests that it may).
  const ledger = useLedgerHarness(
    { provider, env: { PAYOUT_ACCOUNT_AUTO_LINK: 'false' } },
    { booksBalance: true },
  );
  beforeEach(() => {
    provider.behave = () => undefined;
  });

  /** A user with 100 USD and, unless told otherwise, a linked payout account. */
  const customer = (linked = true) => aCustomer(ledger, { payoutAccount: linked });
  const withdraw = (user: TestUser, accountId: string, amount: number) =>
    ledger.withdraw(user, accountId, amount);
  const payoutOf = async (id: string) => {
    const [asked] = await eventually(
      async () => provider.callsAbout(id).filter((c) => c.call === 'createPayout'),
      (calls) => calls.length > 0,
    );
    return asked;
  };
  const reversalsOf = (id: string) => provider.callsAbout(id).filter((c) => c.call === 'reversePayout');
  const quietly = () => new Promise((resolve) => setTimeout(resolve, 800));

  it('refuses a withdrawal with 422 and holds nothing while no payout account is linked', async () => {
    const { user, account } = await customer(false);
    const key = { 'idempotency-key': `withdraw-${randomUUID()}` };
    const body = { amount: 30, currency: 'USD' };
    const path = `/account/${account.id}/withdraw`;
    const refused = await ledger.call('POST', path, { user, body, headers: key });
    expect(refused.status).to.equal(422);
    expect(refused.body).to.include({ code: 'BUSINESS_RULE_VIOLATION' });
    expect(refused.body.detail).to.match(/POST \/payout-account/);
    expect(await ledger.balanceOf(user, account.id)).to.include({ balance: 100, available_balance: 100 });
    expect(await ledger.db('transactions').where({ user_id: user.id, type: 'withdrawal' })).to.deep.equal([]);
    expect((await ledger.call('GET', '/payout-account', { user })).status).to.equal(404);
    expect(
      provider.calls.filter((c) => c.call === 'createPayoutAccount' && c.userId === user.id),
    ).to.deep.equal([]);
    // Nothing was kept of it, its Idempotency-Key neither: once linked, the same request is accepted.
    expect((await ledger.call('POST', '/payout-account', { user })).status).to.equal(201);
    const accepted = await ledger.call('POST', path, { user, body, headers: key });
    expect(accepted.status, accepted.text).to.equal(202);
    expect(accepted.headers.get('idempotent-replayed')).to.equal(null);
  });

  it('refuses a withdrawal over the balance with INSUFFICIENT_FUNDS, whether or not a payout account is linked', async () => {
    for (const linked of [false, true]) {
      const { user, account } = await customer(linked);
      const refused = await withdraw(user, account.id, 100.01);
      expect(refused.status, `linked: ${linked}`).to.equal(422);
      expect(refused.body, `linked: ${linked}`).to.include({ code: 'INSUFFICIENT_FUNDS' });
      expect(await ledger.balanceOf(user, account.id)).to.include({ balance: 100, available_balance: 100 });
      expect(await ledger.db('transactions').where({ user_id: user.id, type: 'withdrawal' })).to.deep.equal(
        [],
      );
    }
  });

  it('links one connected account per user, made by the provider, and shows it to its user alone', async () => {
    const user = ledger.newUser();
    const first = await ledger.call('POST', '/payout-account', { user });
    expect(first.status).to.equal(201);
    expect(first.body.account).to.match(/^acct_/);
    expect(first.body).to.include({
      provider: 'stripe',
      onboarding_url: `https://connect.example/${first.body.account}`,
    });
    const again = await ledger.call('POST', '/payout-account', { user });
    expect(again.status).to.equal(200);
    expect(again.body).to.deep.equal(first.body);
    // Linked once, the account is kept: the provider is not asked to make another.
    const made = provider.calls.filter((c) => c.call === 'createPayoutAccount' && c.userId === user.id);
    expect(made).to.have.length(1);
    const shown = await ledger.call('GET', '/payout-account', { user });
    expect(shown.body).to.deep.equal({
      provider: 'stripe',
      account: first.body.account,
      payouts_enabled: true,
      requirements: { currently_due: [], disabled_reason: null },
      created_at: first.body.created_at,
    });
    const other = ledger.newUser();
    expect((await ledger.call('GET', '/payout-account', { user: other })).status).to.equal(404);
  });

  it('pays a withdrawal out to the linked account and debits it once the payout is paid', async () => {
    const { user, account } = await customer();
    const linked = (await ledger.call('GET', '/payout-account', { user })).body.account as string;
    const accepted = await withdraw(user, account.id, 30);
    expect(accepted.status).to.equal(202);
    const asked = await payoutOf(accepted.body.id);
    expect(asked).to.deep.equal({
      call: 'createPayout',
      request: { transactionId: accepted.body.id, amount: 3000n, currency: 'USD', destination: linked },
    });
    const shown = await eventually(
      () => ledger.call('GET', `/transaction/${accepted.body.id}`, { user }),
      (r) => r.body?.provider_payment !== undefined,
    );
    expect(shown.body.provider_payment).to.deep.equal({
      provider: 'stripe',
      reference: `po_${accepted.body.id.replaceAll('-', '')}`,
    });
    await ledger.confirm(accepted.body.id, 'completed', { movement: 'payout' });
    await ledger.waitForStatus(user, accepted.body.id, 'completed');
    expect(await ledger.balanceOf(user, account.id)).to.include({ balance: 70, available_balance: 70 });
    await quietly();
    expect(reversalsOf(accepted.body.id)).to.deep.equal([]);
  });

  it('releases the hold when the payout fails, and takes its transfer back once', async () => {
    const { user, account } = await customer();
    const accepted = await withdraw(user, account.id, 20);
    await payoutOf(accepted.body.id);
    await eventually(
      () => ledger.db('provider_payments').where({ transaction_id: accepted.body.id }).first(),
      (row) => row?.state === 'created',
    );
    await Promise.all([1, 2].map(() => ledger.confirm(accepted.body.id, 'failed', { movement: 'payout' })));
    await ledger.waitForStatus(user, accepted.body.id, 'failed');
    expect(await ledger.balanceOf(user, account.id)).to.include({ balance: 100, available_balance: 100 });
    const reversed = await eventually(
      async () => reversalsOf(accepted.body.id),
      (calls) => calls.length > 0,
    );
    expect(reversed).to.deep.equal([
      {
        call: 'reversePayout',
        transfer: `tr_${accepted.body.id.replaceAll('-', '')}`,
        transactionId: accepted.body.id,
      },
    ]);
    await quietly();
    expect(reversalsOf(accepted.body.id)).to.have.length(1);
  });

  it('credits back a payout that came back after it was paid, linked to it, and takes its transfer back', async () => {
    const { user, account } = await customer();
    const accepted = await withdraw(user, account.id, 10);
    await payoutOf(accepted.body.id);
    await ledger.confirm(accepted.body.id, 'completed', { movement: 'payout' });
    await ledger.waitForStatus(user, accepted.body.id, 'completed');
    await ledger.confirm(accepted.body.id, 'failed', {
      movement: 'payout',
      failure_reason: 'account_closed',
    });
    await eventually(
      () => ledger.balanceOf(user, account.id),
      (balance) => balance.balance === 100,
    );
    const history = await ledger.call('GET', `/account/${account.id}/transactions`, { user });
    const returned = history.body.data.find((t: { type: string }) => t.type === 'reversal');
    expect(returned).to.include({
      reversal_reason: 'payout_returned',
      original_transaction_id: accepted.body.id,
    });
    await eventually(
      async () => reversalsOf(accepted.body.id),
      (calls) => calls.length === 1,
    );
  });

  it('takes back the transfer of a payout that failed before its creation was recorded', async () => {
    // The provider made the payout but its answer was lost (the ledger killed while waiting, a dropped connection);
    // the payout fails at the provider before the ledger asks again.
    provider.behave = (call) => {
      if (call.call === 'createPayout') throw new Error('socket hang up');
    };
    const { user, account } = await customer();
    const accepted = await withdraw(user, account.id, 15);
    await payoutOf(accepted.body.id);
    await ledger.confirm(accepted.body.id, 'failed', { movement: 'payout' });
    await ledger.waitForStatus(user, accepted.body.id, 'failed');
    provider.behave = () => undefined;
    const row = await eventually(
      () => ledger.db('provider_payments').where({ transaction_id: accepted.body.id }).first(),
      (found) => found?.state === 'closed',
      { timeoutMs: 10_000 },
    );
    expect(row.transfer).to.equal(`tr_${accepted.body.id.replaceAll('-', '')}`);
    expect(reversalsOf(accepted.body.id)).to.have.length(1);
    expect(await ledger.balanceOf(user, account.id)).to.include({ balance: 100, available_balance: 100 });
  });

  it("fails the withdrawal with the provider's reason when it refuses the payout, releasing the hold", async () => {
    provider.behave = (call) => {
      if (call.call === 'createPayout')
        throw new ProviderRefusal(
          'Your destination account needs to have at least one of the following capabilities enabled: transfers',
        );
    };
    const { user, account } = await customer();
    const accepted = await withdraw(user, account.id, 25);
    const failed = await ledger.waitForStatus(user, accepted.body.id, 'failed');
    expect(failed.body.failure_reason).to.match(/^The payment provider refused it: Your destination account/);
    expect(await ledger.balanceOf(user, account.id)).to.include({ balance: 100, available_balance: 100 });
  });
});
