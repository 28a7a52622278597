import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { eventually, useStarted } from '@payments/testkit';
import { createEventRepository } from '../src/data/event-repository.js';
import { EVENT_RETENTION_MS } from '../src/delivery/log-retention.js';
import { completedDeposit, startDeliveryHarness, type TestUser } from './support/delivery-harness.js';

interface EventBody {
  id: string;
  type: string;
  api_version: string;
  created: number;
  data: { object: Record<string, unknown> };
}

describe('the events API', function () {
  this.timeout(40_000);

  const harness = useStarted(() => startDeliveryHarness());

  const listed = async (user: TestUser, query = '') => {
    const response = await harness.call('GET', `/events${query}`, { user });
    expect(response.status, JSON.stringify(response.body)).to.equal(200);
    return response.body as { data: EventBody[]; has_more: boolean };
  };

  /** Sets an event's time, as if it had happened then. */
  const dated = (id: string, at: Date) =>
    harness.db('webhook_events').where({ id }).update({ created_at: at });

  it('keeps every event of a user without endpoints, once however often the bus brings it', async () => {
    const user = harness.newUser();
    const first = await harness.publish('TransactionCompleted', completedDeposit(user.id));
    await harness.publish('TransactionCompleted', first.data as never, first.id);
    const second = await harness.publish('AccountOpened', {
      account_id: randomUUID(),
      user_id: user.id,
      currency: 'USD',
    });
    const page = await eventually(
      () => listed(user),
      (body) => body.data.length >= 2,
      { timeoutMs: 10_000 },
    );
    await new Promise((resolve) => setTimeout(resolve, 200));
    const again = await listed(user);
    expect(again.data.map((e) => e.id)).to.have.members([first.id, second.id]);
    expect(again.data).to.have.length(2);
    expect(page.has_more).to.equal(false);
    const types = Object.fromEntries(again.data.map((e) => [e.id, e.type]));
    expect(types).to.deep.equal({ [first.id]: 'transaction.completed', [second.id]: 'account.created' });
    const one = await harness.call('GET', `/events/${first.id}`, { user });
    expect(one.status).to.equal(200);
    expect(one.body).to.include({
      id: first.id,
      object: 'event',
      type: 'transaction.completed',
      api_version: '1.1',
    });
    expect(one.body.data.object).to.include({
      id: (first.data as { transaction_id: string }).transaction_id,
    });
  });

  it('renders an event when it arrives, not when it is read', async () => {
    const user = harness.newUser();
    const event = await harness.publish('TransactionCompleted', completedDeposit(user.id));
    const objectId = (event.data as { transaction_id: string }).transaction_id;
    const row = await eventually(
      () => harness.db('webhook_events').where({ id: event.id }).first(),
      (found) => typeof found?.payload === 'string',
      { timeoutMs: 10_000 },
    );
    expect(harness.owners.requests.filter((r) => r.path.includes(objectId))).to.have.length(1);
    const read = await harness.call('GET', `/events/${event.id}`, { user });
    expect(JSON.stringify(read.body)).to.equal(row.payload);
    expect(
      harness.owners.requests.filter((r) => r.path.includes(objectId)),
      'no render on read',
    ).to.have.length(1);
  });

  it('answers with the very body its webhook carried, at the same version', async () => {
    const user = harness.newUser();
    const created = await harness.call('POST', '/webhook-endpoints', {
      user,
      headers: { 'x-api-version': '1.1' },
      body: { url: `${harness.receiver.url}/same-body`, events: ['transaction.completed'] },
    });
    expect(created.status).to.equal(201);
    const event = await harness.publish('TransactionCompleted', completedDeposit(user.id));
    const [call] = await harness.receiver.waitForCalls('/same-body');
    const read = await harness.call('GET', `/events/${event.id}`, { user });
    expect(read.status).to.equal(200);
    // The same bytes, though the stub renders the object with the time it is asked at: one render, kept, served both.
    expect(JSON.stringify(read.body)).to.equal(call?.body);
    const listedBody = (await listed(user)).data.find((e) => e.id === event.id);
    expect(listedBody).to.deep.equal(JSON.parse(call?.body as string));
  });

  it("answers another user's event as one that does not exist, and never lists it", async () => {
    const owner = harness.newUser();
    const stranger = harness.newUser();
    const admin = harness.newUser('admin');
    const event = await harness.publish('TransactionCompleted', completedDeposit(owner.id));
    await eventually(
      () => listed(owner),
      (body) => body.data.length === 1,
    );
    for (const other of [stranger, admin]) {
      const theirs = await harness.call('GET', `/events/${event.id}`, { user: other });
      const nothing = await harness.call('GET', `/events/${randomUUID()}`, { user: other });
      expect(theirs.status).to.equal(404);
      expect(theirs.body.detail).to.equal(nothing.body.detail);
      expect((await listed(other)).data).to.deep.equal([]);
      const cursor = await harness.call('GET', `/events?starting_after=${event.id}`, { user: other });
      expect(cursor.status).to.equal(400);
      expect(cursor.body.errors[0].field).to.equal('starting_after');
    }
    expect((await harness.call('GET', '/events/not-an-id', { user: owner })).status).to.equal(404);
    expect((await harness.call('GET', '/events')).status).to.equal(401);
  });

  it('filters by type and by created, and pages by cursor newest first', async () => {
    const user = harness.newUser();
    const ids: string[] = [];
    for (let i = 0; i < 5; i += 1) {
      ids.push((await harness.publish('TransactionCompleted', completedDeposit(user.id))).id);
    }
    const opened = await harness.publish('AccountOpened', {
      account_id: randomUUID(),
      user_id: user.id,
      currency: 'EUR',
    });
    await eventually(
      () => listed(user),
      (body) => body.data.length === 6,
    );
    // One event a minute, oldest first: 12:00, 12:01, ... 12:05 (the account's).
    const base = Date.parse('2026-11-20T12:00:00Z');
    for (const [i, id] of [...ids, opened.id].entries()) await dated(id, new Date(base + i * 60_000));
    const seconds = (minute: number) => base / 1000 + minute * 60;

    const byType = await listed(user, '?type=account.created');
    expect(byType.data.map((e) => e.id)).to.deep.equal([opened.id]);
    const window = await listed(user, `?created[gte]=${seconds(1)}&created[lte]=${seconds(3)}`);
    expect(window.data.map((e) => e.id)).to.deep.equal([ids[3], ids[2], ids[1]]);
    const open = await listed(user, `?created[gt]=${seconds(1)}&created[lt]=${seconds(3)}`);
    expect(open.data.map((e) => e.id)).to.deep.equal([ids[2]]);

    const first = await listed(user, '?limit=4');
    expect(first.data.map((e) => e.id)).to.deep.equal([opened.id, ids[4], ids[3], ids[2]]);
    expect(first.has_more).to.equal(true);
    const next = await listed(user, `?limit=4&starting_after=${ids[2]}`);
    expect(next.data.map((e) => e.id)).to.deep.equal([ids[1], ids[0]]);
    expect(next.has_more).to.equal(false);
    const back = await listed(user, `?limit=2&ending_before=${ids[1]}`);
    expect(back.data.map((e) => e.id)).to.deep.equal([ids[3], ids[2]]);
    expect(back.has_more).to.equal(true);

    const bad = await harness.call('GET', '/events?type=nothing.happened', { user });
    expect(bad.status).to.equal(400);
    const unknown = await harness.call('GET', '/events?created[after]=1', { user });
    expect(unknown.status).to.equal(400);
  });

  it("pages an endpoint's delivery log by cursor, and refuses another endpoint's delivery as a cursor", async () => {
    const user = harness.newUser();
    const stranger = harness.newUser();
    const endpoint = await harness.register(user, '/paged');
    const theirs = await harness.register(stranger, '/theirs');
    for (let i = 0; i < 3; i += 1) await harness.publish('TransactionCompleted', completedDeposit(user.id));
    await harness.publish('TransactionCompleted', completedDeposit(stranger.id));
    const log = (endpointId: string, who: TestUser, query: string) =>
      harness.call('GET', `/webhook-endpoints/${endpointId}/deliveries${query}`, { user: who });
    const all = await eventually(
      () => log(endpoint.id, user, '?limit=10'),
      (response) => response.body.data?.length === 3,
      { timeoutMs: 10_000 },
    );
    const ids = (all.body.data as { id: string }[]).map((d) => d.id);
    const next = await log(endpoint.id, user, `?limit=1&starting_after=${ids[0]}`);
    expect(next.body.data.map((d: { id: string }) => d.id)).to.deep.equal([ids[1]]);
    expect(next.body.has_more).to.equal(true);
    const foreign = await eventually(
      () => log(theirs.id, stranger, ''),
      (response) => response.body.data?.length === 1,
    );
    const refused = await log(endpoint.id, user, `?starting_after=${foreign.body.data[0].id}`);
    expect(refused.status).to.equal(400);
    expect(refused.body.errors[0].field).to.equal('starting_after');
  });

  it('forgets the events of a removed user', async () => {
    const user = harness.newUser();
    const event = await harness.publish('TransactionCompleted', completedDeposit(user.id));
    await eventually(
      () => listed(user),
      (body) => body.data.length === 1,
    );
    await harness.publish('UserDeleted', { user_id: user.id });
    await eventually(
      () => harness.db('webhook_events').where({ id: event.id }),
      (rows) => rows.length === 0,
    );
  });
});

describe('event retention', function () {
  this.timeout(30_000);

  it('prunes events older than 30 days and keeps the others', async () => {
    const harness = await startDeliveryHarness();
    try {
      const user = harness.newUser();
      const old = await harness.publish('TransactionCompleted', completedDeposit(user.id));
      const recent = await harness.publish('TransactionCompleted', completedDeposit(user.id));
      await eventually(
        () => harness.db('webhook_events').where({ user_id: user.id }),
        (rows) => rows.length === 2,
      );
      await harness
        .db('webhook_events')
        .where({ id: old.id })
        .update({ created_at: new Date(Date.now() - 31 * 86_400_000) });
      await harness
        .db('webhook_events')
        .where({ id: recent.id })
        .update({ created_at: new Date(Date.now() - 29 * 86_400_000) });
      const removed = await createEventRepository(harness.db).pruneOlderThan(
        new Date(Date.now() - EVENT_RETENTION_MS),
        1000,
      );
      expect(removed).to.equal(1);
      const gone = await harness.call('GET', `/events/${old.id}`, { user });
      expect(gone.status).to.equal(404);
      const kept = await harness.call('GET', '/events', { user });
      expect(kept.body.data.map((e: { id: string }) => e.id)).to.deep.equal([recent.id]);
    } finally {
      await harness.stop();
    }
  });
});
