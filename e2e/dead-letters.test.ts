import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { eventually, findInfrastructure, tapEvents, type EventTap, useSystem } from '@payments/testkit';
import { rawApi, signUpWithAccount, type Customer, aPaymentConfirmation } from '@payments/test-support';

describe('dead letters through the gateway, for admins', function () {
  this.timeout(120_000);
  let tap: EventTap;
  let user: Customer;

  const system = useSystem(
    {
      serviceEnv: {
        // Nothing confirms a deposit but the test.
        'provider-sandbox': { SANDBOX_ENABLED: 'false' },
        // The replay's log line is at info.
        ledger: { LOG_LEVEL: 'info' },
      },
    },
    { admin: true, beforeStop: () => tap?.close() },
  );
  const api = rawApi(system);

  before(async () => {
    tap = await tapEvents(
      (await findInfrastructure()).amqpUrl,
      system.environment('ledger').AMQP_NAMESPACE as string,
    );
    user = await signUpWithAccount(system.gatewayUrl);
  });

  const depth = (queue: string, wanted: number) =>
    eventually(
      () => tap.depth(queue),
      (n) => n === wanted,
    );

  it("lists the ledger's dead letters, refuses a user, and replays them onto ledger.events, which takes them", async () => {
    // Dead-lettered by the ledger's consumer itself: not JSON.
    const poison = '{"id": "not-an-event", "type": "PaymentProcessed", ';
    await tap.publishRaw('payment.processed', poison);
    expect(await depth('ledger.events.dlq', 1)).to.equal(1);
    // A confirmation dead-lettered earlier (say, while a bug was live), waiting for a replay.
    const deposit = await user.client.money.deposit(user.accountId, { amount: 6, currency: 'USD' });
    expect(deposit.status).to.equal('pending');
    const stranded = deposit.id;
    const strandedEvent = aPaymentConfirmation(stranded, 600);
    await tap.sendToQueue('ledger.events.dlq', JSON.stringify(strandedEvent));

    const listed = await api.get('/admin/dead-letters/ledger', system.admin.token);
    expect(listed.status, listed.text).to.equal(200);
    expect(listed.body).to.deep.equal({
      queue: 'ledger',
      count: 2,
      data: [{ raw: poison }, { event: strandedEvent }],
    });
    const first = await api.get('/admin/dead-letters/ledger?limit=1', system.admin.token);
    expect(first.body.data).to.deep.equal([{ raw: poison }]);
    expect(first.body.count).to.equal(2);
    // Listing removes nothing.
    expect(await tap.depth('ledger.events.dlq')).to.equal(2);

    for (const [method, path] of [
      ['GET', '/admin/dead-letters/ledger'],
      ['POST', '/admin/dead-letters/ledger/replay'],
    ]) {
      const refused = await api.request(method as string, path as string, { token: user.token });
      expect(refused.status, path).to.equal(403);
      expect(refused.body.code, path).to.equal('ACCESS_DENIED');
      expect((await api.request(method as string, path as string)).status, path).to.equal(401);
    }
    expect(await tap.depth('ledger.events.dlq')).to.equal(2);
    expect((await user.client.transactions.get(stranded)).status).to.equal('pending');

    const replayed = await api.post('/admin/dead-letters/ledger/replay', { limit: 10 }, system.admin.token);
    expect(replayed.status, replayed.text).to.equal(200);
    expect(replayed.body).to.deep.equal({ queue: 'ledger', replayed: 2 });
    const settled = await eventually(
      () => user.client.transactions.get(stranded),
      (transaction) => transaction.status !== 'pending',
    );
    expect(settled.status).to.equal('completed');
    expect((await user.client.balances.get(user.accountId)).balance).to.equal(6);
    // The poison goes straight back: replaying it cannot make it valid.
    expect(await depth('ledger.events.dlq', 1)).to.equal(1);
    const again = await api.get('/admin/dead-letters/ledger', system.admin.token);
    expect(again.body).to.deep.equal({ queue: 'ledger', count: 1, data: [{ raw: poison }] });

    const logged = system
      .logs('ledger')
      .split('\n')
      .filter((line) => line.includes('"replayed dead letters"'))
      .map((line) => JSON.parse(line.slice(line.indexOf('{'))) as Record<string, unknown>);
    expect(logged.map(({ admin_id, queue, replayed }) => ({ admin_id, queue, replayed }))).to.deep.equal([
      { admin_id: system.admin.id, queue: 'ledger', replayed: 2 },
    ]);
  });

  it("sends each queue's dead letters to the service that consumes it, and no other", async () => {
    // Both currency and webhook-delivery consume AccountOpened: each dead-letters its own copy.
    const poison = `not an AccountOpened ${randomUUID()}`;
    await tap.publishRaw('account.opened', poison);
    expect(await depth('currency.events.dlq', 1)).to.equal(1);
    expect(await depth('webhook-delivery.events.dlq', 1)).to.equal(1);
    for (const queue of ['currency', 'webhook-delivery']) {
      const listed = await api.get(`/admin/dead-letters/${queue}`, system.admin.token);
      expect(listed.status, listed.text).to.equal(200);
      expect(listed.body).to.deep.equal({ queue, count: 1, data: [{ raw: poison }] });
      // Each service checks the token itself, currency included.
      expect((await api.get(`/admin/dead-letters/${queue}`, user.token)).status, queue).to.equal(403);
    }
    const replayed = await api.request('POST', '/admin/dead-letters/currency/replay', {
      token: system.admin.token,
    });
    expect(replayed.body).to.deep.equal({ queue: 'currency', replayed: 1 });
    expect(await tap.depth('webhook-delivery.events.dlq')).to.equal(1);

    // The sandbox's queue has no consumer behind the gateway, and a service serves only its own queue.
    for (const path of ['/admin/dead-letters/provider-sandbox', '/admin/dead-letters/nothing']) {
      expect((await api.get(path, system.admin.token)).status, path).to.equal(404);
    }
    const foreign = await rawApi(system.urls.ledger).get('/admin/dead-letters/currency', system.admin.token);
    expect(foreign.status).to.equal(404);
  });
});
