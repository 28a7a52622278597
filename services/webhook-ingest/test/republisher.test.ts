import { expect } from 'chai';
import type { AnyEvent, EventEnvelope } from '@payments/contracts';
import {
  BusUnavailableError,
  createLogger,
  createMetrics,
  openDatabase,
  type Knex,
  type Metrics,
} from '@payments/service-kit';
import { createTestDatabase, eventually, type TestDatabase } from '@payments/testkit';
import { migrations } from '../src/data/migrations.js';
import {
  createWebhookEventRepository,
  type WebhookEventRepository,
} from '../src/data/webhook-event-repository.js';
import { envelopeIdOf } from '../src/domain/webhook-event.js';
import { startRepublisher, type Republisher } from '../src/events/republisher.js';
import { createWebhookMetrics } from '../src/webhook-metrics.js';
import { completedPayment, refundedCharge } from './incoming-events.js';

const silent = createLogger('republisher-test', 'silent');
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('republisher (real Postgres)', function () {
  this.timeout(20_000);

  let database: TestDatabase;
  let knex: Knex;
  let events: WebhookEventRepository;
  let metrics: Metrics;
  let republisher: Republisher;
  let published: EventEnvelope<'PaymentProcessed'>[];
  let adjustments: EventEnvelope<'PaymentAdjusted'>[] = [];
  /** Transaction ids whose publish the broker refuses. */
  let refused: Set<string>;

  const bus = {
    async publish(event: AnyEvent) {
      const processed = event as EventEnvelope<'PaymentProcessed'>;
      if (event.type === 'PaymentAdjusted') adjustments.push(event as EventEnvelope<'PaymentAdjusted'>);
      if (refused.has(processed.data.transaction_id))
        throw new BusUnavailableError('not connected to RabbitMQ');
      published.push(processed);
    },
  };

  /** Records events as a webhook call would, then leaves them unpublished for `seconds`. */
  const leftUnpublished = async (count: number, seconds = 30) => {
    const recorded = Array.from({ length: count }, () => completedPayment());
    await Promise.all(recorded.map((event) => events.record(event)));
    await knex('webhook_events')
      .whereIn(
        'event_id',
        recorded.map((event) => event.eventId),
      )
      .update({ received_at: knex.raw('now() - make_interval(secs => ?)', [seconds]) });
    return recorded;
  };

  const unpublishedIds = async () =>
    (await knex('webhook_events')
      .whereNull('published_at')
      .orderBy('event_id')
      .pluck('event_id')) as string[];

  before(async () => {
    database = await createTestDatabase('webhook_republisher');
    knex = await openDatabase({ url: database.url, migrations, logger: silent });
    events = createWebhookEventRepository(knex);
  });

  beforeEach(async () => {
    await knex('webhook_events').delete();
    published = [];
    refused = new Set();
    metrics = createMetrics('republisher-test');
    republisher = startRepublisher({
      events,
      bus,
      metrics: createWebhookMetrics(metrics),
      logger: silent,
      intervalMs: 60_000,
      afterSeconds: 5,
    });
  });

  afterEach(() => republisher.stop());

  after(async () => {
    await knex?.destroy();
    await database?.drop();
  });

  it('publishes the events left unpublished past the threshold, oldest first, and marks them', async () => {
    const oldest = await leftUnpublished(1, 60);
    const older = await leftUnpublished(1, 40);
    const old = await leftUnpublished(1, 20);
    const young = await leftUnpublished(1, 0);

    expect(await republisher.runOnce()).to.equal(3);
    expect(published.map((e) => e.id)).to.deep.equal(
      [...oldest, ...older, ...old].map((e) => envelopeIdOf(e.eventId)),
    );
    expect(published[0]?.data).to.deep.equal(oldest[0]?.payment);
    expect(published[0]?.correlation_id).to.equal(`republish:${published[0]?.id}`);
    expect(await unpublishedIds()).to.deep.equal(young.map((e) => e.eventId));
    expect(await metrics.registry.getSingleMetricAsString('webhook_events_republished_total')).to.match(
      /^webhook_events_republished_total\{[^}]*type="payment_intent.succeeded"[^}]*\} 3$/m,
    );

    expect(await republisher.runOnce()).to.equal(0);
    expect(published).to.have.length(3);
  });

  it('looks once an event this process left unpublished comes due, however long its idle wait', async () => {
    // Due one second from now (5 s threshold); the next poll is a minute away.
    const [event] = await leftUnpublished(1, 4);
    const { received_at: receivedAt } = await knex('webhook_events')
      .where('event_id', event!.eventId)
      .first('received_at');
    const asked = Date.now();
    republisher.leftUnpublished(receivedAt as Date);
    await sleep(700);
    expect(published).to.have.length(0);
    await eventually(
      async () => published.length,
      (count) => count === 1,
      { timeoutMs: 3_000, intervalMs: 20 },
    );
    expect(Date.now() - asked).to.be.below(2_500);
    expect(published[0]?.id).to.equal(envelopeIdOf(event!.eventId));
    expect(await unpublishedIds()).to.deep.equal([]);
  });

  it('publishes a refund or dispute left unpublished as PaymentAdjusted', async () => {
    adjustments = [];
    const refund = refundedCharge();
    await events.record(refund);
    await knex('webhook_events')
      .where('event_id', refund.eventId)
      .update({ received_at: knex.raw("now() - interval '1 minute'") });
    expect(await republisher.runOnce()).to.equal(1);
    expect(adjustments.map((e) => [e.id, e.data])).to.deep.equal([
      [envelopeIdOf(refund.eventId), refund.adjustment],
    ]);
    expect(await unpublishedIds()).to.deep.equal([]);
  });

  it('works through more than one batch in a pass', async () => {
    await leftUnpublished(230);
    expect(await republisher.runOnce()).to.equal(230);
    expect(new Set(published.map((e) => e.id)).size).to.equal(230);
    expect(await unpublishedIds()).to.deep.equal([]);
  });

  it('marks what it did publish when one publish fails, fails the pass, and publishes the rest next time', async () => {
    const stuck = await leftUnpublished(3);
    const [blocked] = stuck;
    refused.add(blocked?.payment?.transaction_id ?? '');

    const failure = await republisher.runOnce().catch((error: unknown) => error);
    expect(failure).to.be.instanceOf(AggregateError);
    expect(await unpublishedIds()).to.deep.equal([blocked?.eventId]);
    expect(published).to.have.length(2);

    refused.clear();
    expect(await republisher.runOnce()).to.equal(1);
    expect(await unpublishedIds()).to.deep.equal([]);
  });

  it('leaves the events to another process that is republishing at the same moment', async () => {
    await leftUnpublished(2);
    let release: () => void = () => undefined;
    let entered: () => void = () => undefined;
    const inside = new Promise<void>((resolve) => (entered = resolve));
    const other = events.withUnpublished(
      { olderThanSeconds: 5, limit: 100 },
      () =>
        new Promise<number>((resolve) => {
          release = () => resolve(0);
          entered();
        }),
    );
    await inside;
    expect(await republisher.runOnce()).to.equal(0);
    expect(published).to.deep.equal([]);
    release();
    await other;
    expect(await republisher.runOnce()).to.equal(2);
  });

  it('waits on stop for the pass in progress', async () => {
    await leftUnpublished(50);
    const pass = republisher.runOnce();
    await republisher.stop();
    expect(await Promise.race([pass, 'still running'])).to.equal(50);
  });
});
