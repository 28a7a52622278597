import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { eventually } from '@payments/testkit';
import { createFakeProvider } from './support/fake-provider.js';
import { useLedgerHarness, type TestUser } from './support/ledger-harness.js';

describe('ledger deposits (memory bus)', () => {
  let alice: TestUser;
  const provider = createFakeProvider();

  const ledger = useLedgerHarness({ provider }, { booksBalance: true });
  beforeEach(() => {
    alice = ledger.newUser();
  });

  const openAccount = (currency = 'USD') => ledger.openAccount(alice, currency);

  it('accepts a deposit with 202 and a Location, leaving the balance unchanged', async () => {
    const account = await openAccount();
    const response = await ledger.deposit(alice, account.id, 100.5);
    expect(response.status).to.equal(202);
    expect(response.headers.get('location')).to.equal(`/transaction/${response.body.id}`);
    expect(response.body).to.include({
      account_id: account.id,
      type: 'deposit',
      status: 'pending',
      amount: 100.5,
      currency: 'USD',
      payment_id: response.body.id,
      counterparty_account_id: null,
      failure_reason: null,
      completed_at: null,
    });
    expect(await ledger.balanceOf(alice, account.id)).to.include({ balance: 0, available_balance: 0 });
    const shown = await ledger.call('GET', `/transaction/${response.body.id}`, { user: alice });
    // Once the provider made its payment, the transaction also shows it (provider-requests.test.ts).
    const { provider_payment: _payment, ...transaction } = shown.body;
    expect(transaction).to.deep.equal(response.body);
  });

  it('asks the provider for a payment of the amount in minor units, after the commit', async () => {
    const account = await openAccount();
    const response = await ledger.deposit(alice, account.id, 12.34);
    const [asked] = await eventually(
      async () => provider.paymentsOf(response.body.id),
      (calls) => calls.length > 0,
    );
    expect(asked).to.deep.equal({
      call: 'createPayment',
      request: { transactionId: response.body.id, amount: 1234n, currency: 'USD' },
    });
  });

  it('credits the account once when the payment is confirmed', async () => {
    const account = await openAccount();
    const deposit = await ledger.deposit(alice, account.id, '100.50');
    await ledger.confirm(deposit.body.id);
    const done = await ledger.waitForStatus(alice, deposit.body.id, 'completed');
    expect(done.body.completed_at).to.be.a('string');
    expect(await ledger.balanceOf(alice, account.id)).to.include({
      balance: 100.5,
      available_balance: 100.5,
    });
    const audit = await ledger.audit();
    expect(audit.ok).to.equal(true);
  });

  it('credits once when the same PaymentProcessed arrives five times at once', async () => {
    const account = await openAccount();
    const deposit = await ledger.deposit(alice, account.id, 40);
    const eventId = randomUUID();
    await Promise.all(
      Array.from({ length: 5 }, () => ledger.confirm(deposit.body.id, 'completed', {}, eventId)),
    );
    await ledger.waitForStatus(alice, deposit.body.id, 'completed');
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect((await ledger.balanceOf(alice, account.id)).balance).to.equal(40);
  });

  it('credits once when five different confirmations of one deposit arrive at once', async () => {
    const account = await openAccount();
    const deposit = await ledger.deposit(alice, account.id, 25);
    await Promise.all(Array.from({ length: 5 }, () => ledger.confirm(deposit.body.id)));
    await ledger.waitForStatus(alice, deposit.body.id, 'completed');
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect((await ledger.balanceOf(alice, account.id)).balance).to.equal(25);
  });

  it('fails the deposit without touching the balance when the payment failed', async () => {
    const account = await openAccount();
    const deposit = await ledger.deposit(alice, account.id, 30);
    await ledger.confirm(deposit.body.id, 'failed', { failure_reason: 'card declined' });
    const failed = await ledger.waitForStatus(alice, deposit.body.id, 'failed');
    expect(failed.body.failure_reason).to.equal('card declined');
    expect(failed.body.completed_at).to.equal(null);
    expect(await ledger.balanceOf(alice, account.id)).to.include({ balance: 0, available_balance: 0 });
  });

  it('fails the deposit, crediting nothing, when the confirmed amount disagrees', async () => {
    const account = await openAccount();
    const deposit = await ledger.deposit(alice, account.id, 10);
    await ledger.confirm(deposit.body.id, 'completed', { amount: 100_000, currency: 'USD' });
    const failed = await ledger.waitForStatus(alice, deposit.body.id, 'failed');
    expect(failed.body.failure_reason).to.match(/100000 minor units/);
    expect((await ledger.balanceOf(alice, account.id)).balance).to.equal(0);
  });

  it('fails the deposit, crediting nothing, when the confirmation does not say the amount and currency', async () => {
    const account = await openAccount();
    const deposit = await ledger.deposit(alice, account.id, 10);
    await ledger.confirm(deposit.body.id, 'completed', { amount: undefined, currency: undefined });
    const failed = await ledger.waitForStatus(alice, deposit.body.id, 'failed');
    expect(failed.body.failure_reason).to.match(/did not say which amount and currency/);
    expect(await ledger.balanceOf(alice, account.id)).to.include({ balance: 0, available_balance: 0 });
  });

  it('fails the deposit when the confirmed currency disagrees', async () => {
    const account = await openAccount();
    const deposit = await ledger.deposit(alice, account.id, 10);
    await ledger.confirm(deposit.body.id, 'completed', { amount: 1000, currency: 'EUR' });
    const failed = await ledger.waitForStatus(alice, deposit.body.id, 'failed');
    expect(failed.body.failure_reason).to.match(/EUR/);
    expect((await ledger.balanceOf(alice, account.id)).balance).to.equal(0);
  });

  it('credits a confirmation whose amount and currency agree', async () => {
    const account = await openAccount();
    const deposit = await ledger.deposit(alice, account.id, 10);
    await ledger.confirm(deposit.body.id, 'completed', {
      amount: 1000,
      currency: 'USD',
      movement: 'payment',
    });
    await ledger.waitForStatus(alice, deposit.body.id, 'completed');
    expect((await ledger.balanceOf(alice, account.id)).balance).to.equal(10);
  });

  it('never changes a completed deposit: a late failure or repeat is a no-op', async () => {
    const account = await openAccount();
    const deposit = await ledger.deposit(alice, account.id, 15);
    await ledger.confirm(deposit.body.id);
    await ledger.waitForStatus(alice, deposit.body.id, 'completed');
    await ledger.confirm(deposit.body.id, 'failed');
    await ledger.confirm(deposit.body.id);
    const marker = await ledger.deposit(alice, account.id, 1);
    await ledger.confirm(marker.body.id);
    await ledger.waitForStatus(alice, marker.body.id, 'completed');
    const shown = await ledger.call('GET', `/transaction/${deposit.body.id}`, { user: alice });
    expect(shown.body.status).to.equal('completed');
    expect((await ledger.balanceOf(alice, account.id)).balance).to.equal(16);
  });

  it('acknowledges confirmations for unknown or malformed transaction ids without effect', async () => {
    const account = await openAccount();
    await ledger.confirm(randomUUID());
    await ledger.confirm('not-a-transaction');
    const deposit = await ledger.deposit(alice, account.id, 5);
    await ledger.confirm(deposit.body.id);
    await ledger.waitForStatus(alice, deposit.body.id, 'completed');
    expect(await ledger.bus.listDeadLetters('ledger')).to.have.length(0);
  });

  it('adds 0.1 and 0.2 to exactly 0.3', async () => {
    const account = await openAccount();
    for (const amount of [0.1, 0.2]) {
      const deposit = await ledger.deposit(alice, account.id, amount);
      await ledger.confirm(deposit.body.id);
      await ledger.waitForStatus(alice, deposit.body.id, 'completed');
    }
    expect((await ledger.balanceOf(alice, account.id)).balance).to.equal(0.3);
  });

  it('uses each currency exponent: JPY whole yen, KWD three decimals', async () => {
    const yen = await openAccount('JPY');
    const dinar = await openAccount('KWD');
    const yenDeposit = await ledger.deposit(alice, yen.id, 1500, 'JPY');
    const dinarDeposit = await ledger.deposit(alice, dinar.id, '1.234', 'KWD');
    expect(yenDeposit.body.amount).to.equal(1500);
    expect(dinarDeposit.body.amount).to.equal(1.234);
    for (const id of [yenDeposit.body.id, dinarDeposit.body.id]) {
      await ledger.confirm(id);
      await ledger.waitForStatus(alice, id, 'completed');
    }
    expect((await ledger.balanceOf(alice, yen.id)).balance).to.equal(1500);
    expect((await ledger.balanceOf(alice, dinar.id)).balance).to.equal(1.234);
    const fractionalYen = await ledger.deposit(alice, yen.id, 1.5, 'JPY');
    expect(fractionalYen.status).to.equal(422);
    expect(fractionalYen.body.errors).to.deep.equal([
      { field: 'amount', message: 'must be a whole number in this currency' },
    ]);
  });

  describe('validation', () => {
    let owner: TestUser;
    let accountId: string;
    before(async () => {
      owner = ledger.newUser();
      accountId = (await ledger.openAccount(owner)).id;
    });
    const post = (body: unknown, user = owner, id = accountId) =>
      ledger.call('POST', `/account/${id}/deposit`, { user, body });

    for (const [name, body] of [
      ['a missing amount', { currency: 'USD' }],
      ['a missing currency', { amount: 10 }],
      ['a boolean amount', { amount: true, currency: 'USD' }],
      ['an object amount', { amount: { value: 1 }, currency: 'USD' }],
      ['a numeric currency', { amount: 10, currency: 840 }],
    ] as const) {
      it(`answers 400 VALIDATION_ERROR for ${name}`, async () => {
        const response = await post(body);
        expect(response.status).to.equal(400);
        expect(response.headers.get('content-type')).to.match(/application\/problem\+json/);
        expect(response.body.code).to.equal('VALIDATION_ERROR');
      });
    }

    it('answers 400 for a body that is not JSON', async () => {
      const response = await post('{"amount": ');
      expect(response.status).to.equal(400);
      expect(response.body.code).to.equal('VALIDATION_ERROR');
    });

    for (const [name, amount] of [
      ['zero', 0],
      ['a negative amount', -5],
      ['a negative string', '-5'],
      ['too many decimals', 1.001],
      ['a word', 'ten'],
      ['an exponent string', '1e3'],
      ['an amount above the maximum', 1_000_000.01],
    ] as const) {
      it(`answers 422 INVALID_AMOUNT naming amount for ${name}`, async () => {
        const response = await post({ amount, currency: 'USD' });
        expect(response.status).to.equal(422);
        expect(response.body.code).to.equal('INVALID_AMOUNT');
        expect(response.body.errors[0].field).to.equal('amount');
      });
    }

    it('accepts exactly the maximum amount', async () => {
      const response = await post({ amount: 1_000_000, currency: 'USD' });
      expect(response.status).to.equal(202);
    });

    it('answers 422 INVALID_CURRENCY when the currency is not the account currency', async () => {
      const response = await post({ amount: 10, currency: 'EUR' });
      expect(response.status).to.equal(422);
      expect(response.body.code).to.equal('INVALID_CURRENCY');
      expect(response.body.detail).to.include('USD');
    });

    it("answers 403 ACCESS_DENIED for another user's account", async () => {
      const response = await post({ amount: 10, currency: 'USD' }, ledger.newUser());
      expect(response.status).to.equal(403);
      expect(response.body.code).to.equal('ACCESS_DENIED');
    });

    it('answers 404 for an unknown account and for a malformed id', async () => {
      for (const id of [randomUUID(), 'not-a-uuid']) {
        const response = await post({ amount: 10, currency: 'USD' }, owner, id);
        expect(response.status).to.equal(404);
        expect(response.body.code).to.equal('RESOURCE_NOT_FOUND');
      }
    });

    it('answers 401 without a token', async () => {
      const response = await ledger.call('POST', `/account/${accountId}/deposit`, {
        body: { amount: 10, currency: 'USD' },
      });
      expect(response.status).to.equal(401);
      expect(response.body.code).to.equal('AUTH_REQUIRED');
    });
  });
});
