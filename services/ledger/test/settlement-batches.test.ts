import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import type { Knex } from '@payments/service-kit';
import { eventually } from '@payments/testkit';
import { useLedgerHarness, type TestUser } from './support/ledger-harness.js';

/** Confirmations that arrive together are settled together: one database transaction for many of them. */
describe('ledger settlement in batches over RabbitMQ', function () {
  this.timeout(60_000);
  let knex: Knex;

  const ledger = useLedgerHarness({ transport: 'amqp' });
  before(async () => {
    knex = ledger.db;
  });

  const pendingDeposits = async (user: TestUser, accountId: string, count: number) => {
    const ids: string[] = [];
    for (let i = 1; i <= count; i += 1) {
      const response = await ledger.deposit(user, accountId, i);
      expect(response.status).to.equal(202);
      ids.push(response.body.id);
    }
    return ids;
  };

  const statusesOf = async (ids: string[]) => {
    const rows: { id: string; status: string; amount: string }[] = await knex('transactions')
      .whereIn('id', ids)
      .select('id', 'status', 'amount');
    return rows;
  };

  it('credits each of hundreds of confirmations arriving at once exactly once, many per commit', async () => {
    const users = [ledger.newUser(), ledger.newUser(), ledger.newUser()];
    const accounts = await Promise.all(users.map((user) => ledger.openAccount(user)));
    const deposits = (
      await Promise.all(users.map((user, i) => pendingDeposits(user, (accounts[i] as { id: string }).id, 60)))
    ).flat();
    // Every confirmation twice under its own event id, and a contradicting failure for every fifth deposit.
    const contradicted = deposits.filter((_, i) => i % 5 === 0);
    const deliveries = [
      ...deposits.map((id) => ({ id, status: 'completed' as const, eventId: randomUUID() })),
      ...contradicted.map((id) => ({ id, status: 'failed' as const, eventId: randomUUID() })),
    ];
    await Promise.all(
      [...deliveries, ...deliveries].map(({ id, status, eventId }) =>
        ledger.confirm(id, status, {}, eventId),
      ),
    );

    const settled = await eventually(
      () => statusesOf(deposits),
      (rows) => rows.every((row) => row.status !== 'pending'),
      { timeoutMs: 30_000 },
    );
    expect(
      settled.every((row) => row.status !== 'pending'),
      'every deposit settled',
    ).to.equal(true);
    const completed = settled.filter((row) => row.status === 'completed');
    expect(completed.length).to.be.at.least(deposits.length - contradicted.length);

    // Each completed deposit booked once (two entries), each failed one not at all.
    const entries: { transaction_id: string; count: string }[] = await knex('entries')
      .whereIn('transaction_id', deposits)
      .groupBy('transaction_id')
      .select('transaction_id')
      .count('*');
    expect(entries).to.have.length(completed.length);
    expect(entries.every((row) => Number(row.count) === 2)).to.equal(true);

    for (const [i, user] of users.entries()) {
      const accountId = (accounts[i] as { id: string }).id;
      const credited: { sum: string | null }[] = await knex('transactions')
        .where({ account_id: accountId, status: 'completed' })
        .sum('amount');
      expect((await ledger.balanceOf(user, accountId)).balance * 100).to.equal(Number(credited[0]?.sum ?? 0));
    }

    // now() is the start of the database transaction: deposits settled together share their completed_at.
    const commits: { completed_at: Date; count: string }[] = await knex('transactions')
      .whereIn('id', deposits)
      .where('status', 'completed')
      .groupBy('completed_at')
      .select('completed_at')
      .count('*');
    expect(commits.length, 'database transactions').to.be.below(completed.length / 2);
    expect(await ledger.audit()).to.include({ ok: true });
  });

  it('fails only the confirmation that cannot be applied, and applies it once it can be', async () => {
    const alice = ledger.newUser();
    const bob = ledger.newUser();
    const source = await ledger.openAccount(alice);
    const target = await ledger.openAccount(bob);
    await ledger.fund(alice, source.id, 50);
    const withdrawal = await ledger.withdraw(alice, source.id, 20);
    expect(withdrawal.status).to.equal(202);
    // Tampered so that paying the withdrawal out would take the balance below zero: the CHECK refuses it.
    await knex('accounts').where({ id: source.id }).update({ balance: 1000, available_balance: 0 });
    const deposits = await pendingDeposits(bob, target.id, 20);

    await Promise.all([
      ledger.confirm(withdrawal.body.id, 'completed', { movement: 'payout' }),
      ...deposits.map((id) => ledger.confirm(id)),
    ]);
    const settled = await eventually(
      () => statusesOf(deposits),
      (rows) => rows.every((row) => row.status === 'completed'),
      { timeoutMs: 20_000 },
    );
    expect(settled.map((row) => row.status)).to.deep.equal(deposits.map(() => 'completed'));
    expect((await statusesOf([withdrawal.body.id]))[0]?.status).to.equal('pending');

    // Put the balance back: the redelivered payout now goes through.
    await knex('accounts').where({ id: source.id }).update({ balance: 5000, available_balance: 3000 });
    await ledger.waitForStatus(alice, withdrawal.body.id, 'completed', 20_000);
    expect(await ledger.balanceOf(alice, source.id)).to.include({ balance: 30, available_balance: 30 });
    expect(await ledger.audit()).to.include({ ok: true });
  });
});
