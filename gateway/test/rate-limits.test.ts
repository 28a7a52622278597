import { randomBytes } from 'node:crypto';
import { expect } from 'chai';
import { useStarted } from '@payments/testkit';
import { startGatewayUnderTest, type GatewayUnderTest } from './harness.js';
import { findTestRedis } from './redis-server.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('gateway rate limits', () => {
  describe('per client address', () => {
    const gw = useStarted(() =>
      startGatewayUnderTest({
        RATE_LIMIT_ENABLED: true,
        RATE_LIMIT_ADDRESS_POINTS: 3,
        RATE_LIMIT_ADDRESS_WINDOW_SECONDS: 1,
      }),
    );

    it('carries RateLimit headers on successful responses', async () => {
      const response = await gw.fetch('/api/currencies');
      expect(response.status).to.equal(200);
      expect(response.headers.get('ratelimit-policy')).to.equal('"address";q=3;w=1');
      expect(response.headers.get('ratelimit')).to.match(/^"address";r=2;t=1$/);
    });

    it('answers 429 problem+json with Retry-After once the window is spent, and resets after it', async () => {
      await sleep(1100);
      for (let i = 0; i < 3; i++) expect((await gw.fetch('/api/currencies')).status).to.equal(200);
      const count = gw.upstreams.currency.received.length;
      const limited = await gw.fetch('/api/currencies');
      expect(limited.status).to.equal(429);
      expect(limited.headers.get('content-type')).to.match(/^application\/problem\+json/);
      expect(limited.headers.get('retry-after')).to.equal('1');
      expect(limited.headers.get('ratelimit-policy')).to.equal('"address";q=3;w=1');
      expect(limited.headers.get('ratelimit')).to.equal('"address";r=0;t=1');
      expect(await limited.json()).to.include({
        status: 429,
        code: 'RATE_LIMIT_EXCEEDED',
        instance: '/api/currencies',
      });
      expect(gw.upstreams.currency.received.length).to.equal(count);

      await sleep(1100);
      expect((await gw.fetch('/api/currencies')).status).to.equal(200);
    });
  });

  describe('per user quota', () => {
    const gw = useStarted(() =>
      startGatewayUnderTest({
        RATE_LIMIT_ENABLED: true,
        RATE_LIMIT_USER_POINTS: 2,
        RATE_LIMIT_USER_WINDOW_SECONDS: 60,
      }),
    );

    it('limits each user separately and reports both policies', async () => {
      const alice = gw.token();
      const first = await gw.fetch('/accounts', { token: alice });
      expect(first.headers.get('ratelimit-policy')).to.equal('"address";q=100;w=10, "user";q=2;w=60');
      expect(first.headers.get('ratelimit')).to.match(/^"address";r=\d+;t=\d+, "user";r=1;t=60$/);
      expect((await gw.fetch('/accounts', { token: alice })).status).to.equal(200);
      const limited = await gw.fetch('/accounts', { token: alice });
      expect(limited.status).to.equal(429);
      expect(Number(limited.headers.get('retry-after'))).to.be.within(59, 60);
      expect(await limited.json()).to.include({ code: 'RATE_LIMIT_EXCEEDED' });
      expect((await gw.fetch('/accounts', { token: gw.token() })).status).to.equal(200);
    });

    it('does not count public requests against a user quota', async () => {
      for (let i = 0; i < 3; i++) expect((await gw.fetch('/api/currencies')).status).to.equal(200);
    });
  });

  describe('provider webhooks, on a budget of their own', () => {
    const limited = {
      RATE_LIMIT_ENABLED: true,
      RATE_LIMIT_ADDRESS_POINTS: 2,
      RATE_LIMIT_ADDRESS_WINDOW_SECONDS: 60,
      RATE_LIMIT_WEBHOOK_POINTS: 3,
      RATE_LIMIT_WEBHOOK_WINDOW_SECONDS: 60,
    };
    const webhook = (gw: GatewayUnderTest) =>
      gw.fetch('/webhook/provider', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{"id":"evt_1"}',
      });
    let gw: GatewayUnderTest;
    beforeEach(async () => {
      gw = await startGatewayUnderTest(limited);
    });
    afterEach(() => gw.stop());

    it("still takes a provider's webhooks from an address whose clients have spent its budget", async () => {
      for (let i = 0; i < 2; i++) expect((await gw.fetch('/api/currencies')).status).to.equal(200);
      expect((await gw.fetch('/api/currencies')).status).to.equal(429);
      const delivered = [];
      for (let i = 0; i < 3; i++) delivered.push(await webhook(gw));
      expect(delivered.map((r) => r.status)).to.deep.equal([200, 200, 200]);
      expect(delivered[0]?.headers.get('ratelimit-policy')).to.equal('"webhook";q=3;w=60');
      expect(delivered[2]?.headers.get('ratelimit')).to.equal('"webhook";r=0;t=60');
      expect(gw.upstreams['webhook-ingest'].received).to.have.length(3);
      // Its own budget has a limit too, answered in the `{ error }` body webhook callers expect.
      const refused = await webhook(gw);
      expect(refused.status).to.equal(429);
      expect(Number(refused.headers.get('retry-after'))).to.be.within(59, 60);
      expect(await refused.json())
        .to.have.property('error')
        .that.matches(/Too many requests/);
      expect(gw.upstreams['webhook-ingest'].received).to.have.length(3);
    });

    it("leaves clients' budget whole when a provider's webhooks spend theirs", async () => {
      for (let i = 0; i < 3; i++) expect((await webhook(gw)).status).to.equal(200);
      expect((await webhook(gw)).status).to.equal(429);
      const client = await gw.fetch('/api/currencies');
      expect(client.status).to.equal(200);
      expect(client.headers.get('ratelimit')).to.equal('"address";r=1;t=60');
    });
  });

  it('honours X-Forwarded-For only from a trusted proxy', async () => {
    const limited = {
      RATE_LIMIT_ENABLED: true,
      RATE_LIMIT_ADDRESS_POINTS: 1,
      RATE_LIMIT_ADDRESS_WINDOW_SECONDS: 60,
    };
    const behindProxy = await startGatewayUnderTest({ ...limited, TRUSTED_PROXIES: '127.0.0.1' });
    const exposed = await startGatewayUnderTest(limited);
    try {
      const from = (gw: GatewayUnderTest, address: string) =>
        gw.fetch('/api/currencies', { headers: { 'x-forwarded-for': address } }).then((r) => r.status);
      expect([await from(behindProxy, '203.0.113.1'), await from(behindProxy, '203.0.113.2')]).to.deep.equal([
        200, 200,
      ]);
      expect(await from(behindProxy, '203.0.113.1')).to.equal(429);
      expect([await from(exposed, '203.0.113.1'), await from(exposed, '203.0.113.2')]).to.deep.equal([
        200, 429,
      ]);
    } finally {
      await Promise.all([behindProxy.stop(), exposed.stop()]);
    }
  });

  it('counts the addresses of one IPv6 /64 as one client', async () => {
    const gw = await startGatewayUnderTest({
      RATE_LIMIT_ENABLED: true,
      RATE_LIMIT_ADDRESS_POINTS: 1,
      RATE_LIMIT_ADDRESS_WINDOW_SECONDS: 60,
      TRUSTED_PROXIES: '127.0.0.1',
    });
    try {
      const from = (address: string) =>
        gw.fetch('/api/currencies', { headers: { 'x-forwarded-for': address } }).then((r) => r.status);
      expect(await from('2001:db8:5:5::1')).to.equal(200);
      expect(await from('2001:db8:5:5:abcd::2')).to.equal(429);
      expect(await from('2001:db8:5:6::1')).to.equal(200);
    } finally {
      await gw.stop();
    }
  });

  it('applies no limit when RATE_LIMIT_ENABLED is false', async () => {
    const gw = await startGatewayUnderTest({ RATE_LIMIT_ENABLED: false, RATE_LIMIT_ADDRESS_POINTS: 1 });
    try {
      for (let i = 0; i < 3; i++) {
        const response = await gw.fetch('/api/currencies');
        expect(response.status).to.equal(200);
        expect(response.headers.get('ratelimit')).to.equal(null);
      }
    } finally {
      await gw.stop();
    }
  });

  it('shares one limit between two gateway processes through Redis', async () => {
    const redis = await findTestRedis();
    const shared = {
      RATE_LIMIT_ENABLED: true,
      RATE_LIMIT_ADDRESS_POINTS: 4,
      RATE_LIMIT_ADDRESS_WINDOW_SECONDS: 30,
      REDIS_URL: redis.url,
      RATE_LIMIT_KEY_PREFIX: `test-${randomBytes(4).toString('hex')}`,
    };
    const one = await startGatewayUnderTest(shared);
    const two = await startGatewayUnderTest(shared);
    try {
      const statuses = [];
      for (const gw of [one, two, one, two, one, two])
        statuses.push((await gw.fetch('/api/currencies')).status);
      expect(statuses).to.deep.equal([200, 200, 200, 200, 429, 429]);
    } finally {
      await Promise.all([one.stop(), two.stop()]);
      await redis.stop();
    }
  });
});
