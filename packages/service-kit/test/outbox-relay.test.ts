import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import pg from 'pg';
import type { AnyEvent } from '@payments/contracts';
import { createTestDatabase, eventually, type TestDatabase } from '@payments/testkit';
import {
  createLogger,
  createMetrics,
  enqueueEvents,
  openDatabase,
  outboxMigration,
  startOutboxRelay,
  type EventBus,
  type Knex,
} from '../src/index.js';

const logger = createLogger('outbox-test', 'silent');

/** A bus that records what it is given, with when. */
function recordingBus() {
  const published: { id: string; at: number }[] = [];
  const bus = {
    publish: async (event: AnyEvent) => {
      published.push({ id: event.id, at: Date.now() });
    },
  } as unknown as EventBus;
  return { bus, published };
}

const someEvent = () => ({ id: randomUUID(), type: 'Test', data: {} }) as unknown as AnyEvent;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('outbox relay', function () {
  this.timeout(30_000);
  let database: TestDatabase;
  let knex: Knex;
  let looks = 0;
  let restoreQuery = () => undefined as void;

  before(async () => {
    database = await createTestDatabase('outbox_relay');
    // The column each service with an outbox adds in a migration of its own (ADR 0112).
    const traceContext = {
      name: '001_outbox_trace_context',
      up: (db: Knex) => db.raw('ALTER TABLE outbox ADD COLUMN trace_context jsonb'),
      down: (db: Knex) => db.raw('ALTER TABLE outbox DROP COLUMN trace_context'),
    };
    knex = await openDatabase({ url: database.url, migrations: [outboxMigration, traceContext], logger });
    // The relay queries on a pooled connection of its own (not through knex's query builder): count at the driver.
    const query = pg.Client.prototype.query;
    restoreQuery = () => {
      pg.Client.prototype.query = query;
    };
    pg.Client.prototype.query = function counted(this: pg.Client, ...args: unknown[]) {
      const text = typeof args[0] === 'string' ? args[0] : (args[0] as { text?: string } | undefined)?.text;
      if (text && /select seq from outbox .*for update skip locked/i.test(text)) looks += 1;
      return (query as (...a: unknown[]) => unknown).apply(this, args);
    } as typeof query;
  });

  after(async () => {
    restoreQuery();
    await knex.destroy();
    await database.drop();
  });

  it('looks less and less often while it finds nothing', async () => {
    const { bus } = recordingBus();
    const relay = startOutboxRelay({ knex, bus, logger, pollMs: 20, idlePollMaxMs: 320 });
    try {
      looks = 0;
      await sleep(2000);
      // At a fixed 20 ms it would have looked ~100 times; doubling to 320 ms makes it 10 or so.
      expect(looks).to.be.within(5, 15);
    } finally {
      await relay.stop();
    }
  });

  it('publishes a local commit at once even when backed off, and another process’s rows at the next poll', async () => {
    const { bus, published } = recordingBus();
    const relay = startOutboxRelay({ knex, bus, logger, pollMs: 20, idlePollMaxMs: 1500 });
    try {
      await sleep(2000); // backed off: the next poll is 640 ms to 1.5 s away
      const local = someEvent();
      await knex.transaction(async (trx) => {
        await enqueueEvents(trx, [local]);
      });
      const at = Date.now();
      const seen = await eventually(async () => published.find((entry) => entry.id === local.id), Boolean, {
        timeoutMs: 5000,
        intervalMs: 5,
      });
      expect(seen, 'published').to.not.equal(undefined);
      expect((seen as { at: number }).at - at).to.be.below(300);

      // A rolled-back transaction publishes nothing.
      const rolledBack = someEvent();
      await knex
        .transaction(async (trx) => {
          await enqueueEvents(trx, [rolledBack]);
          throw new Error('roll back');
        })
        .catch(() => undefined);

      // A row another process committed (no local wake) is found by the polling, within the idle cap.
      await sleep(2000);
      const remote = someEvent();
      await knex('outbox').insert({ event_id: remote.id, event: remote });
      const found = await eventually(async () => published.find((entry) => entry.id === remote.id), Boolean, {
        timeoutMs: 5000,
        intervalMs: 20,
      });
      expect(found, 'published by polling').to.not.equal(undefined);
      expect(published.map((entry) => entry.id)).to.not.include(rolledBack.id);
      expect(published.filter((entry) => entry.id === local.id)).to.have.length(1);
    } finally {
      await relay.stop();
    }
  });

  it('publishes in commit order, and a refused batch stays unpublished until the broker takes it', async () => {
    const published: string[] = [];
    let refusing = true;
    const bus = {
      publish: async (event: AnyEvent) => {
        if (refusing) throw new Error('broker unavailable');
        published.push(event.id);
      },
    } as unknown as EventBus;
    const relay = startOutboxRelay({ knex, bus, logger, pollMs: 20, idlePollMaxMs: 100, batchSize: 7 });
    try {
      const events = Array.from({ length: 30 }, someEvent);
      for (let i = 0; i < events.length; i += 10) {
        await knex.transaction(async (trx) => {
          await enqueueEvents(trx, events.slice(i, i + 10));
        });
      }
      const ids = events.map((event) => event.id);
      /** How many of the events' outbox rows are marked published (or not). */
      const countRows = async (marked: boolean) => {
        const rows = await knex('outbox')
          .whereIn('event_id', ids)
          .where((query) => {
            if (marked) query.whereNotNull('published_at');
            else query.whereNull('published_at');
          })
          .count<{ count: string }[]>('*');
        return Number(rows[0]?.count);
      };
      await sleep(300);
      expect(await countRows(false), 'left unpublished while refused').to.equal(events.length);
      refusing = false;
      await eventually(
        async () => published.length,
        (count) => count >= events.length,
        {
          timeoutMs: 5000,
          intervalMs: 10,
        },
      );
      expect(published).to.deep.equal(ids);
      // The relay marks a batch after the broker took it, so the last batch's marks may trail its publication.
      const marked = await eventually(
        () => countRows(true),
        (count) => count === events.length,
        { timeoutMs: 5000, intervalMs: 10 },
      );
      expect(marked, 'marked published').to.equal(events.length);
    } finally {
      await relay.stop();
    }
  });

  it('keeps polling at the fast rate while each pass finds work', async () => {
    const { bus, published } = recordingBus();
    const relay = startOutboxRelay({ knex, bus, logger, pollMs: 20, idlePollMaxMs: 5000 });
    try {
      await sleep(1500); // backed off
      // Rows from "another process", one every 50 ms: after the first is found the relay polls every 20 ms.
      const ids: string[] = [];
      const first = someEvent();
      ids.push(first.id);
      await knex('outbox').insert({ event_id: first.id, event: first });
      await eventually(async () => published.some((entry) => entry.id === first.id), Boolean, {
        timeoutMs: 6000,
        intervalMs: 5,
      });
      const lags: number[] = [];
      for (let i = 0; i < 10; i += 1) {
        await sleep(15);
        const event = someEvent();
        const insertedAt = Date.now();
        await knex('outbox').insert({ event_id: event.id, event });
        const seen = await eventually(async () => published.find((entry) => entry.id === event.id), Boolean, {
          timeoutMs: 6000,
          intervalMs: 2,
        });
        lags.push((seen as { at: number }).at - insertedAt);
      }
      // Each found within two or three fast polls, not after a backed-off wait.
      expect(Math.max(...lags)).to.be.below(200);
    } finally {
      await relay.stop();
    }
  });

  it('exports the age of the oldest unpublished event, and 0 once the broker took it', async () => {
    let refusing = true;
    const bus = {
      publish: async () => {
        if (refusing) throw new Error('broker unavailable');
      },
    } as unknown as EventBus;
    const metrics = createMetrics('outbox-test');
    const relay = startOutboxRelay({ knex, bus, logger, metrics, pollMs: 20, idlePollMaxMs: 100 });
    const age = async () => {
      const gauge = await metrics.registry.getSingleMetric('outbox_oldest_unpublished_seconds')?.get();
      return gauge?.values[0]?.value ?? Number.NaN;
    };
    try {
      expect(await age(), 'nothing waits').to.equal(0);
      const event = someEvent();
      await knex('outbox').insert({ event_id: event.id, event, created_at: new Date(Date.now() - 90_000) });
      expect(await age(), 'refused for 90 s').to.be.within(89, 120);
      refusing = false;
      expect(await eventually(age, (seconds) => seconds === 0, { timeoutMs: 5000, intervalMs: 20 })).to.equal(
        0,
      );
    } finally {
      await relay.stop();
    }
  });
});
