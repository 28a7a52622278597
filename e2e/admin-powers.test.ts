import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { eventually, runPayments, useSystem } from '@payments/testkit';
import { rawApi, signUp, type TestUser } from '@payments/test-support';

interface TrailEntry {
  actor: string;
  action: string;
  subject: string;
  owner: string | null;
  reason: string | null;
}

describe('what an admin may do to another user, through the gateway, and the trail of it', function () {
  this.timeout(180_000);
  let owner: TestUser;

  const system = useSystem(
    {
      serviceEnv: {
        // Endpoints on 127.0.0.1 are allowed here only (development flag, off by default).
        'webhook-delivery': { WEBHOOK_ALLOW_PRIVATE_URLS: 'true' },
      },
    },
    { admin: true },
  );
  const api = rawApi(system);

  before(async () => {
    owner = await signUp(system.gatewayUrl);
  });

  const trailOf = (userId: string, count: number) =>
    eventually(
      async () => {
        const page = await api.get(`/admin/actions?owner=${userId}&limit=100`, system.admin.token);
        expect(page.status, page.text).to.equal(200);
        return page.body.data as TrailEntry[];
      },
      (entries) => entries.length >= count,
      { timeoutMs: 30_000 },
    );

  it("refuses an admin another user's endpoint secret (403), and lets them disable it, on the record", async () => {
    const endpoint = await owner.client.webhookEndpoints.create({
      url: 'http://127.0.0.1:9/owner-hooks',
      events: ['transaction.completed'],
    });

    const rotation = await api.post(
      `/webhook-endpoints/${endpoint.id}/rotate-secret`,
      {},
      system.admin.token,
    );
    expect(rotation.status, rotation.text).to.equal(403);
    expect(rotation.headers.get('content-type')).to.match(/^application\/problem\+json/);
    expect(rotation.body).to.include({ code: 'ACCESS_DENIED', status: 403 });
    expect(rotation.body.detail).to.match(/may not rotate another user’s signing secret/);
    expect(rotation.text).to.not.match(/whsec_/);
    const redirected = await api.put(
      `/webhook-endpoints/${endpoint.id}`,
      { url: 'http://127.0.0.1:9/admins-hooks' },
      system.admin.token,
    );
    expect(redirected.status).to.equal(403);
    expect(redirected.body.code).to.equal('ACCESS_DENIED');
    const unchanged = await owner.client.webhookEndpoints.get(endpoint.id);
    expect(unchanged).to.include({ url: 'http://127.0.0.1:9/owner-hooks', previous_secret_expires_at: null });

    const disabled = await api.put(
      `/webhook-endpoints/${endpoint.id}`,
      { enabled: false, reason: 'receiver answers with spam' },
      system.admin.token,
    );
    expect(disabled.status, disabled.text).to.equal(200);
    expect(disabled.body.enabled).to.equal(false);
    const [entry] = await trailOf(owner.userId, 1);
    expect(entry).to.include({
      actor: system.admin.id,
      action: 'webhook_endpoint.disable',
      subject: `webhook_endpoint:${endpoint.id}`,
      owner: owner.userId,
      reason: 'receiver answers with spam',
    });
  });

  it("lands an admin's change of a user's status in the same trail, which the CLI shows with whose it was", async () => {
    const locked = await api.request('PATCH', `/admin/users/${owner.userId}/status`, {
      token: system.admin.token,
      body: { status: 'locked', reason: 'card testing from this account' },
    });
    expect(locked.status, locked.text).to.equal(200);
    const entries = await trailOf(owner.userId, 2);
    expect(entries.map(({ action, reason }) => ({ action, reason }))).to.deep.equal([
      { action: 'webhook_endpoint.disable', reason: 'receiver answers with spam' },
      { action: 'user.status_change', reason: 'card testing from this account' },
    ]);

    const configHome = await mkdtemp(path.join(tmpdir(), 'payments-cli-'));
    try {
      const env = { PAYMENTS_API_URL: system.gatewayUrl, XDG_CONFIG_HOME: configHome };
      const login = await runPayments(
        ['login', '--username', system.admin.username, '--password', system.admin.password],
        env,
      );
      expect(login.code, login.stderr).to.equal(0);
      const shown = await runPayments(['admin', 'actions', '--owner', owner.userId], env);
      expect(shown.code, shown.stderr).to.equal(0);
      expect(shown.stdout).to.include('OWNER');
      const rows = shown.stdout.split('\n').filter((line) => line.includes(owner.userId));
      expect(rows).to.have.length(2);
      expect(rows[1]).to.include('user.status_change').and.include(system.admin.id);
    } finally {
      await rm(configHome, { recursive: true, force: true });
    }
  });
});
