import { expect } from 'chai';
import { startDeliveryHarness } from './support/delivery-harness.js';
import { useStarted } from '@payments/testkit';

describe('webhook endpoints API', function () {
  this.timeout(30_000);

  const harness = useStarted(() => startDeliveryHarness());

  it('registers an endpoint and shows its signing secret once', async () => {
    const user = harness.newUser();
    const created = await harness.call('POST', '/webhook-endpoints', {
      user,
      body: { url: `${harness.receiver.url}/hooks`, events: ['transaction.completed', 'account.created'] },
      headers: { 'x-api-version': '1.1' },
    });
    expect(created.status).to.equal(201);
    expect(created.headers.get('location')).to.equal(`/webhook-endpoints/${created.body.id}`);
    expect(created.body.secret).to.match(/^whsec_[\w-]{40,}$/);
    expect(created.body).to.include({ user_id: user.id, enabled: true, api_version: '1.1' });
    expect(created.body.events).to.deep.equal(['transaction.completed', 'account.created']);

    const shown = await harness.call('GET', `/webhook-endpoints/${created.body.id}`, { user });
    expect(shown.status).to.equal(200);
    expect(shown.body).to.not.have.property('secret');
    expect(JSON.stringify(shown.body)).to.not.include(created.body.secret);
    const listed = await harness.call('GET', '/webhook-endpoints', { user });
    expect(listed.body.pagination).to.deep.equal({ limit: 20, offset: 0, total: 1 });
    const row = await harness.db('webhook_endpoints').where({ id: created.body.id }).first();
    expect(row.secret, 'stored encrypted')
      .to.match(/^enc:v1:/)
      .and.not.include(created.body.secret);
    expect(JSON.stringify(listed.body)).to.not.include(created.body.secret);
  });

  it('updates events and disables, then deletes', async () => {
    const user = harness.newUser();
    const endpoint = await harness.register(user, '/update');
    const updated = await harness.call('PUT', `/webhook-endpoints/${endpoint.id}`, {
      user,
      body: { enabled: false, events: ['user.updated'] },
    });
    expect(updated.status).to.equal(200);
    expect(updated.body).to.include({ enabled: false });
    expect(updated.body.events).to.deep.equal(['user.updated']);
    const versioned = await harness.call('PUT', `/webhook-endpoints/${endpoint.id}`, {
      user,
      body: { api_version: '1.1' },
    });
    expect(versioned.body).to.include({ api_version: '1.1', enabled: false });
    const unknownVersion = await harness.call('PUT', `/webhook-endpoints/${endpoint.id}`, {
      user,
      body: { api_version: '9.9' },
    });
    expect(unknownVersion.status).to.equal(400);
    const bad = await harness.call('PUT', `/webhook-endpoints/${endpoint.id}`, {
      user,
      body: { events: ['payment.stolen'] },
    });
    expect(bad.status).to.equal(400);
    const empty = await harness.call('PUT', `/webhook-endpoints/${endpoint.id}`, { user, body: {} });
    expect(empty.status).to.equal(400);
    expect((await harness.call('DELETE', `/webhook-endpoints/${endpoint.id}`, { user })).status).to.equal(
      204,
    );
    expect((await harness.call('GET', `/webhook-endpoints/${endpoint.id}`, { user })).status).to.equal(404);
  });

  it("refuses another user's endpoint like any foreign resource (403), and lets an admin manage it", async () => {
    const owner = harness.newUser();
    const intruder = harness.newUser();
    const admin = harness.newUser('admin');
    const endpoint = await harness.register(owner, '/owned');
    for (const [method, path, body] of [
      ['GET', `/webhook-endpoints/${endpoint.id}`, undefined],
      ['PUT', `/webhook-endpoints/${endpoint.id}`, { enabled: false }],
      ['DELETE', `/webhook-endpoints/${endpoint.id}`, undefined],
      ['POST', `/webhook-endpoints/${endpoint.id}/rotate-secret`, undefined],
      ['GET', `/webhook-endpoints/${endpoint.id}/deliveries`, undefined],
    ] as const) {
      const response = await harness.call(method, path, { user: intruder, body });
      expect(response.status, `${method} ${path}`).to.equal(403);
      expect(response.body.code).to.equal('ACCESS_DENIED');
    }
    const mine = await harness.call('GET', '/webhook-endpoints', { user: intruder });
    expect(mine.body.data).to.deep.equal([]);
    const foreignList = await harness.call('GET', `/webhook-endpoints?user_id=${owner.id}`, {
      user: intruder,
    });
    expect(foreignList.status).to.equal(403);

    const adminList = await harness.call('GET', `/webhook-endpoints?user_id=${owner.id}`, { user: admin });
    expect(adminList.body.data.map((e: { id: string }) => e.id)).to.deep.equal([endpoint.id]);
    const disabled = await harness.call('PUT', `/webhook-endpoints/${endpoint.id}`, {
      user: admin,
      body: { enabled: false },
    });
    expect(disabled.status).to.equal(200);
    expect(disabled.body.enabled).to.equal(false);
  });

  it('answers 404 for ids that are not UUIDs and 401 without a token', async () => {
    const user = harness.newUser();
    expect((await harness.call('GET', '/webhook-endpoints/nope', { user })).status).to.equal(404);
    expect((await harness.call('GET', '/webhook-endpoints')).status).to.equal(401);
  });

  it('rotates the secret, keeping the previous one for the grace period', async () => {
    const user = harness.newUser();
    const endpoint = await harness.register(user, '/rotate');
    const rotated = await harness.call('POST', `/webhook-endpoints/${endpoint.id}/rotate-secret`, {
      user,
      body: { grace_period_seconds: 3600 },
    });
    expect(rotated.status).to.equal(200);
    expect(rotated.body.secret)
      .to.match(/^whsec_/)
      .and.not.equal(endpoint.secret);
    const expires = Date.parse(rotated.body.previous_secret_expires_at);
    expect(expires - Date.now()).to.be.within(3_500_000, 3_600_000);
  });

  it('refuses URLs that are not http(s) or carry credentials', async () => {
    const user = harness.newUser();
    for (const url of [
      'ftp://example.com/x',
      'file:///etc/passwd',
      'gopher://x',
      'not a url',
      'http://u:p@example.com/',
    ]) {
      const response = await harness.call('POST', '/webhook-endpoints', {
        user,
        body: { url, events: ['transaction.completed'] },
      });
      expect(response.status, url).to.equal(400);
      expect(response.body.errors[0].field).to.equal('url');
    }
  });

  it('limits the endpoints per user, also under concurrent creations', async () => {
    const limited = await startDeliveryHarness({ env: { MAX_ENDPOINTS_PER_USER: '3' } });
    try {
      const user = limited.newUser();
      const answers = await Promise.all(
        Array.from({ length: 8 }, (_, i) =>
          limited.call('POST', '/webhook-endpoints', {
            user,
            body: { url: `${limited.receiver.url}/n${i}`, events: ['transaction.completed'] },
          }),
        ),
      );
      expect(answers.filter((a) => a.status === 201)).to.have.length(3);
      expect(answers.filter((a) => a.status === 422)).to.have.length(5);
    } finally {
      await limited.stop();
    }
  });
});

describe('endpoint URL safety (SSRF)', function () {
  this.timeout(30_000);

  const harness = useStarted(() => startDeliveryHarness({ env: { WEBHOOK_ALLOW_PRIVATE_URLS: 'false' } }));

  it('refuses loopback, private, link-local and metadata addresses, literal or by name', async () => {
    const user = harness.newUser();
    for (const url of [
      'http://127.0.0.1:8080/',
      'http://localhost/',
      'http://10.0.0.5/',
      'http://172.16.1.1/',
      'http://192.168.1.1/',
      'http://169.254.169.254/latest/meta-data/',
      'http://100.64.0.1/',
      'http://0.0.0.0/',
      'http://[::1]/',
      'http://[::ffff:127.0.0.1]/',
      'http://[::ffff:a9fe:a9fe]/',
      'http://[fd00::1]/',
      'http://[fe80::1]/',
      'http://2130706433/',
      'http://0x7f.0.0.1/',
    ]) {
      const response = await harness.call('POST', '/webhook-endpoints', {
        user,
        body: { url, events: ['transaction.completed'] },
      });
      expect(response.status, url).to.equal(400);
      expect(response.body.code).to.equal('VALIDATION_ERROR');
    }
    const list = await harness.call('GET', '/webhook-endpoints', { user });
    expect(list.body.pagination.total).to.equal(0);
  });

  it('refuses a URL changed to a private address', async () => {
    const user = harness.newUser();
    const created = await harness.call('POST', '/webhook-endpoints', {
      user,
      body: { url: 'https://93.184.215.14/hooks', events: ['transaction.completed'] },
    });
    expect(created.status).to.equal(201);
    const changed = await harness.call('PUT', `/webhook-endpoints/${created.body.id}`, {
      user,
      body: { url: 'http://169.254.169.254/' },
    });
    expect(changed.status).to.equal(400);
  });
});
