import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import Stripe from 'stripe';
import { createEvent } from '@payments/contracts';
import { createLogger, loadConfig } from '@payments/service-kit';
import { eventually, useStarted } from '@payments/testkit';
import { createDeliveryRepository } from '../src/data/delivery-repository.js';
import { startWebhookDelivery, WebhookDeliveryConfigSchema } from '../src/index.js';
import { completedDeposit, startDeliveryHarness } from './support/delivery-harness.js';

const stripe = new Stripe('sk_test_unused');

describe('webhook deliveries', function () {
  this.timeout(40_000);

  const harness = useStarted(() => startDeliveryHarness());

  it('delivers a subscribed event once, signed so that the stripe package verifies it', async () => {
    const user = harness.newUser();
    const endpoint = await harness.register(user, '/signed');
    await harness.register(harness.newUser(), '/someone-else');
    const event = await harness.publish('TransactionCompleted', completedDeposit(user.id));
    const [call] = await harness.receiver.waitForCalls('/signed');
    expect(call, 'delivered').to.not.equal(undefined);
    const verified = stripe.webhooks.constructEvent(
      call!.body,
      call!.headers['stripe-signature'] as string,
      endpoint.secret,
    ) as unknown as Record<string, unknown>;
    expect(verified).to.include({
      id: event.id,
      type: 'transaction.completed',
      object: 'event',
      api_version: '1.0',
    });
    const object = (verified.data as { object: Record<string, unknown> }).object;
    expect(object).to.include({
      id: (event.data as { transaction_id: string }).transaction_id,
      amount: 12.34,
    });
    expect(object, 'v1.0 rendering').to.not.have.property('fee');
    expect(() =>
      stripe.webhooks.constructEvent(call!.body, call!.headers['stripe-signature'] as string, 'whsec_wrong'),
    ).to.throw();
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(harness.receiver.calls('/signed')).to.have.length(1);
    expect(harness.receiver.calls('/someone-else')).to.have.length(0);
    const internal = harness.owners.requests.find((r) => r.path.includes(String(object.id)));
    expect(internal?.authorization, 'internal calls carry the service credential').to.match(/^Bearer /);
    // The ledger is told whose endpoint the payload is for: it adds that owner's metadata and reference alone.
    expect(internal?.path).to.match(new RegExp(`\\?for_user=${user.id}$`));
  });

  it("lets an admin read another user's delivery log and each delivery's attempts; another user gets 403", async () => {
    const owner = harness.newUser();
    const admin = harness.newUser('admin');
    const endpoint = await harness.register(owner, '/watched');
    const event = await harness.publish('TransactionCompleted', completedDeposit(owner.id));
    const log = await eventually(
      () => harness.call('GET', `/webhook-endpoints/${endpoint.id}/deliveries`, { user: admin }),
      (response) => response.body.data?.[0]?.status === 'succeeded',
      { timeoutMs: 10_000 },
    );
    expect(log.status).to.equal(200);
    expect(log.body.data).to.have.length(1);
    expect(log.body.data[0]).to.include({ event_id: event.id, status: 'succeeded', attempts: 1 });
    const delivery = await harness.call(
      'GET',
      `/webhook-endpoints/${endpoint.id}/deliveries/${log.body.data[0].id}`,
      { user: admin },
    );
    expect(delivery.status).to.equal(200);
    expect(delivery.body.attempt_log).to.have.length(1);
    const refused = await harness.call('GET', `/webhook-endpoints/${endpoint.id}/deliveries`, {
      user: harness.newUser(),
    });
    expect(refused.status).to.equal(403);
  });

  it('sends nothing for event types the endpoint did not subscribe to, or when disabled', async () => {
    const user = harness.newUser();
    const endpoint = await harness.register(user, '/picky', ['transaction.failed']);
    // Disabled before anything is published: an event published just before an endpoint exists may still be fanned
    // out to it (the fan-out gathers for 10 ms), which is not what this test is about.
    const disabled = await harness.register(user, '/disabled', ['transaction.completed']);
    await harness.call('PUT', `/webhook-endpoints/${disabled.id}`, { user, body: { enabled: false } });
    await harness.publish('TransactionCompleted', completedDeposit(user.id));
    await harness.publish('TransactionFailed', { ...completedDeposit(user.id), failure_reason: 'declined' });
    await harness.receiver.waitForCalls('/picky');
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(harness.receiver.calls('/picky')).to.have.length(1);
    expect(JSON.parse(harness.receiver.calls('/picky')[0]!.body).type).to.equal('transaction.failed');
    expect(harness.receiver.calls('/disabled')).to.have.length(0);
    expect(endpoint.id).to.be.a('string');
  });

  it('makes one delivery of an event published twice (inbox)', async () => {
    const user = harness.newUser();
    const endpoint = await harness.register(user, '/dedup');
    const data = completedDeposit(user.id);
    const first = await harness.publish('TransactionCompleted', data);
    await harness.publish('TransactionCompleted', data, first.id);
    await harness.receiver.waitForCalls('/dedup');
    await new Promise((resolve) => setTimeout(resolve, 400));
    expect(harness.receiver.calls('/dedup')).to.have.length(1);
    const log = await harness.call('GET', `/webhook-endpoints/${endpoint.id}/deliveries`, { user });
    expect(log.body.pagination.total).to.equal(1);
  });

  it('retries with backoff: a receiver failing three times gets the event on the fourth attempt', async () => {
    const user = harness.newUser();
    const endpoint = await harness.register(user, '/flaky');
    harness.receiver.on('/flaky', (n) =>
      n <= 3 ? { status: 500, body: 'x'.repeat(5000) } : { status: 204 },
    );
    await harness.publish('TransactionCompleted', completedDeposit(user.id));
    await harness.receiver.waitForCalls('/flaky', (calls) => calls.length >= 4);
    const calls = harness.receiver.calls('/flaky');
    expect(calls).to.have.length(4);
    expect(calls.map((c) => c.body)).to.satisfy((bodies: string[]) => bodies.every((b) => b === bodies[0]));
    const gaps = calls.slice(1).map((call, i) => call.at - calls[i]!.at);
    // base 40 ms, equal jitter: at least 20, 40, 80 ms.
    expect(gaps[0]).to.be.at.least(15);
    expect(gaps[2]).to.be.at.least(75);

    const deliveries = await eventually(
      () => harness.call('GET', `/webhook-endpoints/${endpoint.id}/deliveries`, { user }),
      (r) => r.body.data[0]?.status === 'succeeded',
    );
    const [delivery] = deliveries.body.data;
    expect(delivery).to.include({
      status: 'succeeded',
      attempts: 4,
      last_status_code: 204,
      next_attempt_at: null,
    });
    const detail = await harness.call('GET', `/webhook-endpoints/${endpoint.id}/deliveries/${delivery.id}`, {
      user,
    });
    expect(detail.body.attempt_log.map((a: { status_code: number }) => a.status_code)).to.deep.equal([
      500, 500, 500, 204,
    ]);
    const [firstAttempt] = detail.body.attempt_log;
    expect(firstAttempt.response_body_prefix).to.have.length(256);
    expect(firstAttempt.next_attempt_at).to.be.a('string');
    expect(firstAttempt.latency_ms).to.be.a('number');
    const stored = (await harness.db('webhook_delivery_attempts').max({
      longest: harness.db.raw('length(response_body_prefix)'),
    })) as { longest: number }[];
    expect(Number(stored[0]?.longest)).to.be.at.most(256);
  });

  it('gives up after the retry window and marks the delivery failed; a manual redelivery sends it again', async () => {
    const shortWindow = await startDeliveryHarness({ env: { DELIVERY_RETRY_WINDOW_SECONDS: '1' } });
    try {
      const user = shortWindow.newUser();
      const endpoint = await shortWindow.register(user, '/down');
      let down = true;
      shortWindow.receiver.on('/down', () => (down ? { status: 503 } : { status: 200 }));
      await shortWindow.publish('TransactionCompleted', completedDeposit(user.id));
      const failed = await eventually(
        () => shortWindow.call('GET', `/webhook-endpoints/${endpoint.id}/deliveries?status=failed`, { user }),
        (r) => r.body.data.length === 1,
        { timeoutMs: 10_000 },
      );
      const [delivery] = failed.body.data;
      expect(delivery).to.include({ status: 'failed', last_status_code: 503, next_attempt_at: null });
      expect(delivery.attempts).to.be.at.least(2);
      const metrics = await shortWindow.call('GET', '/metrics');
      expect(metrics.body).to.match(/webhook_deliveries_failed_total\{[^}]*\} 1/);
      expect(metrics.body).to.match(/webhook_delivery_attempts_total\{[^}]*result="failure"[^}]*\} \d+/);
      expect(metrics.body).to.match(/webhook_delivery_queue_depth\{[^}]*\} 0/);
      expect((await fetch(`${shortWindow.url}/metrics`)).status, '/metrics needs the service token').to.equal(
        401,
      );

      down = false;
      const before = shortWindow.receiver.calls('/down').length;
      const redelivered = await shortWindow.call(
        'POST',
        `/webhook-endpoints/${endpoint.id}/deliveries/${delivery.id}/redeliver`,
        { user },
      );
      expect(redelivered.status).to.equal(202);
      await eventually(
        () =>
          shortWindow.call('GET', `/webhook-endpoints/${endpoint.id}/deliveries/${delivery.id}`, { user }),
        (r) => r.body.status === 'succeeded',
      );
      expect(shortWindow.receiver.calls('/down').length).to.equal(before + 1);
    } finally {
      await shortWindow.stop();
    }
  });

  it('keeps a hanging endpoint from delaying another endpoint (per-endpoint limit, timeout)', async () => {
    const slowUser = harness.newUser();
    const fastUser = harness.newUser();
    await harness.register(slowUser, '/hang');
    await harness.register(fastUser, '/fast');
    harness.receiver.on('/hang', () => 'hang');
    for (let i = 0; i < 30; i += 1)
      await harness.publish('TransactionCompleted', completedDeposit(slowUser.id));
    await harness.receiver.waitForCalls('/hang', (calls) => calls.length >= 1);
    const sent = Date.now();
    await harness.publish('TransactionCompleted', completedDeposit(fastUser.id));
    await harness.receiver.waitForCalls('/fast', (calls) => calls.length === 1, { timeoutMs: 5000 });
    expect(Date.now() - sent, 'the fast endpoint waited on the hanging one').to.be.below(1500);
    // At most DELIVERY_ENDPOINT_CONCURRENCY (4) calls are held open at the hanging endpoint.
    expect(harness.receiver.calls('/hang').length).to.be.at.most(4);
  });

  it('retries with backoff while the owner of the object cannot render it, then delivers it', async () => {
    const user = harness.newUser();
    const endpoint = await harness.register(user, '/owner-down');
    // The endpoint renders at 1.0; the events API renders the same event at 1.1 on its own.
    harness.owners.failNext(2, '1.0');
    await harness.publish('TransactionCompleted', completedDeposit(user.id));
    const [call] = await harness.receiver.waitForCalls('/owner-down', (calls) => calls.length === 1);
    expect(JSON.parse(call!.body)).to.have.nested.property('data.object.amount', 12.34);
    const log = await harness.call('GET', `/webhook-endpoints/${endpoint.id}/deliveries`, { user });
    // The receiver has the call before the delivery records the answer to it.
    const detail = await eventually(
      () =>
        harness.call('GET', `/webhook-endpoints/${endpoint.id}/deliveries/${log.body.data[0].id}`, { user }),
      (answer) => answer.body.attempt_log.length === 3,
      { timeoutMs: 5000 },
    );
    expect(detail.body.attempt_log.map((a: { error: string | null }) => a.error)).to.deep.equal([
      'not sent: the event could not be rendered yet',
      'not sent: the event could not be rendered yet',
      null,
    ]);
  });

  it('signs with both secrets during a rotation grace period, only the new one after', async () => {
    const user = harness.newUser();
    const endpoint = await harness.register(user, '/rotating');
    const rotated = await harness.call('POST', `/webhook-endpoints/${endpoint.id}/rotate-secret`, { user });
    await harness.publish('TransactionCompleted', completedDeposit(user.id));
    const [call] = await harness.receiver.waitForCalls('/rotating', (c) => c.length === 1);
    const header = call!.headers['stripe-signature'] as string;
    expect(header.match(/v1=/g)).to.have.length(2);
    for (const secret of [endpoint.secret, rotated.body.secret]) {
      expect(() => stripe.webhooks.constructEvent(call!.body, header, secret)).to.not.throw();
    }
    await harness.call('POST', `/webhook-endpoints/${endpoint.id}/rotate-secret`, {
      user,
      body: { grace_period_seconds: 0 },
    });
    await harness.publish('TransactionCompleted', completedDeposit(user.id));
    const calls = await harness.receiver.waitForCalls('/rotating', (c) => c.length === 2);
    expect((calls[1]!.headers['stripe-signature'] as string).match(/v1=/g)).to.have.length(1);
  });

  it('renders at the endpoint API version and delivers account.created and user.updated', async () => {
    const user = harness.newUser();
    const created = await harness.call('POST', '/webhook-endpoints', {
      user,
      body: {
        url: `${harness.receiver.url}/v11`,
        events: ['transaction.completed', 'account.created', 'user.updated'],
      },
      headers: { 'x-api-version': '1.1' },
    });
    expect(created.status).to.equal(201);
    await harness.publish('TransactionCompleted', completedDeposit(user.id));
    await harness.publish('AccountOpened', {
      account_id: crypto.randomUUID(),
      user_id: user.id,
      currency: 'USD',
    });
    await harness.publish('UserUpdated', {
      user_id: user.id,
      username: 'someone',
      email: 'someone@example.com',
    });
    const calls = await harness.receiver.waitForCalls('/v11', (c) => c.length === 3);
    const bodies = calls.map(
      (c) =>
        JSON.parse(c.body) as {
          type: string;
          api_version: string;
          data: { object: Record<string, unknown> };
        },
    );
    const byType = Object.fromEntries(bodies.map((b) => [b.type, b]));
    expect(byType['transaction.completed']!.data.object).to.have.property('fee', 0);
    expect(byType['account.created']!.data.object).to.have.property('balance', 0);
    expect(byType['user.updated']!.data.object).to.include({ username: 'someone', role: 'user' });
    expect(bodies.every((b) => b.api_version === '1.1')).to.equal(true);
  });
});

describe('webhook deliveries with a poll interval of a minute', function () {
  this.timeout(20_000);

  it('sends a new delivery at once and each retry when it is due, without waiting for a poll', async () => {
    const harness = await startDeliveryHarness({
      env: {
        DELIVERY_POLL_INTERVAL_MS: '60000',
        DELIVERY_BACKOFF_BASE_MS: '400',
        DELIVERY_BACKOFF_MAX_MS: '400',
      },
    });
    try {
      const user = harness.newUser();
      await harness.register(user, '/twice-down');
      harness.receiver.on('/twice-down', (n) => (n <= 2 ? { status: 503 } : { status: 204 }));
      const published = Date.now();
      await harness.publish('TransactionCompleted', completedDeposit(user.id));
      const calls = await harness.receiver.waitForCalls('/twice-down', (list) => list.length >= 3);
      expect(calls).to.have.length(3);
      expect(calls[0]!.at - published).to.be.below(2_000);
      // Each retry waits 200–400 ms (400 ms with equal jitter), not for the next poll a minute away.
      const gaps = calls.slice(1).map((call, i) => call.at - calls[i]!.at);
      for (const gap of gaps) expect(gap).to.be.within(150, 2_000);
    } finally {
      await harness.stop();
    }
  });
});

describe('delivery log retention', function () {
  this.timeout(30_000);

  it('prunes finished deliveries past the retention, never pending ones', async () => {
    const harness = await startDeliveryHarness();
    try {
      const user = harness.newUser();
      const endpoint = await harness.register(user, '/kept');
      harness.receiver.on('/kept', (n) => (n <= 2 ? { status: 200 } : { status: 500 }));
      for (let i = 0; i < 3; i += 1) await harness.publish('TransactionCompleted', completedDeposit(user.id));
      await harness.receiver.waitForCalls('/kept', (calls) => calls.length >= 3);
      await eventually(
        () => harness.db('webhook_deliveries').where({ endpoint_id: endpoint.id, status: 'succeeded' }),
        (rows) => rows.length === 2,
      );
      await harness.call('PUT', `/webhook-endpoints/${endpoint.id}`, { user, body: { enabled: false } });
      await harness.db('webhook_deliveries').update({ updated_at: new Date(Date.now() - 40 * 86_400_000) });
      const removed = await createDeliveryRepository(harness.db).pruneFinished(
        new Date(Date.now() - 30 * 86_400_000),
        1000,
      );
      expect(removed).to.equal(2);
      const left = await harness.db('webhook_deliveries').where({ endpoint_id: endpoint.id });
      expect(left.map((row: { status: string }) => row.status)).to.deep.equal(['pending']);
    } finally {
      await harness.stop();
    }
  });
});

describe('DNS rebinding', function () {
  this.timeout(30_000);

  it('checks the addresses again at delivery time and refuses a name that now points inside', async () => {
    let answer = '93.184.215.14';
    const harness = await startDeliveryHarness({
      env: { WEBHOOK_ALLOW_PRIVATE_URLS: 'false', DELIVERY_RETRY_WINDOW_SECONDS: '60' },
      resolve: async () => [{ address: answer, family: 4 }],
    });
    try {
      const user = harness.newUser();
      const created = await harness.call('POST', '/webhook-endpoints', {
        user,
        body: {
          url: `http://rebind.example:${harness.receiver.port}/inside`,
          events: ['transaction.completed'],
        },
      });
      expect(created.status).to.equal(201);
      answer = '127.0.0.1';
      await harness.publish('TransactionCompleted', completedDeposit(user.id));
      const deliveries = await eventually(
        () => harness.call('GET', `/webhook-endpoints/${created.body.id}/deliveries`, { user }),
        (r) => (r.body.data[0]?.attempts ?? 0) >= 1 && r.body.data[0]?.last_error !== null,
      );
      expect(deliveries.body.data[0].last_error).to.match(/refused/);
      expect(harness.receiver.calls('/inside')).to.have.length(0);
    } finally {
      await harness.stop();
    }
  });
});

describe('webhook deliveries with two processes sharing the work', function () {
  this.timeout(60_000);

  it('sends each of many deliveries exactly once when nothing fails, within the per-endpoint limit', async () => {
    const harness = await startDeliveryHarness({ env: { DELIVERY_ENDPOINT_CONCURRENCY: '3' } });
    const second = await startWebhookDelivery(loadConfig(WebhookDeliveryConfigSchema, harness.env), {
      bus: harness.bus,
      logger: createLogger('second', 'silent'),
    });
    try {
      const user = harness.newUser();
      await harness.register(user, '/shared');
      harness.receiver.on('/shared', () => ({ status: 200, delayMs: 30 }));
      const events = [];
      for (let i = 0; i < 60; i += 1) {
        events.push(await harness.publish('TransactionCompleted', completedDeposit(user.id)));
      }
      const calls = await harness.receiver.waitForCalls('/shared', (found) => found.length >= 60, {
        timeoutMs: 20_000,
      });
      await new Promise((resolve) => setTimeout(resolve, 500));
      const ids = harness.receiver
        .calls('/shared')
        .map((call) => (JSON.parse(call.body) as { id: string }).id);
      expect(ids).to.have.length(60);
      expect(new Set(ids).size).to.equal(60);
      expect(calls.length).to.equal(60);
      expect(harness.receiver.mostOpen('/shared')).to.be.within(2, 3);
    } finally {
      await second.stop();
      await harness.stop();
    }
  });

  it('never lets two claims at once hold more than the per-endpoint limit between them', async () => {
    // Deliveries whose fan-out commits late sort before those already there. A claim that runs beside another's
    // uncommitted claim, and sees those late deliveries, would take them too: twice the limit between the two.
    const harness = await startDeliveryHarness({ noService: true });
    try {
      const userId = randomUUID();
      const endpointId = randomUUID();
      await harness.db('webhook_endpoints').insert({
        id: endpointId,
        user_id: userId,
        url: 'http://127.0.0.1:9/unused',
        events: ['transaction.completed'],
        api_version: '1.0',
        secret: 'whsec_unused',
      });
      const fanOut = (knex: typeof harness.db, count: number) =>
        createDeliveryRepository(knex).fanOut(
          'claims-test',
          Array.from({ length: count }, () => ({
            event: createEvent('TransactionCompleted', completedDeposit(userId), {
              id: randomUUID(),
              correlationId: 'claims-test',
            }),
            userId,
            eventType: 'transaction.completed' as const,
          })),
          new Date(Date.now() + 3_600_000),
        );
      const claim = { limit: 10, perEndpoint: 3, leaseMs: 60_000 };
      const late = await harness.db.transaction();
      await fanOut(late, 3);
      await fanOut(harness.db, 3);
      // Begun after both fan-outs, so every delivery is due by its clock.
      const first = await harness.db.transaction();
      try {
        const firstClaimed = await createDeliveryRepository(first).claimDue(claim);
        await late.commit();
        const second = createDeliveryRepository(harness.db).claimDue(claim);
        await new Promise((resolve) => setTimeout(resolve, 200));
        await first.commit();
        expect(firstClaimed, 'the first claim').to.have.length(3);
        expect(await second, 'the second claim').to.have.length(0);
      } finally {
        if (!late.isCompleted()) await late.rollback();
        if (!first.isCompleted()) await first.rollback();
      }
      const [held] = (await harness
        .db('webhook_deliveries')
        .where({ endpoint_id: endpointId })
        .andWhere('locked_until', '>', harness.db.fn.now())
        .count({ n: '*' })) as { n: string }[];
      expect(Number(held!.n)).to.equal(3);
    } finally {
      await harness.stop();
    }
  });

  it("removes a deleted user's endpoints and their pending deliveries", async () => {
    const harness = await startDeliveryHarness();
    try {
      const user = harness.newUser();
      const endpoint = await harness.register(user, '/gone');
      harness.receiver.on('/gone', () => ({ status: 500 }));
      await harness.publish('TransactionCompleted', completedDeposit(user.id));
      await harness.receiver.waitForCalls('/gone', (calls) => calls.length >= 1);
      await harness.publish('UserDeleted', { user_id: user.id });
      await eventually(
        () => harness.db('webhook_endpoints').where({ id: endpoint.id }).first(),
        (row) => row === undefined,
      );
      expect(await harness.db('webhook_deliveries').where({ endpoint_id: endpoint.id })).to.deep.equal([]);
    } finally {
      await harness.stop();
    }
  });
});

describe('webhook deliveries from a burst of events (fanned out in groups)', function () {
  this.timeout(60_000);

  it('makes one delivery per subscribed endpoint and event, and writes nothing for events nobody wants', async () => {
    const harness = await startDeliveryHarness({ transport: 'amqp' });
    try {
      const subscriber = harness.newUser();
      const both = await harness.register(subscriber, '/both', [
        'transaction.completed',
        'transaction.failed',
      ]);
      const failedOnly = await harness.register(subscriber, '/failed-only', ['transaction.failed']);
      const unsubscribed = harness.newUser();
      const disabledOwner = harness.newUser();
      const disabled = await harness.register(disabledOwner, '/disabled');
      await harness.call('PUT', `/webhook-endpoints/${disabled.id}`, {
        user: disabledOwner,
        body: { enabled: false },
      });

      const completed = (userId: string) => harness.publish('TransactionCompleted', completedDeposit(userId));
      const failed = (userId: string) =>
        harness.publish('TransactionFailed', { ...completedDeposit(userId), failure_reason: 'declined' });
      // Published all at once, so the consumer takes them in bursts; some twice (the inbox drops the copy).
      const wanted = await Promise.all([
        ...Array.from({ length: 15 }, () => completed(subscriber.id)),
        ...Array.from({ length: 15 }, () => failed(subscriber.id)),
      ]);
      const unwanted = await Promise.all([
        ...Array.from({ length: 15 }, () => completed(unsubscribed.id)),
        ...Array.from({ length: 15 }, () => completed(disabledOwner.id)),
      ]);
      await Promise.all(
        wanted.slice(10, 20).map((event) => harness.publish(event.type, event.data as never, event.id)),
      );

      const count = async (endpointId: string) =>
        Number(
          (
            (await harness.db('webhook_deliveries').where({ endpoint_id: endpointId }).count({ n: '*' })) as {
              n: string;
            }[]
          )[0]!.n,
        );
      await eventually(
        async () => [await count(both.id), await count(failedOnly.id)],
        ([all, failures]) => all === 30 && failures === 15,
        { timeoutMs: 15_000 },
      );
      // Everything published has been consumed once the queue is empty and nothing is in hand.
      await new Promise((resolve) => setTimeout(resolve, 500));
      expect([await count(both.id), await count(failedOnly.id), await count(disabled.id)]).to.deep.equal([
        30, 15, 0,
      ]);
      const deliveries = await harness
        .db('webhook_deliveries')
        .whereIn('endpoint_id', [both.id, failedOnly.id]);
      const pairs = new Set(
        deliveries.map(
          (row: { endpoint_id: string; event_id: string }) => `${row.endpoint_id}:${row.event_id}`,
        ),
      );
      expect(pairs.size, 'one delivery per endpoint and event').to.equal(45);
      expect(
        new Set(deliveries.map((row: { event_id: string }) => row.event_id)),
        'every wanted event',
      ).to.deep.equal(new Set(wanted.map((event) => event.id)));
      const inbox = await harness.db('processed_events').whereIn(
        'event_id',
        [...wanted, ...unwanted].map((event) => event.id),
      );
      expect(inbox.map((row: { event_id: string }) => row.event_id).sort()).to.deep.equal(
        wanted.map((event) => event.id).sort(),
      );
    } finally {
      await harness.stop();
    }
  });
});
