import { expect } from 'chai';
import type { EventEnvelope } from '@payments/contracts';
import type { Consumer } from '@payments/service-kit';
import { eventually } from '@payments/testkit';
import { useLedgerHarness, type TestUser } from './support/ledger-harness.js';

describe('ledger withdrawals', () => {
  let alice: TestUser;
  let sandbox: Consumer;
  const requested: EventEnvelope<'WithdrawalRequested'>[] = [];

  const ledger = useLedgerHarness({}, { booksBalance: true, beforeStop: () => sandbox?.stop() });
  before(async () => {
    sandbox = await ledger.recordProviderRequests('WithdrawalRequested', requested);
  });
  beforeEach(() => {
    alice = ledger.newUser();
  });

  const withdraw = (accountId: string, amount: number | string, user = alice, currency = 'USD') =>
    ledger.call('POST', `/account/${accountId}/withdraw`, { user, body: { amount, currency } });

  const fundedAccount = async (amount: number) => {
    const account = await ledger.openAccount(alice);
    await ledger.fund(alice, account.id, amount);
    return account;
  };

  it('holds the funds at acceptance and publishes WithdrawalRequested', async () => {
    const account = await fundedAccount(100);
    const response = await withdraw(account.id, 30);
    expect(response.status).to.equal(202);
    expect(response.headers.get('location')).to.equal(`/transaction/${response.body.id}`);
    expect(response.body).to.include({
      type: 'withdrawal',
      status: 'pending',
      amount: 30,
      payment_id: response.body.id,
    });
    expect(await ledger.balanceOf(alice, account.id)).to.include({ balance: 100, available_balance: 70 });
    const seen = await eventually(
      async () => requested.find((event) => event.data.transaction_id === response.body.id),
      (event) => event !== undefined,
    );
    expect(seen?.data).to.include({ amount: 3000, currency: 'USD', account_id: account.id });
  });

  it('debits the balance and releases the hold when the payout completes', async () => {
    const account = await fundedAccount(100);
    const response = await withdraw(account.id, 30);
    await ledger.confirm(response.body.id, 'completed', {
      movement: 'payout',
      amount: 3000,
      currency: 'USD',
    });
    await ledger.waitForStatus(alice, response.body.id, 'completed');
    expect(await ledger.balanceOf(alice, account.id)).to.include({ balance: 70, available_balance: 70 });
  });

  it('releases the hold and keeps the balance when the payout fails', async () => {
    const account = await fundedAccount(100);
    const response = await withdraw(account.id, 30);
    await ledger.confirm(response.body.id, 'failed', { movement: 'payout', failure_reason: 'bank rejected' });
    const failed = await ledger.waitForStatus(alice, response.body.id, 'failed');
    expect(failed.body.failure_reason).to.equal('bank rejected');
    expect(await ledger.balanceOf(alice, account.id)).to.include({ balance: 100, available_balance: 100 });
  });

  it('ignores a payment (not payout) confirmation for a withdrawal', async () => {
    const account = await fundedAccount(50);
    const response = await withdraw(account.id, 10);
    await ledger.confirm(response.body.id, 'completed', { movement: 'payment' });
    await new Promise((resolve) => setTimeout(resolve, 300));
    const untouched = await ledger.call('GET', `/transaction/${response.body.id}`, { user: alice });
    expect(untouched.body.status).to.equal('pending');
    await ledger.confirm(response.body.id, 'completed', { movement: 'payout' });
    await ledger.waitForStatus(alice, response.body.id, 'completed');
    expect(await ledger.balanceOf(alice, account.id)).to.include({ balance: 40, available_balance: 40 });
  });

  it('refuses more than available with 422 INSUFFICIENT_FUNDS and records nothing', async () => {
    const account = await fundedAccount(20);
    const held = await withdraw(account.id, 15);
    expect(held.status).to.equal(202);
    const response = await withdraw(account.id, 10);
    expect(response.status).to.equal(422);
    expect(response.body.code).to.equal('INSUFFICIENT_FUNDS');
    expect(await ledger.balanceOf(alice, account.id)).to.include({ balance: 20, available_balance: 5 });
    const history = await ledger.call('GET', `/account/${account.id}/transactions?type=withdrawal`, {
      user: alice,
    });
    expect(history.body.pagination.total).to.equal(1);
  });

  it('refuses a withdrawal from an empty account', async () => {
    const account = await ledger.openAccount(alice);
    const response = await withdraw(account.id, 0.01);
    expect(response.status).to.equal(422);
    expect(response.body.code).to.equal('INSUFFICIENT_FUNDS');
  });

  it('validates like a deposit: amount, currency, owner', async () => {
    const account = await fundedAccount(10);
    expect((await withdraw(account.id, -1)).body.code).to.equal('INVALID_AMOUNT');
    expect((await withdraw(account.id, 1, alice, 'JPY')).body.code).to.equal('INVALID_CURRENCY');
    expect((await withdraw(account.id, 1, ledger.newUser())).status).to.equal(403);
    const missing = await ledger.call('POST', `/account/${account.id}/withdraw`, {
      user: alice,
      body: { amount: 1 },
    });
    expect(missing.status).to.equal(400);
  });

  it('accepts exactly 10 of 200 concurrent withdrawals of 10 against 100, ending at 0 once paid out', async () => {
    const account = await fundedAccount(100);
    const responses = await Promise.all(Array.from({ length: 200 }, () => withdraw(account.id, 10)));
    const accepted = responses.filter((r) => r.status === 202);
    const refused = responses.filter((r) => r.status === 422);
    expect(accepted).to.have.length(10);
    expect(refused).to.have.length(190);
    expect(refused.every((r) => r.body.code === 'INSUFFICIENT_FUNDS')).to.equal(true);
    expect(await ledger.balanceOf(alice, account.id)).to.include({ balance: 100, available_balance: 0 });
    await Promise.all(accepted.map((r) => ledger.confirm(r.body.id, 'completed', { movement: 'payout' })));
    for (const r of accepted) await ledger.waitForStatus(alice, r.body.id, 'completed');
    expect(await ledger.balanceOf(alice, account.id)).to.include({ balance: 0, available_balance: 0 });
  });
});
