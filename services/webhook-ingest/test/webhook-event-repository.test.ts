import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { createLogger, openDatabase, type Knex } from '@payments/service-kit';
import { createTestDatabase, type TestDatabase } from '@payments/testkit';
import { migrations } from '../src/data/migrations.js';
import {
  createWebhookEventRepository,
  type WebhookEventRepository,
} from '../src/data/webhook-event-repository.js';
import { parseProviderEvent } from '../src/domain/provider-events.js';
import { completedPayment, pendingPayment } from './incoming-events.js';

const silent = createLogger('webhook-event-repository-test', 'silent');

describe('webhook event repository (real Postgres)', function () {
  this.timeout(20_000);

  let database: TestDatabase;
  let knex: Knex;
  let events: WebhookEventRepository;
  let statements: string[] = [];

  const publishedAt = async (eventId: string) =>
    (await knex('webhook_events').where({ event_id: eventId }).first('published_at'))?.published_at as
      Date | null | undefined;

  const receivedSecondsAgo = (eventIds: string[], seconds: number) =>
    knex('webhook_events')
      .whereIn('event_id', eventIds)
      .update({ received_at: knex.raw('now() - make_interval(secs => ?)', [seconds]) });

  before(async () => {
    database = await createTestDatabase('webhook_repository');
    knex = await openDatabase({ url: database.url, migrations, logger: silent });
    // What each statement does to webhook_events: an insert (which may also mark others published), an update…
    knex.on('query', (query: { sql: string }) =>
      statements.push(
        /insert into webhook_events/i.test(query.sql)
          ? 'insert'
          : (query.sql.trim().split(/\s+/, 1)[0] ?? '').toLowerCase(),
      ),
    );
    events = createWebhookEventRepository(knex);
  });

  beforeEach(() => {
    statements = [];
  });

  after(async () => {
    await knex?.destroy();
    await database?.drop();
  });

  it('records events that arrive together with one INSERT, and marks them published with one UPDATE', async () => {
    const batch = Array.from({ length: 60 }, () => completedPayment());
    const recorded = await Promise.all(batch.map((event) => events.record(event)));
    expect(recorded.map((r) => r.isNew)).to.deep.equal(Array(60).fill(true));
    expect(recorded.map((r) => r.record.eventId)).to.deep.equal(batch.map((e) => e.eventId));
    expect(recorded[0]?.record).to.deep.include({ payment: batch[0]?.payment, publishedAt: null });
    expect(recorded[0]?.record.receivedAt).to.be.instanceOf(Date);
    expect(statements).to.deep.equal(['insert']);

    await Promise.all(batch.map((event) => events.markPublished(event.eventId)));
    expect(statements).to.deep.equal(['insert', 'update']);
    for (const event of batch) expect(await publishedAt(event.eventId)).to.be.instanceOf(Date);
  });

  it('marks the publishes confirmed meanwhile in the statement that records the next events', async () => {
    const first = Array.from({ length: 3 }, () => completedPayment());
    await Promise.all(first.map((event) => events.record(event)));
    statements = [];
    const next = Array.from({ length: 2 }, () => completedPayment());
    const [, recorded] = await Promise.all([
      Promise.all(first.map((event) => events.markPublished(event.eventId))),
      Promise.all(next.map((event) => events.record(event))),
    ]);
    expect(statements).to.deep.equal(['insert']);
    expect(recorded.map((r) => r.isNew)).to.deep.equal([true, true]);
    for (const event of first) expect(await publishedAt(event.eventId)).to.be.instanceOf(Date);
    for (const event of next) expect(await publishedAt(event.eventId)).to.equal(null);
  });

  it('never takes more than 100 events into one statement', async () => {
    await Promise.all(Array.from({ length: 250 }, () => events.record(pendingPayment())));
    expect(statements).to.deep.equal(['insert', 'insert', 'insert']);
  });

  it('returns the record as first stored for an event recorded before, published or not', async () => {
    const published = completedPayment({ delivery: 1 });
    const unpublished = completedPayment();
    await Promise.all([events.record(published), events.record(unpublished)]);
    await events.markPublished(published.eventId);

    const again = await Promise.all([
      events.record({ ...published, payload: { delivery: 2 }, payment: null }),
      events.record(unpublished),
      events.record(completedPayment()),
    ]);
    expect(again.map((r) => r.isNew)).to.deep.equal([false, false, true]);
    expect(again[0]?.record.payment).to.deep.equal(published.payment);
    expect(again[0]?.record.publishedAt).to.be.instanceOf(Date);
    expect(again[1]?.record).to.deep.include({ payment: unpublished.payment, publishedAt: null });
  });

  it('records two copies of one event in the same batch once, and tells the second it is not new', async () => {
    const event = completedPayment();
    const [first, second] = await Promise.all([events.record(event), events.record(event)]);
    expect([first?.isNew, second?.isNew]).to.deep.equal([true, false]);
    expect(second?.record.receivedAt).to.deep.equal(first?.record.receivedAt);
    expect(await knex('webhook_events').where({ event_id: event.eventId }).count({ n: '*' })).to.deep.equal([
      { n: '1' },
    ]);
  });

  it('fails only the event that cannot be stored, not the others recorded with it', async () => {
    // PostgreSQL's jsonb refuses \u0000, so this payload fails its INSERT.
    const poison = completedPayment({ note: 'nul \u0000 inside' });
    const others = [completedPayment(), completedPayment()];
    const outcomes = await Promise.allSettled([poison, ...others].map((event) => events.record(event)));
    expect(outcomes.map((o) => o.status)).to.deep.equal(['rejected', 'fulfilled', 'fulfilled']);
    for (const event of others) expect(await publishedAt(event.eventId)).to.equal(null);
    expect(await publishedAt(poison.eventId)).to.equal(undefined);
  });

  it('writes no secret of a payload it records: they are cut before the INSERT', async () => {
    const event = completedPayment({ data: { object: { id: 'pi_1', client_secret: 'pi_1_secret_x' } } });
    await events.record(event);
    const row = await knex('webhook_events').where({ event_id: event.eventId }).first('payload');
    expect(row?.payload).to.deep.equal({ data: { object: { id: 'pi_1', client_secret: '[redacted]' } } });
  });

  describe('pruneReceivedBefore', () => {
    const receivedDaysAgo = (eventIds: string[], days: number) =>
      knex('webhook_events')
        .whereIn('event_id', eventIds)
        .update({ received_at: knex.raw('now() - make_interval(days => ?)', [days]) });
    const stillThere = async (eventIds: string[]) =>
      (await knex('webhook_events').whereIn('event_id', eventIds).select('event_id'))
        .map((row: { event_id: string }) => row.event_id)
        .sort();

    beforeEach(() => knex('webhook_events').update({ published_at: knex.fn.now() }));

    it('deletes the published and the ignored events past the retention, at most `limit` a statement', async () => {
      const old = Array.from({ length: 5 }, () => completedPayment());
      const [ignored, recent] = [pendingPayment(), completedPayment()];
      await Promise.all([...old, ignored, recent].map((event) => events.record(event)));
      await Promise.all(old.map((event) => events.markPublished(event.eventId)));
      await receivedDaysAgo(
        [...old, ignored].map((e) => e.eventId),
        31,
      );
      await receivedDaysAgo([recent.eventId], 29);

      expect(await events.pruneReceivedBefore(30, 4)).to.equal(4);
      expect(await events.pruneReceivedBefore(30, 4)).to.equal(2);
      expect(await events.pruneReceivedBefore(30, 4)).to.equal(0);
      expect(await stillThere([...old, ignored, recent].map((e) => e.eventId))).to.deep.equal([
        recent.eventId,
      ]);
    });

    it('keeps an event with an effect that is still unpublished, however old, for the republisher', async () => {
      const unpublished = completedPayment();
      await events.record(unpublished);
      await receivedDaysAgo([unpublished.eventId], 400);
      await events.pruneReceivedBefore(30, 100);
      expect(await stillThere([unpublished.eventId])).to.deep.equal([unpublished.eventId]);
    });
  });

  describe('withUnpublished', () => {
    beforeEach(() => knex('webhook_events').update({ published_at: knex.fn.now() }));

    it('hands over the oldest unpublished events with an effect, past the given age, at most `limit`', async () => {
      const [oldest, older, old, young, published] = [1, 2, 3, 4, 5].map(() => completedPayment());
      const ignored = pendingPayment();
      if (!oldest || !older || !old || !young || !published) throw new Error('five events expected');
      await Promise.all([oldest, older, old, young, published, ignored].map((event) => events.record(event)));
      await events.markPublished(published.eventId);
      await receivedSecondsAgo([oldest.eventId, published.eventId, ignored.eventId], 30);
      await receivedSecondsAgo([older.eventId], 20);
      await receivedSecondsAgo([old.eventId], 10);

      const handed = await events.withUnpublished({ olderThanSeconds: 5, limit: 2 }, async (records) =>
        records.map((r) => r.eventId),
      );
      expect(handed).to.deep.equal([oldest.eventId, older.eventId]);
      const all = await events.withUnpublished({ olderThanSeconds: 5, limit: 100 }, async (records) =>
        records.map((r) => ({ eventId: r.eventId, payment: r.payment })),
      );
      expect(all).to.deep.equal(
        [oldest, older, old].map((e) => ({ eventId: e.eventId, payment: e.payment })),
      );
    });

    it('hands over an account.updated left unpublished with its PayoutAccountUpdated, for the republisher', async () => {
      const update = parseProviderEvent({
        id: `evt_${randomUUID()}`,
        type: 'account.updated',
        created: 1_790_000_000,
        account: 'acct_republished',
        data: { object: { id: 'acct_republished', object: 'account', payouts_enabled: true } },
      });
      if (!update?.payoutAccount) throw new Error('an account.updated with an effect expected');
      const recorded = await events.record(update);
      expect(recorded.record).to.deep.include({ payment: null, payoutAccount: update.payoutAccount });
      await receivedSecondsAgo([update.eventId], 30);
      const handed = await events.withUnpublished({ olderThanSeconds: 5, limit: 100 }, async (records) =>
        records.map((r) => ({ eventId: r.eventId, payment: r.payment, payoutAccount: r.payoutAccount })),
      );
      expect(handed).to.deep.equal([
        { eventId: update.eventId, payment: null, payoutAccount: update.payoutAccount },
      ]);
    });

    it('lets one caller at a time through: another, meanwhile, gets null without being called', async () => {
      let release: () => void = () => undefined;
      const holding = new Promise<void>((resolve) => (release = resolve));
      let entered: () => void = () => undefined;
      const inside = new Promise<void>((resolve) => (entered = resolve));
      const first = events.withUnpublished({ olderThanSeconds: 5, limit: 10 }, async () => {
        entered();
        await holding;
        return 'first';
      });
      await inside;
      let called = false;
      const second = await events.withUnpublished({ olderThanSeconds: 5, limit: 10 }, async () => {
        called = true;
        return 'second';
      });
      expect({ second, called }).to.deep.equal({ second: null, called: false });
      release();
      expect(await first).to.equal('first');
      expect(await events.withUnpublished({ olderThanSeconds: 5, limit: 10 }, async () => 'third')).to.equal(
        'third',
      );
    });

    it('is served by the partial index webhook_events_unpublished', async () => {
      const issued: { sql: string; bindings: unknown[] }[] = [];
      const capture = (query: { sql: string; bindings: unknown[] }) => issued.push(query);
      knex.on('query', capture);
      try {
        await events.withUnpublished({ olderThanSeconds: 5, limit: 100 }, async () => undefined);
      } finally {
        knex.off('query', capture);
      }
      const select = issued.find((query) => query.sql.includes('from "webhook_events"'));
      if (!select) throw new Error('no query of webhook_events');
      const plan = await knex.transaction(async (trx) => {
        // The table is tiny: a sequential scan would win on cost, so rule it out to see whether the index fits.
        await trx.raw('set local enable_seqscan = off');
        const { rows } = await trx.raw<{ rows: { 'QUERY PLAN': string }[] }>(
          `explain ${select.sql.replace(/\$\d+/g, '?')}`,
          select.bindings as Knex.RawBinding[],
        );
        return rows.map((row) => row['QUERY PLAN']).join('\n');
      });
      expect(plan).to.include('webhook_events_unpublished');
    });
  });
});
