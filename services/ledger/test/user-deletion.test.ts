import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { createEvent } from '@payments/contracts';
import { eventually } from '@payments/testkit';
import { startLedgerHarness, type LedgerHarness, type TestUser } from './support/ledger-harness.js';

describe('ledger user holdings and deletion', () => {
  let ledger: LedgerHarness;

  before(async () => {
    ledger = await startLedgerHarness();
  });
  after(() => ledger?.stop());
  afterEach(async () => {
    expect(await ledger.audit()).to.include({ ok: true });
  });

  const holdings = (userId: string) => ledger.call('GET', `/internal/users/${userId}/holdings`);
  const deleteUser = (user: TestUser) =>
    ledger.bus.publish(
      createEvent('UserDeleted', { user_id: user.id }, { id: randomUUID(), correlationId: 'test' }),
    );
  const accountGone = (user: TestUser, accountId: string) =>
    eventually(
      () => ledger.call('GET', `/account/${accountId}`, { user }),
      (r) => r.status === 404,
    );

  it('reports money and pending transactions for the deletion check', async () => {
    const alice = ledger.newUser();
    expect((await holdings(alice.id)).body).to.deep.equal({
      balance_total_nonzero: false,
      pending_transactions: 0,
    });
    const account = await ledger.openAccount(alice);
    await ledger.fund(alice, account.id, 5);
    await ledger.deposit(alice, account.id, 1);
    expect((await holdings(alice.id)).body).to.deep.equal({
      balance_total_nonzero: true,
      pending_transactions: 1,
    });
    expect((await holdings('not-a-uuid')).status).to.equal(404);
  });

  it("removes the user's accounts and transactions, keeping the other side of shared transfers", async () => {
    const alice = ledger.newUser();
    const bob = ledger.newUser();
    const aliceAccount = await ledger.openAccount(alice);
    const bobAccount = await ledger.openAccount(bob);
    await ledger.fund(alice, aliceAccount.id, 30);
    await ledger.fund(bob, bobAccount.id, 30);
    const toBob = await ledger.call('POST', `/account/${aliceAccount.id}/transfer`, {
      user: alice,
      body: { to_account_id: bobAccount.id, amount: 10, currency: 'USD' },
    });
    const toAlice = await ledger.call('POST', `/account/${bobAccount.id}/transfer`, {
      user: bob,
      body: { to_account_id: aliceAccount.id, amount: 4, currency: 'USD' },
    });
    await ledger.waitForStatus(alice, toBob.body.id, 'completed');
    await ledger.waitForStatus(bob, toAlice.body.id, 'completed');
    const payout = await ledger.call('POST', `/account/${aliceAccount.id}/withdraw`, {
      user: alice,
      body: { amount: 24, currency: 'USD' },
    });
    await ledger.confirm(payout.body.id, 'completed', { movement: 'payout' });
    await ledger.waitForStatus(alice, payout.body.id, 'completed');
    const bobBefore = await ledger.call('GET', '/transactions', { user: bob });

    await deleteUser(alice);
    await accountGone(alice, aliceAccount.id);
    expect((await ledger.call('GET', `/transaction/${payout.body.id}`, { user: alice })).status).to.equal(
      404,
    );
    expect((await ledger.call('GET', '/transactions', { user: alice })).body.pagination.total).to.equal(0);
    expect((await ledger.call('GET', '/accounts', { user: alice })).body.pagination.total).to.equal(0);

    const bobAfter = await ledger.call('GET', '/transactions', { user: bob });
    expect(bobAfter.body).to.deep.equal(bobBefore.body);
    expect(await ledger.balanceOf(bob, bobAccount.id)).to.include({ balance: 36, available_balance: 36 });
  });

  it('is idempotent: a second UserDeleted changes nothing', async () => {
    const alice = ledger.newUser();
    const account = await ledger.openAccount(alice);
    await deleteUser(alice);
    await accountGone(alice, account.id);
    await deleteUser(alice);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(await ledger.bus.listDeadLetters('ledger')).to.have.length(0);
  });

  it('cancels pending holds and moves any money left to unclaimed funds, never losing it', async () => {
    const carol = ledger.newUser();
    const account = await ledger.openAccount(carol);
    await ledger.fund(carol, account.id, 10);
    const pending = await ledger.call('POST', `/account/${account.id}/withdraw`, {
      user: carol,
      body: { amount: 3, currency: 'USD' },
    });
    const unclaimed = async () => {
      const audit = await ledger.audit();
      const rows = audit.system_balances as { code: string; currency: string; balance: string }[];
      return Number(rows.find((r) => r.code === 'unclaimed_funds' && r.currency === 'USD')?.balance ?? 0);
    };
    const before = await unclaimed();
    await deleteUser(carol);
    await accountGone(carol, account.id);
    expect((await unclaimed()) - before).to.equal(1000);
    await ledger.confirm(pending.body.id, 'completed', { movement: 'payout' });
    expect((await holdings(carol.id)).body).to.deep.equal({
      balance_total_nonzero: false,
      pending_transactions: 0,
    });
  });
});
