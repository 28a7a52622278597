import { createHash } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import pg from 'pg';
import { createPaymentsClient } from '@payments/client';
import { eventually, runPayments, useSystem } from '@payments/testkit';
import { rawApi, signUp, type ApiResponse, type TestUser } from '@payments/test-support';

interface Owner extends TestUser {
  accountId: string;
}

/** What a key allows, per API key and window, in this suite: small, so one test can use it up. */
const KEY_QUOTA = 8;

describe('API keys for servers, through the gateway', function () {
  this.timeout(120_000);

  // Rate limits on, as deployed, with room for everything but the per-key allowance the tests spend.
  const system = useSystem(
    {
      serviceEnv: {
        gateway: {
          RATE_LIMIT_ENABLED: 'true',
          RATE_LIMIT_ADDRESS_POINTS: '1000000',
          RATE_LIMIT_WEBHOOK_POINTS: '1000000',
          RATE_LIMIT_USER_POINTS: '1000000',
          RATE_LIMIT_API_KEY_POINTS: String(KEY_QUOTA),
          RATE_LIMIT_API_KEY_WINDOW_SECONDS: '120',
        },
      },
    },
    { booksBalance: true, admin: true },
  );
  const api = rawApi(system);

  const newOwner = async (): Promise<Owner> => {
    const user = await signUp(system.gatewayUrl);
    const { id } = await user.client.accounts.open({ currency: 'USD' });
    return { ...user, accountId: id };
  };

  const createKey = async (token: string, body: Record<string, unknown> = {}) => {
    const created = await api.post('/api-keys', { name: 'server', ...body }, token);
    expect(created.status, created.text).to.equal(201);
    return created.body as { id: string; secret: string; prefix: string; last4: string; scopes: unknown };
  };

  const expectProblem = (response: ApiResponse, status: number, code: string) => {
    expect(response.status, response.text).to.equal(status);
    expect(response.headers.get('content-type')).to.match(/^application\/problem\+json/);
    expect(response.body.code, response.text).to.equal(code);
    expect(response.text).not.to.match(/SELECT|INSERT|constraint|at .*\.ts:/);
  };

  const transactionCount = async (owner: Owner) => {
    const listed = await api.get('/transactions', owner.token);
    expect(listed.status, listed.text).to.equal(200);
    return (listed.body as { pagination: { total: number } }).pagination.total;
  };

  const deposit = (owner: Owner, credential: string, amount = 5) =>
    api.post(`/account/${owner.accountId}/deposit`, { amount, currency: 'USD' }, credential);

  const identityDb = async <T>(work: (db: pg.Client) => Promise<T>): Promise<T> => {
    const db = new pg.Client({ connectionString: system.environment('identity').DATABASE_URL });
    await db.connect();
    try {
      return await work(db);
    } finally {
      await db.end();
    }
  };

  let alice: Owner;
  let bob: Owner;

  before(async () => {
    alice = await newOwner();
    bob = await newOwner();
  });

  it('a secret key reads and moves money as its user, through the raw API and the typed client', async () => {
    const key = await createKey(alice.token);
    expect(key.secret).to.match(/^sk_test_[0-9a-f]{64}$/);
    expect(key).to.include({ prefix: 'sk_test_', last4: key.secret.slice(-4), scopes: null });

    const accounts = await api.get('/accounts', key.secret);
    expect(accounts.status, accounts.text).to.equal(200);
    expect((accounts.body.data as { id: string }[]).map((a) => a.id)).to.deep.equal([alice.accountId]);

    const accepted = await deposit(alice, key.secret);
    expect(accepted.status, accepted.text).to.equal(202);
    const settled = await eventually(
      () => alice.client.transactions.get(accepted.body.id as string),
      (transaction) => transaction.status !== 'pending',
      { timeoutMs: 20_000 },
    );
    expect(settled.status).to.equal('completed');

    const client = createPaymentsClient({ baseUrl: system.gatewayUrl, apiKey: key.secret });
    expect((await client.balances.get(alice.accountId)).balance).to.equal(5);

    // Another user's account stays out of reach of the key, as of its user's token.
    expectProblem(await api.get(`/account/${bob.accountId}`, key.secret), 403, 'ACCESS_DENIED');

    const listed = await api.get('/api-keys', alice.token);
    const shown = (listed.body.data as { id: string; last_used_at: string | null }[]).find(
      (k) => k.id === key.id,
    );
    expect(shown?.last_used_at, listed.text).to.be.a('string');
  });

  it('a read-only key reads, and is refused with 403 on money, endpoints and keys, changing nothing', async () => {
    const key = await createKey(alice.token, { scopes: ['read'] });
    expect(key.secret).to.match(/^rk_test_/);
    expect((await api.get(`/account/${alice.accountId}/balance`, key.secret)).status).to.equal(200);

    const before = await transactionCount(alice);
    expectProblem(await deposit(alice, key.secret), 403, 'ACCESS_DENIED');
    expectProblem(await api.post('/account', { currency: 'USD' }, key.secret), 403, 'ACCESS_DENIED');
    expectProblem(
      await api.post(
        '/webhook-endpoints',
        { url: 'https://example.com/hooks', events: ['transaction.completed'] },
        key.secret,
      ),
      403,
      'ACCESS_DENIED',
    );
    expect(await transactionCount(alice)).to.equal(before);
    expect((await api.get('/accounts', alice.token)).body.pagination.total).to.equal(1);

    // A money-only key cannot read.
    const mover = await createKey(alice.token, { scopes: ['money'] });
    expectProblem(await api.get('/accounts', mover.secret), 403, 'ACCESS_DENIED');
  });

  it('a restricted key manages no keys and no user: it cannot make a key with more power than itself', async () => {
    const restricted = await createKey(alice.token, { scopes: ['read', 'money'] });
    expectProblem(
      await api.post('/api-keys', { name: 'escalated' }, restricted.secret),
      403,
      'ACCESS_DENIED',
    );
    expectProblem(
      await api.post('/api-keys', { name: 'same', scopes: ['read'] }, restricted.secret),
      403,
      'ACCESS_DENIED',
    );
    expectProblem(await api.get('/api-keys', restricted.secret), 403, 'ACCESS_DENIED');
    expectProblem(await api.delete(`/api-keys/${restricted.id}`, restricted.secret), 403, 'ACCESS_DENIED');
    expectProblem(
      await api.put(`/user/${alice.userId}`, { username: `taken_${Date.now()}` }, restricted.secret),
      403,
      'ACCESS_DENIED',
    );
    const keys = await api.get('/api-keys', alice.token);
    expect((keys.body.data as { name: string }[]).map((k) => k.name)).not.to.include('escalated');

    // A secret key is its user's equal: it may make a restricted key, but never one with admin scopes.
    const secret = await createKey(alice.token);
    const made = await createKey(secret.secret, { scopes: ['read'] });
    expect(made.secret).to.match(/^rk_test_/);
    expectProblem(
      await api.post('/api-keys', { name: 'admin', scopes: ['admin_read'] }, secret.secret),
      403,
      'ACCESS_DENIED',
    );
    // A key is no session: it is not logged out (nor refreshed) as a token is.
    expectProblem(await api.post('/auth/logout', undefined, secret.secret), 403, 'ACCESS_DENIED');
    expect((await api.get('/accounts', secret.secret)).status).to.equal(200);
  });

  it('a non-admin cannot mint admin scopes; an admin key reaches admin routes only with them', async () => {
    for (const scopes of [['admin_read'], ['read', 'admin_write']]) {
      expectProblem(await api.post('/api-keys', { name: 'x', scopes }, alice.token), 403, 'ACCESS_DENIED');
    }
    const admin = system.admin;
    // An admin key's role reaches every route its scopes open: with `money` beside `admin_read`, it could refund
    // anyone's deposit. Admin scopes come alone.
    for (const scopes of [
      ['admin_read', 'money'],
      ['read', 'admin_write'],
    ]) {
      expectProblem(
        await api.post('/api-keys', { name: 'mixed', scopes }, admin.token),
        400,
        'VALIDATION_ERROR',
      );
    }
    const adminRead = await createKey(admin.token, { scopes: ['admin_read'] });
    expect((await api.get('/admin/users', adminRead.secret)).status).to.equal(200);
    expectProblem(
      await api.request('PATCH', `/admin/users/${bob.userId}/status`, {
        body: { status: 'disabled' },
        token: adminRead.secret,
      }),
      403,
      'ACCESS_DENIED',
    );
    // An admin's key without admin scopes acts as an ordinary user: no one else's account, no admin route.
    const plain = await createKey(admin.token, { scopes: ['read'] });
    expectProblem(await api.get('/admin/users', plain.secret), 403, 'ACCESS_DENIED');
    expectProblem(await api.get(`/account/${alice.accountId}`, plain.secret), 403, 'ACCESS_DENIED');
    expect((await api.get(`/account/${alice.accountId}`, admin.token)).status).to.equal(200);
  });

  it('a revoked key is refused at the very next request, though the gateway had its token cached', async () => {
    const key = await createKey(alice.token);
    expect((await api.get('/accounts', key.secret)).status).to.equal(200);
    expect((await api.get('/accounts', key.secret)).status).to.equal(200);

    const revoked = await api.delete(`/api-keys/${key.id}`, alice.token);
    expect(revoked.status, revoked.text).to.equal(204);
    expectProblem(await api.get('/accounts', key.secret), 401, 'AUTH_REQUIRED');
    expectProblem(await deposit(alice, key.secret), 401, 'AUTH_REQUIRED');
    expectProblem(await api.delete(`/api-keys/${key.id}`, alice.token), 404, 'RESOURCE_NOT_FOUND');
    const listed = await api.get('/api-keys', alice.token);
    expect((listed.body.data as { id: string }[]).map((k) => k.id)).not.to.include(key.id);
  });

  it('an expired key is refused, and an expiry in the past is a 400', async () => {
    expectProblem(
      await api.post('/api-keys', { name: 'late', expires_at: '2020-01-01T00:00:00Z' }, alice.token),
      400,
      'VALIDATION_ERROR',
    );
    const key = await createKey(alice.token, { expires_at: new Date(Date.now() + 3000).toISOString() });
    expect((await api.get('/accounts', key.secret)).status).to.equal(200);
    await new Promise((resolve) => setTimeout(resolve, 3500));
    expectProblem(await api.get('/accounts', key.secret), 401, 'AUTH_REQUIRED');
  });

  it("another user's key cannot be revoked (404), and it keeps working", async () => {
    const key = await createKey(alice.token);
    expectProblem(await api.delete(`/api-keys/${key.id}`, bob.token), 404, 'RESOURCE_NOT_FOUND');
    expectProblem(await api.delete('/api-keys/not-a-uuid', bob.token), 404, 'RESOURCE_NOT_FOUND');
    const bobs = await api.get('/api-keys', bob.token);
    expect((bobs.body.data as { id: string }[]).map((k) => k.id)).not.to.include(key.id);
    expect((await api.get('/accounts', key.secret)).status).to.equal(200);
  });

  it('shows the secret only once, and keeps only its hash', async () => {
    const key = await createKey(alice.token, { name: 'only once' });
    const listed = await api.get('/api-keys?limit=100', alice.token);
    expect(listed.status, listed.text).to.equal(200);
    const shown = (listed.body.data as Record<string, unknown>[]).find((k) => k.id === key.id);
    expect(shown).to.include({ name: 'only once', prefix: 'sk_test_', last4: key.secret.slice(-4) });
    expect(shown).not.to.have.property('secret');
    expect(listed.text).not.to.include(key.secret);
    expect(listed.text).not.to.include(key.secret.slice(8, 40));

    const rows = await identityDb((db) =>
      db.query<{ row: string; secret_hash: Buffer }>(
        'SELECT row_to_json(k)::text AS row, secret_hash FROM api_keys k WHERE id = $1',
        [key.id],
      ),
    );
    expect(rows.rows).to.have.length(1);
    const [row] = rows.rows;
    expect(row?.row).not.to.include(key.secret.slice(8));
    expect(row?.secret_hash.equals(createHash('sha256').update(key.secret).digest())).to.equal(true);
  });

  it("keeps working after its user's password changes, and stops when the user is deleted", async () => {
    const carol = await signUp(system.gatewayUrl);
    const key = await createKey(carol.token);
    expect((await api.get('/accounts', key.secret)).status).to.equal(200);

    const changed = await api.put(
      `/user/${carol.userId}`,
      { password: 'a-new-long-password-1', current_password: carol.password },
      carol.token,
    );
    expect(changed.status, changed.text).to.equal(200);
    expect((await api.get('/accounts', key.secret)).status).to.equal(200);

    const deleted = await api.delete(`/user/${carol.userId}?confirm=true`, carol.token);
    expect(deleted.status, deleted.text).to.equal(204);
    // Deleting a user cuts their keys as it cuts their tokens: by the revocation every gateway hears.
    const refused = await eventually(
      () => api.get('/accounts', key.secret),
      (response) => response.status !== 200,
      { timeoutMs: 10_000 },
    );
    expectProblem(refused, 401, 'AUTH_REQUIRED');
    const left = await identityDb((db) => db.query('SELECT 1 FROM api_keys WHERE id = $1', [key.id]));
    expect(left.rowCount).to.equal(0);
  });

  it('limits each key on its own, leaving the same user’s other key its allowance', async () => {
    const busy = await createKey(alice.token, { scopes: ['read'] });
    const other = await createKey(alice.token, { scopes: ['read'] });
    for (let i = 0; i < KEY_QUOTA; i++) {
      const allowed = await api.get('/accounts', busy.secret);
      expect(allowed.status, allowed.text).to.equal(200);
    }
    const refused = await api.get('/accounts', busy.secret);
    expectProblem(refused, 429, 'RATE_LIMIT_EXCEEDED');
    expect(refused.headers.get('retry-after')).to.match(/^\d+$/);
    expect((await api.get('/accounts', other.secret)).status).to.equal(200);
    expect((await api.get('/accounts', alice.token)).status).to.equal(200);
  });

  it('puts the creation and the revocation of a key in the trail, without its secret', async () => {
    const key = await createKey(alice.token, { name: 'trailed' });
    expect((await api.delete(`/api-keys/${key.id}`, alice.token)).status).to.equal(204);
    const trail = await eventually(
      async () => {
        const page = await api.get(`/admin/actions?owner=${alice.userId}&limit=100`, system.admin.token);
        return page.body as { data: { action: string; subject: string; actor: string }[] };
      },
      (page) => page.data.filter((a) => a.subject === `api_key:${key.id}`).length === 2,
      { timeoutMs: 15_000, what: 'both actions in the trail' },
    );
    const actions = trail.data.filter((a) => a.subject === `api_key:${key.id}`);
    expect(actions.map((a) => a.action)).to.have.members(['api_key.create', 'api_key.revoke']);
    expect(actions.every((a) => a.actor === alice.userId)).to.equal(true);
    expect(JSON.stringify(trail)).not.to.include(key.secret.slice(8));
  });

  it('the CLI works with --api-key and PAYMENTS_API_KEY, and manages keys', async () => {
    const home = await mkdtemp(join(tmpdir(), 'payments-cli-keys-'));
    try {
      const key = await createKey(alice.token);
      const env = { XDG_CONFIG_HOME: home, PAYMENTS_API_URL: system.gatewayUrl };
      const listed = await runPayments(['account', 'list', '--json', '--api-key', key.secret], env);
      expect(listed.code, listed.stderr).to.equal(0);
      expect(listed.stdout).to.include(alice.accountId);

      const created = await runPayments(['api-keys', 'create', 'from cli', '--scope', 'read', '--json'], {
        ...env,
        PAYMENTS_API_KEY: key.secret,
      });
      expect(created.code, created.stderr).to.equal(0);
      const made = JSON.parse(created.stdout) as { id: string; secret: string };
      expect(made.secret).to.match(/^rk_test_/);

      const balance = await runPayments(['balance', alice.accountId], {
        ...env,
        PAYMENTS_API_KEY: made.secret,
      });
      expect(balance.code, balance.stderr).to.equal(0);
      expect(balance.stdout).to.include(alice.accountId);

      const revoked = await runPayments(['api-keys', 'revoke', made.id, '--api-key', key.secret], env);
      expect(revoked.code, revoked.stderr).to.equal(0);
      const refused = await runPayments(['balance', alice.accountId, '--api-key', made.secret], env);
      expect(refused.code).to.equal(3);
    } finally {
      await rm(home, { recursive: true, force: true });
    }
  });
});
