import { expect } from 'chai';
import { startLedgerHarness, type LedgerHarness, type TestUser } from './support/ledger-harness.js';

describe('ledger pending-hold expiry', () => {
  let ledger: LedgerHarness;
  let alice: TestUser;

  before(async () => {
    ledger = await startLedgerHarness({ env: { HOLD_EXPIRY_SECONDS: '1', HOLD_SWEEP_INTERVAL_MS: '100' } });
    alice = ledger.newUser();
  });
  after(() => ledger?.stop());
  afterEach(async () => {
    expect(await ledger.audit()).to.include({ ok: true });
  });

  it('cancels a withdrawal nobody confirmed in time and gives the hold back', async () => {
    const account = await ledger.openAccount(alice);
    await ledger.fund(alice, account.id, 50);
    const response = await ledger.call('POST', `/account/${account.id}/withdraw`, {
      user: alice,
      body: { amount: 20, currency: 'USD' },
    });
    expect(await ledger.balanceOf(alice, account.id)).to.include({ available_balance: 30 });
    const canceled = await ledger.waitForStatus(alice, response.body.id, 'canceled', 5000);
    expect(canceled.body.failure_reason).to.match(/expired/);
    expect(await ledger.balanceOf(alice, account.id)).to.include({ balance: 50, available_balance: 50 });
  });

  it('ignores a payout confirmation that arrives after the hold expired', async () => {
    const account = await ledger.openAccount(alice);
    await ledger.fund(alice, account.id, 10);
    const response = await ledger.call('POST', `/account/${account.id}/withdraw`, {
      user: alice,
      body: { amount: 10, currency: 'USD' },
    });
    await ledger.waitForStatus(alice, response.body.id, 'canceled', 5000);
    await ledger.confirm(response.body.id, 'completed', { movement: 'payout' });
    await new Promise((resolve) => setTimeout(resolve, 300));
    const shown = await ledger.call('GET', `/transaction/${response.body.id}`, { user: alice });
    expect(shown.body.status).to.equal('canceled');
    expect(await ledger.balanceOf(alice, account.id)).to.include({ balance: 10, available_balance: 10 });
  });

  it('leaves a pending deposit alone: it holds nothing', async () => {
    const account = await ledger.openAccount(alice);
    const deposit = await ledger.deposit(alice, account.id, 5);
    await new Promise((resolve) => setTimeout(resolve, 1500));
    const shown = await ledger.call('GET', `/transaction/${deposit.body.id}`, { user: alice });
    expect(shown.body.status).to.equal('pending');
  });
});
