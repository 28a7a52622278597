import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { createEvent } from '@payments/contracts';
import { createLogger, createMemoryBus, type EventBus } from '@payments/service-kit';
import { eventually } from '@payments/testkit';
import { startFakeUpstream, type FakeUpstream } from './fake-upstream.js';
import { startGatewayUnderTest } from './harness.js';

const USER = '00000000-0000-4000-8000-00000000beef';
const inAnHour = () => Math.floor(Date.now() / 1000) + 3600;

describe('gateway token revocation', () => {
  it('refuses a token once its revocation is broadcast on the bus', async () => {
    const bus = createMemoryBus(createLogger('test', 'silent'));
    const gw = await startGatewayUnderTest({}, { bus });
    try {
      const jti = randomUUID();
      const token = gw.issuer.issue({ sub: USER, jti });
      expect((await gw.fetch('/accounts', { token })).status).to.equal(200);
      await bus.publish(
        createEvent(
          'TokenRevoked',
          { jti, expires_at: inAnHour() },
          { id: randomUUID(), correlationId: 'test' },
        ),
      );
      const response = await eventually(
        () => gw.fetch('/accounts', { token }),
        (r) => r.status === 401,
      );
      expect(response.status).to.equal(401);
      expect(await response.json()).to.include({ code: 'AUTH_REQUIRED' });
      expect((await gw.fetch('/accounts', { token: gw.issuer.issue({ sub: USER }) })).status).to.equal(200);
    } finally {
      await gw.stop();
      await bus.close();
    }
  });

  it('refuses a token as soon as identity has answered its logout, before any event arrives', async () => {
    const gw = await startGatewayUnderTest();
    try {
      const token = gw.token(USER);
      const other = gw.token(USER);
      gw.upstreams.identity.answer((_req, res) => res.writeHead(204).end());
      expect((await gw.fetch('/auth/logout', { method: 'POST', token })).status).to.equal(204);
      const response = await gw.fetch('/accounts', { token });
      expect(response.status).to.equal(401);
      expect(await response.json()).to.include({ code: 'AUTH_REQUIRED' });
      expect((await gw.fetch('/accounts', { token: other })).status).to.equal(200);
    } finally {
      await gw.stop();
    }
  });

  it('refuses a token as soon as identity has answered its refresh, before any event arrives', async () => {
    const gw = await startGatewayUnderTest();
    try {
      const token = gw.token(USER);
      gw.upstreams.identity.answer((_req, res) =>
        res.writeHead(200, { 'content-type': 'application/json' }).end('{"token":"x"}'),
      );
      expect((await gw.fetch('/v1.1/auth/refresh', { method: 'POST', token })).status).to.equal(200);
      const response = await gw.fetch('/accounts', { token });
      expect(response.status).to.equal(401);
      expect(await response.json()).to.include({ code: 'AUTH_REQUIRED' });
    } finally {
      await gw.stop();
    }
  });

  it('keeps a token whose logout identity refused', async () => {
    const gw = await startGatewayUnderTest();
    try {
      const token = gw.token(USER);
      gw.upstreams.identity.answer((_req, res) =>
        res.writeHead(503, { 'content-type': 'application/json' }).end('{}'),
      );
      expect((await gw.fetch('/auth/logout', { method: 'POST', token })).status).to.equal(503);
      expect((await gw.fetch('/accounts', { token })).status).to.equal(200);
    } finally {
      await gw.stop();
    }
  });

  /** A fake identity whose revocation list the test edits; `up` false answers 503, as a starting identity would. */
  const fakeIdentity = async () => {
    const identity = await startFakeUpstream('identity');
    const state = { up: true, revocations: [] as { jti: string; expires_at: number }[] };
    identity.answer((req, res) => {
      if (!state.up) return void res.writeHead(503).end();
      const body = req.url === '/internal/revocations' ? { data: state.revocations } : {};
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    });
    return Object.assign(state, { upstream: identity as FakeUpstream });
  };

  it('started while identity is down: refuses every token with 503 and is not ready, until the load succeeds', async () => {
    const identity = await fakeIdentity();
    identity.up = false;
    const jti = randomUUID();
    identity.revocations.push({ jti, expires_at: inAnHour() });
    const gw = await startGatewayUnderTest({ IDENTITY_URL: identity.upstream.url });
    try {
      const loggedOut = gw.issuer.issue({ sub: USER, jti });
      const refused = await gw.fetch('/accounts', { token: loggedOut });
      expect(refused.status).to.equal(503);
      expect(refused.headers.get('retry-after')).to.match(/^\d+$/);
      expect(await refused.json()).to.include({ code: 'SERVICE_UNAVAILABLE' });
      expect((await gw.fetch('/accounts', { token: gw.token(USER) })).status).to.equal(503);
      expect((await gw.fetch('/ready', { service: true })).status).to.equal(503);
      // Public routes do not depend on the denylist.
      expect((await gw.fetch('/api/currencies')).status).to.equal(200);

      identity.up = true;
      const after = await eventually(
        () => gw.fetch('/accounts', { token: loggedOut }),
        (r) => r.status !== 503,
      );
      expect(after.status).to.equal(401);
      expect((await gw.fetch('/accounts', { token: gw.token(USER) })).status).to.equal(200);
    } finally {
      await gw.stop();
      await identity.upstream.close();
    }
  });

  it('loads again each time its broadcast subscription is re-made (after a broker reconnect)', async () => {
    const identity = await fakeIdentity();
    const memory = createMemoryBus(createLogger('test', 'silent'));
    const resubscribe: (() => void)[] = [];
    // The memory bus never reconnects; this one lets the test say when the subscription was made again.
    const bus: EventBus = {
      ...memory,
      broadcast: (key, handlers, options) => {
        if (key === 'revocations' && options?.onSubscribed) resubscribe.push(options.onSubscribed);
        return memory.broadcast(key, handlers, options);
      },
    };
    const gw = await startGatewayUnderTest({ IDENTITY_URL: identity.upstream.url }, { bus });
    try {
      const jti = randomUUID();
      const token = gw.issuer.issue({ sub: USER, jti });
      expect((await gw.fetch('/accounts', { token })).status).to.equal(200);
      // Revoked while the broadcast queue was gone: the event never reaches this gateway.
      identity.revocations.push({ jti, expires_at: inAnHour() });
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect((await gw.fetch('/accounts', { token })).status).to.equal(200);
      expect(resubscribe).to.have.length(1);
      resubscribe.forEach((subscribed) => subscribed());
      const after = await eventually(
        () => gw.fetch('/accounts', { token }),
        (r) => r.status === 401,
      );
      expect(after.status).to.equal(401);
    } finally {
      await gw.stop();
      await memory.close();
      await identity.upstream.close();
    }
  });

  it('without a bus, loads the revocations again every REVOCATIONS_RELOAD_SECONDS', async () => {
    const identity = await fakeIdentity();
    const gw = await startGatewayUnderTest({
      IDENTITY_URL: identity.upstream.url,
      REVOCATIONS_RELOAD_SECONDS: 1,
    });
    try {
      const jti = randomUUID();
      const token = gw.issuer.issue({ sub: USER, jti });
      expect((await gw.fetch('/accounts', { token })).status).to.equal(200);
      identity.revocations.push({ jti, expires_at: inAnHour() });
      const after = await eventually(
        () => gw.fetch('/accounts', { token }),
        (r) => r.status === 401,
        { timeoutMs: 5000 },
      );
      expect(after.status).to.equal(401);
    } finally {
      await gw.stop();
      await identity.upstream.close();
    }
  });

  it('loads the revocations identity already knows at start', async () => {
    const jti = randomUUID();
    const { startFakeUpstream } = await import('./fake-upstream.js');
    const identity = await startFakeUpstream('identity');
    identity.answer((req, res) => {
      const body = req.url === '/internal/revocations' ? { data: [{ jti, expires_at: inAnHour() }] } : {};
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    });
    const gw = await startGatewayUnderTest({ IDENTITY_URL: identity.url });
    try {
      expect((await gw.fetch('/accounts', { token: gw.issuer.issue({ sub: USER, jti }) })).status).to.equal(
        401,
      );
      expect((await gw.fetch('/accounts', { token: gw.issuer.issue({ sub: USER }) })).status).to.equal(200);
    } finally {
      await gw.stop();
      await identity.close();
    }
  });
});
