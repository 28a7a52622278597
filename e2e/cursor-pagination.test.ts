import { expect } from 'chai';
import { eventually, useSystem } from '@payments/testkit';
import { rawApi, signUp, type ApiResponse, type TestUser } from '@payments/test-support';

interface Holder extends TestUser {
  accountId: string;
}

interface Listed {
  data: { id: string }[];
  has_more: boolean;
  pagination: { limit: number; offset: number; total: number };
}

describe('cursor pagination of the lists that grow, through the gateway', function () {
  this.timeout(120_000);

  const system = useSystem({}, { admin: true });
  const api = rawApi(system);

  const newHolder = async (): Promise<Holder> => {
    const user = await signUp(system.gatewayUrl);
    const { id } = await user.client.accounts.open({ currency: 'USD' });
    return { ...user, accountId: id };
  };

  const deposit = async (holder: Holder) => {
    const accepted = await api.post(
      `/account/${holder.accountId}/deposit`,
      { amount: 1, currency: 'USD' },
      holder.token,
    );
    expect(accepted.status, accepted.text).to.equal(202);
    return accepted.body.id as string;
  };

  const list = async (holder: Holder, query: string): Promise<Listed> => {
    const response = await api.get(`/transactions?${query}`, holder.token);
    expect(response.status, response.text).to.equal(200);
    return response.body as Listed;
  };

  const expectBadCursor = (response: ApiResponse, field: string) => {
    expect(response.status, response.text).to.equal(400);
    expect(response.body.code).to.equal('VALIDATION_ERROR');
    expect((response.body.errors as { field: string }[]).map((e) => e.field)).to.include(field);
  };

  let alice: Holder;
  let bob: Holder;
  /** Alice's history history paging, newest first. */
  let history: string[];

  before(async () => {
    alice = await newHolder();
    bob = await newHolder();
    // A transfer she receives is in her history too (the second branch of the read).
    const funded = await bob.client.money.deposit(bob.accountId, { amount: 10, currency: 'USD' });
    await eventually(
      () => bob.client.transactions.get(funded.id),
      (t) => t.status === 'completed',
      { timeoutMs: 20_000 },
    );
    const transfer = await bob.client.money.transfer(bob.accountId, {
      amount: 1,
      currency: 'USD',
      to_account_id: alice.accountId,
    });
    await eventually(
      () => bob.client.transactions.get(transfer.id),
      (t) => t.status === 'completed',
      { timeoutMs: 20_000 },
    );
    for (let i = 0; i < 11; i += 1) await deposit(alice);
    history = (await list(alice, 'limit=100')).data.map((t) => t.id);
    expect(history).to.have.length(12);
    expect(history).to.include(transfer.id);
  });

  it('pages by starting_after while transactions arrive, skipping and repeating none', async () => {
    const seen: string[] = [];
    const arrived: string[] = [];
    let page = await list(alice, 'limit=5');
    for (;;) {
      seen.push(...page.data.map((t) => t.id));
      // New transactions between two pages: an offset would now read the last ones of this page again.
      arrived.push(await deposit(alice), await deposit(alice));
      if (!page.has_more) break;
      page = await list(alice, `limit=5&starting_after=${page.data.at(-1)?.id}`);
    }
    expect(seen).to.deep.equal(history);
    expect(seen.filter((id) => arrived.includes(id))).to.deep.equal([]);

    // Before the first item: exactly what arrived meanwhile, newest first, a page at a time.
    const newer = await list(alice, `limit=100&ending_before=${history[0]}`);
    expect(newer.has_more).to.equal(false);
    expect(newer.data.map((t) => t.id)).to.deep.equal([...arrived].reverse());
  });

  it('pages back by ending_before in the same order, and tells when more are before', async () => {
    const last = history.at(-1) as string;
    const page = await list(alice, `limit=4&ending_before=${last}`);
    expect(page.data.map((t) => t.id)).to.deep.equal(history.slice(-5, -1));
    expect(page.has_more).to.equal(true);
    const end = await list(alice, `limit=4&starting_after=${history.at(-2)}`);
    expect(end.data.map((t) => t.id)).to.deep.equal([last]);
    expect(end.has_more).to.equal(false);
  });

  it('keeps offset paging as it was, with has_more beside it', async () => {
    const page = await list(alice, 'limit=3&offset=2');
    expect(page.pagination).to.deep.include({ limit: 3, offset: 2 });
    expect(page.has_more).to.equal(true);
    expect(page.pagination.total).to.be.greaterThan(5);
  });

  it('pages one account’s history by cursor too, within that account only', async () => {
    const page = await api.get(
      `/account/${alice.accountId}/transactions?limit=2&starting_after=${history[0]}`,
      alice.token,
    );
    expect(page.status, page.text).to.equal(200);
    expect((page.body as Listed).data.map((t) => t.id)).to.deep.equal(history.slice(1, 3));
  });

  it('answers a cursor naming another user’s transaction as it answers one naming nothing', async () => {
    const bobs = (await list(bob, 'limit=100')).data.filter((t) => !history.includes(t.id));
    const foreign = bobs[0]?.id as string;
    expect(foreign).to.be.a('string');
    const theirs = await api.get(`/transactions?starting_after=${foreign}`, alice.token);
    const nothing = await api.get(
      `/transactions?starting_after=00000000-0000-4000-8000-000000000000`,
      alice.token,
    );
    expectBadCursor(theirs, 'starting_after');
    expectBadCursor(nothing, 'starting_after');
    expect(theirs.body.detail).to.equal(nothing.body.detail);
    expectBadCursor(
      await api.get(`/account/${alice.accountId}/transactions?ending_before=${foreign}`, alice.token),
      'ending_before',
    );
  });

  it('refuses both cursors at once, and a cursor with an offset', async () => {
    expectBadCursor(
      await api.get(`/transactions?starting_after=${history[1]}&ending_before=${history[0]}`, alice.token),
      'ending_before',
    );
    expectBadCursor(
      await api.get(`/transactions?offset=2&starting_after=${history[0]}`, alice.token),
      'offset',
    );
    expectBadCursor(await api.get(`/transactions?starting_after=not-an-id`, alice.token), 'starting_after');
  });

  it('pages the admins’ trail and users list by cursor', async () => {
    const admin = system.admin;
    const users = await api.get('/admin/users?limit=2', admin.token);
    expect(users.status, users.text).to.equal(200);
    const first = users.body as Listed;
    const next = await api.get(`/admin/users?limit=2&starting_after=${first.data[1]?.id}`, admin.token);
    expect(next.status, next.text).to.equal(200);
    const all = await api.get('/admin/users?limit=4', admin.token);
    expect((next.body as Listed).data.map((u) => u.id)).to.deep.equal(
      (all.body as Listed).data.slice(2, 4).map((u) => u.id),
    );
    const trail = await api.get('/admin/actions?limit=1', admin.token);
    expect(trail.status, trail.text).to.equal(200);
    expect(trail.body).to.have.property('has_more');
  });
});
