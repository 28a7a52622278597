import { expect } from 'chai';
import { startDeliveryHarness } from './support/delivery-harness.js';

describe('webhook receiver drill', function () {
  this.timeout(30_000);

  it('refuses a drill to a name that now resolves inside (422) and sends nothing, like deliveries', async () => {
    let answer = '93.184.215.14';
    const harness = await startDeliveryHarness({
      env: { WEBHOOK_ALLOW_PRIVATE_URLS: 'false' },
      resolve: async () => [{ address: answer, family: 4 }],
    });
    try {
      const user = harness.newUser();
      const created = await harness.call('POST', '/webhook-endpoints', {
        user,
        body: { url: `http://rebind.example:${harness.receiver.port}/inside`, events: ['user.updated'] },
      });
      expect(created.status).to.equal(201);
      answer = '127.0.0.1';
      const drill = await harness.call('POST', `/webhook-endpoints/${created.body.id}/drill`, { user });
      expect(drill.status, JSON.stringify(drill.body)).to.equal(422);
      expect(drill.body.detail).to.match(/Nothing was sent.*loopback/);
      expect(harness.receiver.calls('/inside')).to.have.length(0);
    } finally {
      await harness.stop();
    }
  });

  it('caps drills per user an hour, and a deleted and remade endpoint does not reset it', async () => {
    const harness = await startDeliveryHarness({ env: { WEBHOOK_DRILLS_PER_USER_PER_HOUR: '2' } });
    try {
      const user = harness.newUser();
      const drillOf = (id: string) => harness.call('POST', `/webhook-endpoints/${id}/drill`, { user });
      const first = await harness.register(user, '/cap-1');
      expect((await drillOf(first.id)).status).to.equal(200);
      await harness.call('DELETE', `/webhook-endpoints/${first.id}`, { user });
      const second = await harness.register(user, '/cap-1');
      expect((await drillOf(second.id)).status).to.equal(200);
      const third = await harness.register(user, '/cap-3');
      const refused = await drillOf(third.id);
      expect(refused.status).to.equal(429);
      expect(refused.body.detail).to.match(/2 drills in the past hour/);
      expect(Number(refused.headers.get('retry-after'))).to.be.within(3000, 3600);
      expect(harness.receiver.calls('/cap-1')).to.have.length(12);
      expect(harness.receiver.calls('/cap-3')).to.have.length(0);
      // Another user is not held back by this one.
      const other = harness.newUser();
      const theirs = await harness.register(other, '/cap-other');
      expect(
        (await harness.call('POST', `/webhook-endpoints/${theirs.id}/drill`, { user: other })).status,
      ).to.equal(200);
    } finally {
      await harness.stop();
    }
  });

  it('answers within its budget when the receiver hangs: the cases not reached are not sent', async () => {
    const harness = await startDeliveryHarness({ env: { WEBHOOK_DRILL_TIMEOUT_MS: '1000' } });
    try {
      const user = harness.newUser();
      const endpoint = await harness.register(user, '/hang');
      harness.receiver.on('/hang', () => 'hang');
      const started = Date.now();
      const drill = await harness.call('POST', `/webhook-endpoints/${endpoint.id}/drill`, { user });
      expect(Date.now() - started).to.be.below(2500);
      expect(drill.status).to.equal(200);
      expect(drill.body.result).to.equal('failed');
      const [first, ...rest] = drill.body.cases as { outcome: string; error: string | null }[];
      expect(first).to.include({ outcome: 'failed' });
      expect(first!.error).to.match(/timed out after \d+ ms/);
      expect(rest.map((c) => c.outcome)).to.deep.equal(Array(5).fill('not_sent'));
      expect(harness.receiver.calls('/hang')).to.have.length(1);
    } finally {
      await harness.stop();
    }
  });
});
