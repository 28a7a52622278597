import { expect } from 'chai';
import { PASSWORD, startIdentityHarnessWithAdmin, type IdentityHarness } from './identity-harness.js';

interface UserPage {
  data: { id: string; username: string; email: string; status: string }[];
  pagination: { limit: number; offset: number; total: number };
}

describe('identity: GET /admin/users, how an admin finds users', function () {
  this.timeout(60_000);
  let identity: IdentityHarness;
  let adminToken: string;
  const ids: Record<string, string> = {};

  before(async () => {
    ({ identity, adminToken } = await startIdentityHarnessWithAdmin('search-admin'));
    for (const name of ['Olga_Smith', 'olgaxsmith', 'oleg', 'Peter']) {
      ids[name] = (await identity.register(name)).id;
    }
    const mixedCase = await identity.request<{ id: string }>('POST', '/user', {
      body: { username: 'quinn', email: 'Quinn.Mail@Example.COM', password: PASSWORD },
    });
    ids.quinn = mixedCase.body.id;
  });
  after(async () => {
    await identity?.stop();
  });

  const find = async (query: string, token = adminToken) =>
    identity.request<UserPage & { code?: string }>('GET', `/admin/users${query}`, { token });
  const names = (page: UserPage) => page.data.map((user) => user.username);

  it('finds a user by exact username in any case, and by exact e-mail in any case', async () => {
    const byName = await find('?username=OLEG');
    expect(byName.status).to.equal(200);
    expect(byName.body.data).to.have.length(1);
    expect(byName.body.data[0]).to.include({ id: ids.oleg, username: 'oleg', email: 'oleg@example.com' });
    expect(byName.body.data[0]).not.to.have.any.keys('password', 'password_hash');
    expect(byName.headers.get('cache-control')).to.equal('no-store');
    const byEmail = await find(`?email=${encodeURIComponent('QUINN.mail@example.com')}`);
    expect(names(byEmail.body)).to.deep.equal(['quinn']);
    expect(names((await find('?username=ole')).body)).to.deep.equal([]);
  });

  it('finds users whose username or e-mail starts with q, in any case, ordered by username', async () => {
    const olg = await find('?q=OLG');
    expect(names(olg.body)).to.deep.equal(['Olga_Smith', 'olgaxsmith']);
    expect(olg.body.pagination).to.deep.equal({ limit: 20, offset: 0, total: 2 });
    expect(names((await find('?q=quinn.m')).body)).to.deep.equal(['quinn']);
    expect(names((await find('?q=smith')).body)).to.deep.equal([]);
  });

  it('takes % and _ in q as the characters they are, not as wildcards', async () => {
    expect(names((await find('?q=olga_')).body)).to.deep.equal(['Olga_Smith']);
    expect((await find('?q=%25')).body.pagination.total).to.equal(0);
    expect((await find('?q=_')).body.pagination.total).to.equal(0);
  });

  it('keeps one status, and combines every criterion given', async () => {
    const disabled = await identity.request('PATCH', `/admin/users/${ids.olgaxsmith}/status`, {
      token: adminToken,
      body: { status: 'disabled' },
    });
    expect(disabled.status).to.equal(200);
    expect(names((await find('?q=olg&status=disabled')).body)).to.deep.equal(['olgaxsmith']);
    expect(names((await find('?q=olg&status=active')).body)).to.deep.equal(['Olga_Smith']);
    expect(names((await find('?username=oleg&q=pe')).body)).to.deep.equal([]);
  });

  it('pages with limit and offset and counts every match', async () => {
    const all = await find('?limit=100');
    expect(all.body.pagination.total).to.equal(6);
    expect(names(all.body)).to.deep.equal([
      'oleg',
      'Olga_Smith',
      'olgaxsmith',
      'Peter',
      'quinn',
      'search-admin',
    ]);
    const page = await find('?limit=2&offset=1');
    expect(names(page.body)).to.deep.equal(['Olga_Smith', 'olgaxsmith']);
    expect(page.body.pagination).to.deep.equal({ limit: 2, offset: 1, total: 6 });
  });

  it('answers 400 for a limit out of bounds, an unknown status or an empty q', async () => {
    for (const query of ['?limit=0', '?limit=101', '?offset=-1', '?status=banished', '?q=']) {
      const response = await find(query);
      expect(response.status, query).to.equal(400);
      expect(response.body.code, query).to.equal('VALIDATION_ERROR');
    }
  });

  it('is for administrators only: 403 for a user, 401 without a token', async () => {
    const peter = await identity.login('Peter');
    const refused = await find('?q=olg', peter);
    expect(refused.status).to.equal(403);
    expect(refused.body.code).to.equal('ACCESS_DENIED');
    expect(JSON.stringify(refused.body)).not.to.include('Olga');
    expect((await identity.request('GET', '/admin/users')).status).to.equal(401);
  });
});
