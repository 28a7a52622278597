import { randomUUID } from 'node:crypto';
import { setTimeout as delay } from 'node:timers/promises';
import { expect } from 'chai';
import { createEvent } from '@payments/contracts';
import { createLogger, createMemoryBus } from '@payments/service-kit';
import { eventually } from '@payments/testkit';
import { startGatewayUnderTest } from './harness.js';

describe('gateway token keys', () => {
  it('refuses a token of the key identity removed as soon as identity announces SigningKeysChanged', async () => {
    const bus = createMemoryBus(createLogger('test', 'silent'));
    const gw = await startGatewayUnderTest({ JWKS_REFRESH_SECONDS: 3600 }, { bus });
    try {
      const token = gw.token();
      expect((await gw.fetch('/accounts', { token })).status).to.equal(200);
      gw.issuer.rotate();
      expect((await gw.fetch('/accounts', { token })).status, 'the key set of an hour').to.equal(200);
      await bus.publish(
        createEvent(
          'SigningKeysChanged',
          { kids: [randomUUID()] },
          { id: randomUUID(), correlationId: 'test' },
        ),
      );
      const response = await eventually(
        () => gw.fetch('/accounts', { token }),
        (r) => r.status === 401,
      );
      expect(await response.json()).to.include({ code: 'AUTH_REQUIRED' });
      expect((await gw.fetch('/accounts', { token: gw.token() })).status).to.equal(200);
    } finally {
      await gw.stop();
      await bus.close();
    }
  });

  it('refuses it once its key set is JWKS_REFRESH_SECONDS old, when no announcement can arrive (no bus)', async () => {
    const gw = await startGatewayUnderTest({ JWKS_REFRESH_SECONDS: 1 });
    try {
      const token = gw.token();
      expect((await gw.fetch('/accounts', { token })).status).to.equal(200);
      gw.issuer.rotate();
      await delay(1100);
      const response = await gw.fetch('/accounts', { token });
      expect(response.status).to.equal(401);
      expect(await response.json()).to.include({ code: 'AUTH_REQUIRED' });
      expect((await gw.fetch('/accounts', { token: gw.token() })).status).to.equal(200);
    } finally {
      await gw.stop();
    }
  });
});
