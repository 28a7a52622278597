import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { useLedgerHarness, type TestUser } from './support/ledger-harness.js';

describe('ledger transfers', () => {
  let alice: TestUser;
  let bob: TestUser;

  const ledger = useLedgerHarness({}, { booksBalance: true });
  beforeEach(() => {
    alice = ledger.newUser();
    bob = ledger.newUser();
  });

  const transfer = (
    from: string,
    body: Record<string, unknown>,
    options: { user?: TestUser; version?: string } = {},
  ) =>
    ledger.call('POST', `/account/${from}/transfer`, {
      user: options.user ?? alice,
      body: { currency: 'USD', ...body },
      headers: options.version ? { 'x-api-version': options.version } : {},
    });

  const funded = async (user: TestUser, amount: number, currency = 'USD') => {
    const account = await ledger.openAccount(user, currency);
    await ledger.fund(user, account.id, amount, currency);
    return account;
  };

  it("moves money to another user's account: source debited, destination credited, once", async () => {
    const source = await funded(alice, 100);
    const destination = await ledger.openAccount(bob);
    const response = await transfer(source.id, { to_account_id: destination.id, amount: 30 });
    expect(response.status).to.equal(202);
    expect(response.headers.get('location')).to.equal(`/transaction/${response.body.id}`);
    expect(response.body).to.include({
      type: 'transfer',
      amount: 30,
      currency: 'USD',
      account_id: source.id,
      counterparty_account_id: destination.id,
      payment_id: null,
    });
    await ledger.waitForStatus(alice, response.body.id, 'completed');
    expect(await ledger.balanceOf(alice, source.id)).to.include({ balance: 70, available_balance: 70 });
    expect(await ledger.balanceOf(bob, destination.id)).to.include({ balance: 30, available_balance: 30 });
  });

  it('shows a completed transfer in the receiver history, and lets them read it', async () => {
    const source = await funded(alice, 50);
    const destination = await ledger.openAccount(bob);
    const response = await transfer(source.id, { to_account_id: destination.id, amount: 5 });
    await ledger.waitForStatus(alice, response.body.id, 'completed');
    const received = await ledger.call('GET', '/transactions', { user: bob });
    expect(received.body.data.map((t: { id: string }) => t.id)).to.deep.equal([response.body.id]);
    const byAccount = await ledger.call('GET', `/account/${destination.id}/transactions`, { user: bob });
    expect(byAccount.body.pagination.total).to.equal(1);
    const shown = await ledger.call('GET', `/transaction/${response.body.id}`, { user: bob });
    expect(shown.status).to.equal(200);
    const stranger = await ledger.call('GET', `/transaction/${response.body.id}`, { user: ledger.newUser() });
    expect(stranger.status).to.equal(403);
  });

  it('merges sent and received transactions newest first, page by page', async () => {
    const source = await funded(alice, 50);
    const destination = await ledger.openAccount(bob);
    const ids: string[] = [];
    for (const amount of [1, 2, 3]) {
      const sent = await transfer(source.id, { to_account_id: destination.id, amount });
      await ledger.waitForStatus(alice, sent.body.id, 'completed');
      ids.push(sent.body.id);
      const own = await ledger.deposit(bob, destination.id, amount);
      ids.push(own.body.id);
    }
    const newestFirst = [...ids].reverse();
    for (const path of ['/transactions', `/account/${destination.id}/transactions`]) {
      const seen: string[] = [];
      for (const offset of [0, 2, 4]) {
        const page = await ledger.call('GET', `${path}?limit=2&offset=${offset}`, { user: bob });
        expect(page.body.pagination).to.deep.equal({ limit: 2, offset, total: 6 });
        seen.push(...page.body.data.map((t: { id: string }) => t.id));
      }
      expect(seen, path).to.deep.equal(newestFirst);
    }
  });

  it('answers 400 for a malformed or missing to_account_id', async () => {
    const source = await funded(alice, 10);
    for (const body of [
      { to_account_id: 'not-a-uuid', amount: 1 },
      { amount: 1 },
      { to_account_id: 7, amount: 1 },
    ]) {
      const response = await transfer(source.id, body);
      expect(response.status).to.equal(400);
      expect(response.body.code).to.equal('VALIDATION_ERROR');
    }
  });

  it('answers 404 for an unknown destination and 422 for the source itself', async () => {
    const source = await funded(alice, 10);
    const unknown = await transfer(source.id, { to_account_id: randomUUID(), amount: 1 });
    expect(unknown.status).to.equal(404);
    expect(unknown.body.code).to.equal('RESOURCE_NOT_FOUND');
    const itself = await transfer(source.id, { to_account_id: source.id, amount: 1 });
    expect(itself.status).to.equal(422);
  });

  it('refuses more than available with INSUFFICIENT_FUNDS and another currency with INVALID_CURRENCY', async () => {
    const source = await funded(alice, 10);
    const destination = await ledger.openAccount(bob);
    const tooMuch = await transfer(source.id, { to_account_id: destination.id, amount: 10.01 });
    expect(tooMuch.status).to.equal(422);
    expect(tooMuch.body.code).to.equal('INSUFFICIENT_FUNDS');
    const wrongCurrency = await transfer(source.id, {
      to_account_id: destination.id,
      amount: 1,
      currency: 'EUR',
    });
    expect(wrongCurrency.status).to.equal(422);
    expect(wrongCurrency.body.code).to.equal('INVALID_CURRENCY');
    expect(await ledger.balanceOf(alice, source.id)).to.include({ balance: 10, available_balance: 10 });
  });

  it("refuses to move money out of another user's account", async () => {
    const source = await funded(alice, 10);
    const response = await transfer(
      source.id,
      { to_account_id: (await ledger.openAccount(bob)).id, amount: 1 },
      {
        user: bob,
      },
    );
    expect(response.status).to.equal(403);
  });

  it('converts across currencies at the quoted rate and shows rate and converted amount from v1.1', async () => {
    const source = await funded(alice, 100);
    const euros = await ledger.openAccount(bob, 'EUR');
    const response = await transfer(source.id, { to_account_id: euros.id, amount: 10 }, { version: '1.1' });
    expect(response.status).to.equal(202);
    expect(response.body).to.include({
      amount: 10,
      currency: 'USD',
      fee: 0,
      exchange_rate: 0.9,
      converted_amount: 9,
    });
    await ledger.waitForStatus(alice, response.body.id, 'completed');
    expect(await ledger.balanceOf(bob, euros.id)).to.include({ balance: 9, available_balance: 9 });
    expect(await ledger.balanceOf(alice, source.id)).to.include({ balance: 90 });
    const v10 = await ledger.call('GET', `/transaction/${response.body.id}`, { user: alice });
    expect(v10.body).to.not.have.any.keys('fee', 'exchange_rate', 'converted_amount');
  });

  it('rounds a conversion down to the target minor unit: the remainder stays with the FX account', async () => {
    const source = await funded(alice, 1);
    const yen = await ledger.openAccount(bob, 'JPY');
    // 0.01 USD × 150.25 = 1.5025 JPY → 1 JPY.
    const response = await transfer(source.id, { to_account_id: yen.id, amount: 0.01 }, { version: '1.1' });
    expect(response.body.converted_amount).to.equal(1);
    await ledger.waitForStatus(alice, response.body.id, 'completed');
    expect((await ledger.balanceOf(bob, yen.id)).balance).to.equal(1);
  });

  it('gains nothing from many small conversions there and back (20 × 0.01 USD to JPY and back)', async () => {
    const dollars = await funded(alice, 0.2);
    const yen = await ledger.openAccount(alice, 'JPY');
    for (let i = 0; i < 20; i += 1) {
      const out = await transfer(dollars.id, { to_account_id: yen.id, amount: 0.01 });
      expect(out.status, JSON.stringify(out.body)).to.equal(202);
      await ledger.waitForStatus(alice, out.body.id, 'completed');
    }
    // Half up credited 2 JPY a cent (40 JPY for 0.20 USD); rounded down it is 1 JPY a cent.
    expect((await ledger.balanceOf(alice, yen.id)).balance).to.equal(20);
    const back = await transfer(yen.id, { to_account_id: dollars.id, amount: 20, currency: 'JPY' });
    await ledger.waitForStatus(alice, back.body.id, 'completed');
    // 20 JPY × 0.0066 = 0.132 USD → 0.13.
    expect(await ledger.balanceOf(alice, dollars.id)).to.include({ balance: 0.13, available_balance: 0.13 });
    // A single yen converts to 0.0066 USD, which rounds to nothing: refused, nothing moves.
    const dust = await transfer(yen.id, { to_account_id: dollars.id, amount: 1, currency: 'JPY' });
    expect(dust.status).to.equal(422);
    expect(dust.body.code).to.equal('INVALID_AMOUNT');
  });

  it('answers 422 when there is no rate between the currencies', async () => {
    const dinars = await funded(alice, 5, 'KWD');
    const yen = await ledger.openAccount(bob, 'JPY');
    const response = await transfer(dinars.id, { to_account_id: yen.id, amount: 1, currency: 'KWD' });
    expect(response.status).to.equal(422);
    expect(response.body.code).to.equal('INVALID_CURRENCY');
    expect(await ledger.balanceOf(alice, dinars.id)).to.include({ available_balance: 5 });
  });

  it('ignores a provider confirmation for a transfer', async () => {
    const source = await funded(alice, 10);
    const destination = await ledger.openAccount(bob);
    const response = await transfer(source.id, { to_account_id: destination.id, amount: 4 });
    await ledger.confirm(response.body.id, 'failed');
    await ledger.waitForStatus(alice, response.body.id, 'completed');
    expect((await ledger.balanceOf(bob, destination.id)).balance).to.equal(4);
  });
});
