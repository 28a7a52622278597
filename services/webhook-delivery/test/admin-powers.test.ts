import { expect } from 'chai';
import Stripe from 'stripe';
import type { EventEnvelope } from '@payments/contracts';
import type { Consumer } from '@payments/service-kit';
import { eventually, useStarted } from '@payments/testkit';
import { completedDeposit, startDeliveryHarness, type TestUser } from './support/delivery-harness.js';

const stripe = new Stripe('sk_test_unused');

describe("what an admin may do to another user's webhook endpoint (HTTP, RabbitMQ, Postgres)", function () {
  this.timeout(60_000);
  let trail: Consumer;
  /** What reached the ledger's queue for the trail of admin actions. */
  const taken: EventEnvelope<'AdminActionTaken'>[] = [];

  const harness = useStarted(() => startDeliveryHarness({ transport: 'amqp' }), {
    beforeStop: () => trail?.stop(),
  });
  before(async () => {
    trail = await harness.bus.consume('ledger', {
      AdminActionTaken: async (event) => {
        taken.push(event);
      },
    });
  });

  const trailOf = (owner: TestUser, count: number) =>
    eventually(
      async () => taken.filter((event) => event.data.owner === owner.id).map((event) => event.data),
      (found) => found.length >= count,
      { timeoutMs: 10_000 },
    );

  it("refuses an admin the owner's secret and where events go or how they are signed (403); the secret still signs", async () => {
    const owner = harness.newUser();
    const admin = harness.newUser('admin');
    const endpoint = await harness.register(owner, '/guarded');
    const stored = await harness.db('webhook_endpoints').where({ id: endpoint.id }).first();

    const rotation = await harness.call('POST', `/webhook-endpoints/${endpoint.id}/rotate-secret`, {
      user: admin,
      body: { grace_period_seconds: 0 },
    });
    expect(rotation.status).to.equal(403);
    expect(rotation.headers.get('content-type')).to.match(/^application\/problem\+json/);
    expect(rotation.body.code).to.equal('ACCESS_DENIED');
    expect(rotation.body.detail).to.match(/may not rotate another user’s signing secret/);
    expect(JSON.stringify(rotation.body)).to.not.match(/whsec_/);
    for (const change of [
      { url: `${harness.receiver.url}/admins-own` },
      { events: ['user.updated'] },
      { api_version: '1.1' },
      { description: 'renamed by an admin' },
      { enabled: false, url: `${harness.receiver.url}/admins-own` },
    ]) {
      const refused = await harness.call('PUT', `/webhook-endpoints/${endpoint.id}`, {
        user: admin,
        body: change,
      });
      expect(refused.status, JSON.stringify(change)).to.equal(403);
      expect(refused.body.code).to.equal('ACCESS_DENIED');
      expect(refused.body.detail).to.match(/may only enable or disable another user’s webhook endpoint/);
    }
    const after = await harness.db('webhook_endpoints').where({ id: endpoint.id }).first();
    expect(after).to.deep.equal(stored);

    await harness.publish('TransactionCompleted', completedDeposit(owner.id));
    const [call] = await harness.receiver.waitForCalls('/guarded');
    const header = call!.headers['stripe-signature'] as string;
    expect(header.match(/v1=/g)).to.have.length(1);
    expect(() => stripe.webhooks.constructEvent(call!.body, header, endpoint.secret)).to.not.throw();
    expect(harness.receiver.calls('/admins-own')).to.deep.equal([]);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(taken.filter((event) => event.data.owner === owner.id)).to.deep.equal([]);
  });

  it("lets an admin disable, enable and delete another user's endpoint and redeliver to it, each in the trail: who, whose, why", async () => {
    const owner = harness.newUser();
    const admin = harness.newUser('admin');
    const endpoint = await harness.register(owner, '/moderated');
    await harness.publish('TransactionCompleted', completedDeposit(owner.id));
    await harness.receiver.waitForCalls('/moderated', (calls) => calls.length === 1);
    const [delivery] = (
      await harness.call('GET', `/webhook-endpoints/${endpoint.id}/deliveries`, { user: admin })
    ).body.data as { id: string; event_id: string }[];

    const disabled = await harness.call('PUT', `/webhook-endpoints/${endpoint.id}`, {
      user: admin,
      body: { enabled: false, reason: 'its receiver floods our support queue' },
    });
    expect(disabled.status, JSON.stringify(disabled.body)).to.equal(200);
    expect(disabled.body.enabled).to.equal(false);
    const enabled = await harness.call('PUT', `/webhook-endpoints/${endpoint.id}`, {
      user: admin,
      body: { enabled: true },
    });
    expect(enabled.body.enabled).to.equal(true);
    const redelivered = await harness.call(
      'POST',
      `/webhook-endpoints/${endpoint.id}/deliveries/${delivery!.id}/redeliver`,
      { user: admin, body: { reason: 'the owner asked, ticket 41' } },
    );
    expect(redelivered.status).to.equal(202);
    const deleted = await harness.call('DELETE', `/webhook-endpoints/${endpoint.id}`, {
      user: admin,
      body: { reason: 'owner left, ticket 42' },
    });
    expect(deleted.status).to.equal(204);

    const subject = `webhook_endpoint:${endpoint.id}`;
    const common = { actor: admin.id, owner: owner.id };
    expect(await trailOf(owner, 4)).to.deep.equal([
      {
        ...common,
        action: 'webhook_endpoint.disable',
        subject,
        reason: 'its receiver floods our support queue',
        detail: { enabled: { from: true, to: false } },
      },
      {
        ...common,
        action: 'webhook_endpoint.enable',
        subject,
        reason: null,
        detail: { enabled: { from: false, to: true } },
      },
      {
        ...common,
        action: 'webhook_delivery.redeliver',
        subject: `webhook_delivery:${delivery!.id}`,
        reason: 'the owner asked, ticket 41',
        detail: {
          endpoint_id: endpoint.id,
          event_id: delivery!.event_id,
          event_type: 'transaction.completed',
        },
      },
      {
        ...common,
        action: 'webhook_endpoint.delete',
        subject,
        reason: 'owner left, ticket 42',
        detail: { url: `${harness.receiver.url}/moderated`, events: ['transaction.completed'] },
      },
    ]);
  });

  it("records nothing of an owner's changes to their own endpoint, an admin's included", async () => {
    const admin = harness.newUser('admin');
    const endpoint = await harness.register(admin, '/admins-own-endpoint');
    const rotated = await harness.call('POST', `/webhook-endpoints/${endpoint.id}/rotate-secret`, {
      user: admin,
    });
    expect(rotated.status).to.equal(200);
    expect(rotated.body.secret).to.match(/^whsec_/);
    const changed = await harness.call('PUT', `/webhook-endpoints/${endpoint.id}`, {
      user: admin,
      body: { enabled: false, description: 'mine' },
    });
    expect(changed.status).to.equal(200);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(taken.filter((event) => event.data.owner === admin.id)).to.deep.equal([]);
  });
});

describe("an admin's action the trail cannot take is not done (HTTP, RabbitMQ, Postgres)", function () {
  this.timeout(60_000);

  const harness = useStarted(() => startDeliveryHarness({ transport: 'amqp' }));

  it('answers 503 and leaves the endpoint and its deliveries as they were while no queue takes the trail', async () => {
    const owner = harness.newUser();
    const admin = harness.newUser('admin');
    const endpoint = await harness.register(owner, '/unrecorded');
    await harness.publish('TransactionCompleted', completedDeposit(owner.id));
    await harness.receiver.waitForCalls('/unrecorded', (calls) => calls.length === 1);
    // The receiver has the call before the sender records its answer: the delivery is read once it has.
    const [delivery] = await eventually(
      async () =>
        (await harness.call('GET', `/webhook-endpoints/${endpoint.id}/deliveries`, { user: admin })).body
          .data as { id: string; status: string; updated_at: string }[],
      (deliveries) => deliveries[0]?.status === 'succeeded',
    );
    // The ledger's queue is where the trail lands: without it the broker refuses the AdminActionTaken.
    await harness.broker!.deleteQueue('ledger');

    const disabled = await harness.call('PUT', `/webhook-endpoints/${endpoint.id}`, {
      user: admin,
      body: { enabled: false },
    });
    expect(disabled.status).to.equal(503);
    expect(disabled.body.code).to.equal('SERVICE_UNAVAILABLE');
    expect(disabled.body.detail).to.match(/trail of admin actions cannot record this action now/);
    const redelivered = await harness.call(
      'POST',
      `/webhook-endpoints/${endpoint.id}/deliveries/${delivery!.id}/redeliver`,
      { user: admin },
    );
    expect(redelivered.status).to.equal(503);
    const deleted = await harness.call('DELETE', `/webhook-endpoints/${endpoint.id}`, { user: admin });
    expect(deleted.status).to.equal(503);

    const shown = await harness.call('GET', `/webhook-endpoints/${endpoint.id}`, { user: owner });
    expect(shown.status).to.equal(200);
    expect(shown.body.enabled).to.equal(true);
    const unchanged = await harness.call(
      'GET',
      `/webhook-endpoints/${endpoint.id}/deliveries/${delivery!.id}`,
      { user: owner },
    );
    expect(unchanged.body).to.include({ status: 'succeeded', updated_at: delivery!.updated_at });
    // The owner's own changes need no trail.
    const own = await harness.call('PUT', `/webhook-endpoints/${endpoint.id}`, {
      user: owner,
      body: { enabled: false },
    });
    expect(own.status).to.equal(200);
  });
});
