import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { useLedgerHarness, type TestUser } from './support/ledger-harness.js';

const day = (offsetDays: number) => new Date(Date.now() + offsetDays * 86_400_000).toISOString().slice(0, 10);

describe('ledger transaction history', () => {
  let alice: TestUser;
  let usd: { id: string };
  let eur: { id: string };
  const ids: Record<string, string> = {};

  const ledger = useLedgerHarness({}, { booksBalance: true });
  before(async () => {
    alice = ledger.newUser();
    usd = await ledger.openAccount(alice, 'USD');
    eur = await ledger.openAccount(alice, 'EUR');
    await ledger.fund(alice, usd.id, 100);
    await ledger.fund(alice, eur.id, 50, 'EUR');
    ids.pendingDeposit = (await ledger.deposit(alice, usd.id, 5)).body.id;
    const failed = await ledger.deposit(alice, usd.id, 6);
    await ledger.confirm(failed.body.id, 'failed');
    await ledger.waitForStatus(alice, failed.body.id, 'failed');
    ids.failedDeposit = failed.body.id;
    ids.withdrawal = (await ledger.withdraw(alice, usd.id, 10)).body.id;
  });

  const list = (query: string, path = '/transactions', user = alice) =>
    ledger.call('GET', `${path}?${query}`, { user });

  it("lists the caller's transactions newest first with pagination", async () => {
    const all = await list('');
    expect(all.status).to.equal(200);
    expect(all.body.pagination).to.deep.equal({ limit: 20, offset: 0, total: 5 });
    const created = all.body.data.map((t: { created_at: string }) => t.created_at);
    expect(created).to.deep.equal([...created].sort().reverse());
    expect(all.body.data[0].id).to.equal(ids.withdrawal);
    const page = await list('limit=2&offset=1');
    expect(page.body.data.map((t: { id: string }) => t.id)).to.deep.equal(
      all.body.data.slice(1, 3).map((t: { id: string }) => t.id),
    );
    expect(page.body.pagination).to.deep.equal({ limit: 2, offset: 1, total: 5 });
  });

  it('filters by type, status and account', async () => {
    expect((await list('type=withdrawal')).body.data.map((t: { id: string }) => t.id)).to.deep.equal([
      ids.withdrawal,
    ]);
    expect((await list('status=failed')).body.data.map((t: { id: string }) => t.id)).to.deep.equal([
      ids.failedDeposit,
    ]);
    expect(
      (await list('type=deposit&status=pending')).body.data.map((t: { id: string }) => t.id),
    ).to.deep.equal([ids.pendingDeposit]);
    expect((await list(`account_id=${eur.id}`)).body.pagination.total).to.equal(1);
    expect((await list(`account_id=${usd.id}&type=deposit`)).body.pagination.total).to.equal(3);
  });

  it('filters by inclusive UTC dates', async () => {
    expect((await list(`from=${day(0)}&to=${day(0)}`)).body.pagination.total).to.equal(5);
    expect((await list(`to=${day(-1)}`)).body.pagination.total).to.equal(0);
    expect((await list(`from=${day(1)}`)).body.pagination.total).to.equal(0);
    expect((await list(`from=${day(-3)}`)).body.pagination.total).to.equal(5);
  });

  it('serves one account history at /account/{id}/transactions with the same filters', async () => {
    const response = await list('type=deposit&status=completed', `/account/${usd.id}/transactions`);
    expect(response.status).to.equal(200);
    expect(response.body.pagination.total).to.equal(1);
    expect(response.body.data[0]).to.include({ account_id: usd.id, type: 'deposit', status: 'completed' });
    expect((await list('', `/account/${eur.id}/transactions`)).body.pagination.total).to.equal(1);
  });

  it('answers 400 for invalid filters and pages', async () => {
    for (const query of [
      'from=2024-02-30',
      'from=2024-1-1',
      'to=yesterday',
      `from=${day(0)}&to=${day(-1)}`,
      'type=refund',
      'status=done',
      'limit=0',
      'limit=500',
      'offset=-2',
      'account_id=not-a-uuid',
    ]) {
      for (const path of ['/transactions', `/account/${usd.id}/transactions`]) {
        if (path !== '/transactions' && query.startsWith('account_id')) continue;
        const response = await list(query, path);
        expect(response.status, `${path}?${query}`).to.equal(400);
        expect(response.body.code).to.equal('VALIDATION_ERROR');
      }
    }
  });

  it("refuses another user's account: 403, unknown 404", async () => {
    const mallory = ledger.newUser();
    expect((await list(`account_id=${usd.id}`, '/transactions', mallory)).status).to.equal(403);
    expect((await list('', `/account/${usd.id}/transactions`, mallory)).status).to.equal(403);
    expect((await list(`account_id=${randomUUID()}`)).status).to.equal(404);
    expect((await list('', `/account/${randomUUID()}/transactions`)).status).to.equal(404);
    expect((await list('', '/transactions', mallory)).body.pagination.total).to.equal(0);
  });

  it('lets an admin read any account history', async () => {
    const admin = ledger.newUser('admin');
    expect((await list('', `/account/${usd.id}/transactions`, admin)).body.pagination.total).to.equal(4);
  });

  it('shows a transaction to its owner, 403 to others, 404 when unknown or malformed', async () => {
    expect((await ledger.call('GET', `/transaction/${ids.withdrawal}`, { user: alice })).status).to.equal(
      200,
    );
    expect(
      (await ledger.call('GET', `/transaction/${ids.withdrawal}`, { user: ledger.newUser() })).status,
    ).to.equal(403);
    expect(
      (await ledger.call('GET', `/transaction/${ids.withdrawal}`, { user: ledger.newUser('admin') })).status,
    ).to.equal(200);
    for (const id of [randomUUID(), 'nope']) {
      expect((await ledger.call('GET', `/transaction/${id}`, { user: alice })).status).to.equal(404);
    }
  });
});
