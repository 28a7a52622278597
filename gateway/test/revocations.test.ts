import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { createEvent } from '@payments/contracts';
import { createLogger, createMemoryBus } from '@payments/service-kit';
import { eventually } from '@payments/testkit';
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
