import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { createEvent } from '@payments/contracts';
import { useLedgerHarness, type TestUser } from './support/ledger-harness.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('ledger user removal', () => {
  const ledger = useLedgerHarness({}, { booksBalance: true });

  const remove = (user: TestUser) => ledger.call('POST', `/internal/users/${user.id}/removal`);
  const publishUserDeleted = (user: TestUser) =>
    ledger.bus.publish(
      createEvent('UserDeleted', { user_id: user.id }, { id: randomUUID(), correlationId: 'test' }),
    );
  const unclaimed = async () => {
    const audit = await ledger.audit();
    const rows = audit.system_balances as { code: string; balance: string }[];
    return rows.filter((r) => r.code === 'unclaimed_funds').reduce((sum, r) => sum + BigInt(r.balance), 0n);
  };

  it('removes a user with no money and nothing pending: their accounts and transactions, keeping the other side of shared transfers', async () => {
    const alice = ledger.newUser();
    const bob = ledger.newUser();
    const aliceAccount = await ledger.openAccount(alice);
    const bobAccount = await ledger.openAccount(bob);
    await ledger.fund(alice, aliceAccount.id, 30);
    await ledger.fund(bob, bobAccount.id, 30);
    const toBob = await ledger.transfer(alice, aliceAccount.id, bobAccount.id, 10);
    const toAlice = await ledger.transfer(bob, bobAccount.id, aliceAccount.id, 4);
    await ledger.waitForStatus(alice, toBob.body.id, 'completed');
    await ledger.waitForStatus(bob, toAlice.body.id, 'completed');
    const payout = await ledger.withdraw(alice, aliceAccount.id, 24);
    await ledger.confirm(payout.body.id, 'completed', { movement: 'payout' });
    await ledger.waitForStatus(alice, payout.body.id, 'completed');
    const bobBefore = await ledger.call('GET', '/transactions', { user: bob });

    const removed = await remove(alice);
    expect(removed.status).to.equal(200);
    expect(removed.body).to.deep.equal({ user_id: alice.id, accounts: 1, transactions: 2 });
    expect((await ledger.call('GET', `/account/${aliceAccount.id}`, { user: alice })).status).to.equal(404);
    expect((await ledger.call('GET', `/transaction/${payout.body.id}`, { user: alice })).status).to.equal(
      404,
    );
    expect((await ledger.call('GET', '/transactions', { user: alice })).body.pagination.total).to.equal(0);
    expect((await ledger.call('GET', '/accounts', { user: alice })).body.pagination.total).to.equal(0);
    const bobAfter = await ledger.call('GET', '/transactions', { user: bob });
    expect(bobAfter.body).to.deep.equal(bobBefore.body);
    expect(await ledger.balanceOf(bob, bobAccount.id)).to.include({ balance: 36, available_balance: 36 });
  });

  it('refuses (422) while the user holds money, has a transaction pending or a transfer on its way in, and changes nothing', async () => {
    const carol = ledger.newUser();
    const dave = ledger.newUser();
    const account = await ledger.openAccount(carol);
    const daveAccount = await ledger.openAccount(dave);
    await ledger.fund(carol, account.id, 10);
    const withdrawal = await ledger.withdraw(carol, account.id, 10);
    const holding = await remove(carol);
    expect(holding.status).to.equal(422);
    expect(holding.body.code).to.equal('BUSINESS_RULE_VIOLATION');
    expect(holding.body.detail)
      .to.match(/non-zero balance/)
      .and.to.match(/1 pending transaction/);
    await ledger.confirm(withdrawal.body.id, 'completed', { movement: 'payout' });
    await ledger.waitForStatus(carol, withdrawal.body.id, 'completed');

    const deposit = await ledger.deposit(carol, account.id, 3);
    expect((await remove(carol)).body.detail)
      .to.match(/1 pending transaction/)
      .and.not.to.match(/balance/);
    await ledger.confirm(deposit.body.id, 'failed');
    await ledger.waitForStatus(carol, deposit.body.id, 'failed');

    // A transfer to carol accepted but not yet settled: its TransferRequested is held back from the ledger.
    await ledger.fund(dave, daveAccount.id, 2);
    await ledger.db('transactions').insert({
      id: randomUUID(),
      account_id: daveAccount.id,
      user_id: dave.id,
      type: 'transfer',
      amount: 100,
      currency: 'USD',
      counterparty_account_id: account.id,
      counterparty_user_id: carol.id,
    });
    await ledger.db('accounts').where({ id: daveAccount.id }).decrement('available_balance', 100);
    expect((await remove(carol)).body.detail).to.match(/1 incoming transfer/);
    expect((await ledger.call('GET', `/account/${account.id}`, { user: carol })).status).to.equal(200);
    await ledger.db('transactions').where({ account_id: daveAccount.id, status: 'pending' }).delete();
    await ledger.db('accounts').where({ id: daveAccount.id }).increment('available_balance', 100);

    expect((await remove(carol)).status).to.equal(200);
  });

  it('is idempotent, and no account can be opened for a removed user', async () => {
    const erin = ledger.newUser();
    await ledger.openAccount(erin);
    expect((await remove(erin)).body).to.include({ accounts: 1 });
    expect((await remove(erin)).body).to.deep.equal({ user_id: erin.id, accounts: 0, transactions: 0 });
    const reopened = await ledger.call('POST', '/account', { user: erin, body: { currency: 'USD' } });
    expect(reopened.status).to.equal(401);
    expect((await ledger.call('GET', '/accounts', { user: erin })).body.pagination.total).to.equal(0);
    expect((await ledger.call('POST', '/internal/users/not-a-uuid/removal')).status).to.equal(404);
  });

  it('finds nothing to do on UserDeleted after the removal', async () => {
    const frank = ledger.newUser();
    await ledger.openAccount(frank);
    expect((await remove(frank)).status).to.equal(200);
    await publishUserDeleted(frank);
    await publishUserDeleted(frank);
    await sleep(200);
    expect(await ledger.bus.listDeadLetters('ledger')).to.have.length(0);
  });

  it('never cancels a withdrawal nor moves money to unclaimed funds on a UserDeleted it was not asked to decide', async () => {
    const grace = ledger.newUser();
    const account = await ledger.openAccount(grace);
    await ledger.fund(grace, account.id, 10);
    const pending = await ledger.withdraw(grace, account.id, 3);
    const unclaimedBefore = await unclaimed();
    await publishUserDeleted(grace);
    await sleep(300);
    expect(await ledger.balanceOf(grace, account.id)).to.include({ balance: 10, available_balance: 7 });
    expect(await unclaimed()).to.equal(unclaimedBefore);
    // The provider's payout still settles it.
    await ledger.confirm(pending.body.id, 'completed', { movement: 'payout' });
    await ledger.waitForStatus(grace, pending.body.id, 'completed');
    expect(await ledger.balanceOf(grace, account.id)).to.include({ balance: 7, available_balance: 7 });
  });

  it('decides atomically against deposits and incoming transfers racing it: removed with nothing landing, or refused with every cent kept', async () => {
    const sender = ledger.newUser();
    const senderAccount = await ledger.openAccount(sender);
    await ledger.fund(sender, senderAccount.id, 1000);
    for (let round = 0; round < 12; round += 1) {
      const leaver = ledger.newUser();
      const account = await ledger.openAccount(leaver);
      const senderBefore = (await ledger.balanceOf(sender, senderAccount.id)).balance;
      const unclaimedBefore = await unclaimed();
      // Spread over the same few milliseconds as the removal, so some land before it and some after.
      const jitter = () => sleep(Math.floor(Math.random() * (round % 2 === 0 ? 30 : 10)));
      const deposits = Array.from({ length: 5 }, async () => {
        await jitter();
        const accepted = await ledger.deposit(leaver, account.id, 1);
        if (accepted.status === 202) await ledger.confirm(accepted.body.id);
        return accepted;
      });
      const transfers = Array.from({ length: 5 }, async () => {
        await jitter();
        return ledger.transfer(sender, senderAccount.id, account.id, 2);
      });
      const removal = sleep(round % 3).then(() => remove(leaver));
      const [answers, removed] = await Promise.all([Promise.all([...deposits, ...transfers]), removal]);
      const accepted = answers.filter((a) => a.status === 202);
      for (const answer of answers) expect([202, 404], JSON.stringify(answer.body)).to.include(answer.status);
      if (removed.status === 200) {
        // Everything accepted before the removal would have stood in its way: nothing was.
        expect(accepted).to.have.length(0);
        expect((await ledger.balanceOf(sender, senderAccount.id)).balance).to.equal(senderBefore);
      } else {
        expect(removed.status).to.equal(422);
        const expected = accepted.reduce((sum, a) => sum + (a.body.type === 'deposit' ? 1 : 2), 0);
        for (const answer of accepted) {
          const owner = answer.body.type === 'deposit' ? leaver : sender;
          await ledger.waitForStatus(owner, answer.body.id, 'completed');
        }
        expect(await ledger.balanceOf(leaver, account.id)).to.include({ balance: expected });
      }
      expect(await unclaimed()).to.equal(unclaimedBefore);
      expect(await ledger.audit()).to.include({ ok: true });
    }
  });
});
