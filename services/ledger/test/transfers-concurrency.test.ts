import { expect } from 'chai';
import { eventually } from '@payments/testkit';
import { useLedgerHarness, type ApiResponse, type TestUser } from './support/ledger-harness.js';

describe('concurrent transfers with two ledger processes over RabbitMQ', function () {
  this.timeout(180_000);
  const owners: TestUser[] = [];
  const accounts: { id: string; owner: TestUser }[] = [];

  const ledger = useLedgerHarness({ transport: 'amqp', instances: 2 });
  before(async () => {
    for (let i = 0; i < 5; i += 1) owners.push(ledger.newUser());
    for (const owner of owners) {
      for (let i = 0; i < 2; i += 1) {
        const account = await ledger.openAccount(owner);
        await ledger.fund(owner, account.id, 1000);
        accounts.push({ id: account.id, owner });
      }
    }
  });

  const totalBalance = async () => {
    const balances = await Promise.all(accounts.map((a) => ledger.balanceOf(a.owner, a.id)));
    return { balances, total: balances.reduce((sum, b) => sum + Math.round(b.balance * 100), 0) };
  };

  it('settles 1,000 random transfers (both directions at once) exactly once, conserving the total', async () => {
    let seed = 42;
    const random = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed % n;
    };
    const requests: Promise<ApiResponse>[] = [];
    for (let i = 0; i < 1000; i += 1) {
      const from = accounts[random(accounts.length)] as (typeof accounts)[number];
      let to = accounts[random(accounts.length)] as (typeof accounts)[number];
      if (to.id === from.id)
        to = accounts[(accounts.indexOf(from) + 1) % accounts.length] as (typeof accounts)[number];
      requests.push(
        ledger.call('POST', `/account/${from.id}/transfer`, {
          user: from.owner,
          body: { to_account_id: to.id, amount: 1 + random(20), currency: 'USD' },
          base: ledger.urls[i % 2],
        }),
      );
    }
    const responses = await Promise.all(requests);
    const statuses = new Map<number, number>();
    for (const r of responses) statuses.set(r.status, (statuses.get(r.status) ?? 0) + 1);
    // No deadlock or other failure reaches a client: every answer is an acceptance or a refusal for funds.
    expect([...statuses.keys()].filter((status) => status !== 202 && status !== 422)).to.deep.equal([]);
    const refused = responses.filter((r) => r.status === 422);
    expect(refused.every((r) => r.body.code === 'INSUFFICIENT_FUNDS')).to.equal(true);
    const accepted = responses.filter((r) => r.status === 202);
    expect(accepted.length).to.be.greaterThan(500);

    const pendingTotal = async () => {
      const pages = await Promise.all(
        owners.map((owner) => ledger.call('GET', '/transactions?status=pending&limit=1', { user: owner })),
      );
      return pages.reduce((sum, page) => sum + page.body.pagination.total, 0);
    };
    expect(await eventually(pendingTotal, (n) => n === 0, { timeoutMs: 60_000, intervalMs: 250 })).to.equal(
      0,
    );

    const completed = await Promise.all(
      owners.map((owner) =>
        ledger.call('GET', '/transactions?type=transfer&status=completed&limit=1', { user: owner }),
      ),
    );
    // Each owner's history counts transfers they sent plus the ones they received from others.
    const received = accepted.filter((r) => {
      const source = accounts.find((a) => a.id === r.body.account_id);
      const target = accounts.find((a) => a.id === r.body.counterparty_account_id);
      return source?.owner !== target?.owner;
    }).length;
    expect(completed.reduce((sum, page) => sum + page.body.pagination.total, 0)).to.equal(
      accepted.length + received,
    );

    const { balances, total } = await totalBalance();
    expect(total).to.equal(1000 * 100 * accounts.length);
    for (const balance of balances) {
      expect(balance.balance).to.be.at.least(0);
      expect(balance.available_balance).to.equal(balance.balance);
    }
    expect(await ledger.audit()).to.include({ ok: true });
  });
});
