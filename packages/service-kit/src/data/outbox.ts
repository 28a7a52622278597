import type { Knex } from 'knex';
import type { AnyEvent } from '@payments/contracts';
import type { EventBus } from '../bus/event-bus.js';
import type { Logger } from '../logger.js';
import type { Migration } from './database.js';

export const outboxMigration: Migration = {
  name: '000_outbox',
  async up(knex) {
    await knex.schema.createTable('outbox', (table) => {
      table.bigIncrements('seq').primary();
      table.uuid('event_id').notNullable().unique();
      table.jsonb('event').notNullable();
      table.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
      table.timestamp('published_at', { useTz: true });
    });
    await knex.raw('CREATE INDEX outbox_unpublished ON outbox (seq) WHERE published_at IS NULL');
  },
  async down(knex) {
    await knex.schema.dropTable('outbox');
  },
};

/** The relays of this process: a commit that enqueued events wakes them, so none waits for its next poll. */
const localRelays = new Set<() => void>();

/**
 * Records events to publish in the caller's transaction; the relays of this process are woken once it commits
 * (another process's relay finds them at its next poll).
 */
export async function enqueueEvents(trx: Knex.Transaction, events: AnyEvent[]): Promise<void> {
  if (events.length === 0) return;
  await trx('outbox').insert(events.map((event) => ({ event_id: event.id, event })));
  const committed = (trx as Partial<Knex.Transaction>).executionPromise;
  const wakeAll = () => localRelays.forEach((wake) => wake());
  if (committed) committed.then(wakeAll, () => undefined);
  else queueMicrotask(wakeAll);
}

export interface OutboxRelay {
  /** Asks for a relay pass now, e.g. right after a commit, instead of waiting for the next poll. */
  wake(): void;
  stop(): Promise<void>;
}

export interface OutboxRelayOptions {
  knex: Knex;
  bus: EventBus;
  logger: Logger;
  /** How soon the next look follows a pass that found work (or failed). */
  pollMs?: number;
  /**
   * While passes find nothing, the wait between them doubles from `pollMs` up to this: an idle relay costs a few
   * queries a minute instead of five a second. A local commit (enqueueEvents) or `wake()` ends the wait at once.
   */
  idlePollMaxMs?: number;
  batchSize?: number;
  /** Published rows older than this are deleted. */
  retainMs?: number;
}

/**
 * Publishes outbox rows in order with publisher confirms and marks them sent. Rows are claimed with
 * FOR UPDATE SKIP LOCKED, so several relay processes never publish the same row in normal operation; a crash
 * between publish and commit republishes, which consumers absorb through their inbox.
 */
export function startOutboxRelay(options: OutboxRelayOptions): OutboxRelay {
  const { knex, bus, logger } = options;
  const pollMs = options.pollMs ?? 200;
  const idlePollMaxMs = Math.max(pollMs, options.idlePollMaxMs ?? 5_000);
  const batchSize = options.batchSize ?? 200;
  const retainMs = options.retainMs ?? 24 * 3600_000;
  let stopped = false;
  let running: Promise<void> | null = null;
  let again = false;
  let failures = 0;
  let lastCleanup = 0;
  let delayMs = pollMs;
  let timer: NodeJS.Timeout | undefined;

  const relayBatch = async (): Promise<number> =>
    knex.transaction(async (trx) => {
      const rows: { seq: string; event: AnyEvent }[] = await trx('outbox')
        .select('seq', 'event')
        .whereNull('published_at')
        .orderBy('seq')
        .limit(batchSize)
        .forUpdate()
        .skipLocked();
      if (rows.length === 0) return 0;
      await Promise.all(rows.map((row) => bus.publish(row.event)));
      await trx('outbox')
        .whereIn(
          'seq',
          rows.map((row) => row.seq),
        )
        .update({ published_at: knex.fn.now() });
      return rows.length;
    });

  /** Whether it published anything, or failed: either way the next look comes soon. */
  const pass = async (): Promise<boolean> => {
    let busy = false;
    do {
      again = false;
      try {
        let published: number;
        do {
          published = await relayBatch();
          if (published > 0) busy = true;
        } while (!stopped && published === batchSize);
        failures = 0;
        if (Date.now() - lastCleanup > 60_000) {
          lastCleanup = Date.now();
          await knex('outbox')
            .whereNotNull('published_at')
            .where('published_at', '<', new Date(Date.now() - retainMs))
            .delete();
        }
      } catch (error) {
        busy = true;
        failures += 1;
        if (failures === 1 || failures % 50 === 0)
          logger.warn({ err: error, failures }, 'outbox relay failed; will retry');
      }
    } while (again && !stopped);
    return busy;
  };

  const schedule = () => {
    clearTimeout(timer);
    if (stopped) return;
    timer = setTimeout(poll, delayMs);
    timer.unref();
  };

  /** A pass now (or another right after the one under way); then the next poll, sooner if it found work. */
  const trigger = (woken: boolean) => {
    if (stopped) return;
    if (woken) delayMs = pollMs;
    if (running) {
      again = true;
      return;
    }
    clearTimeout(timer);
    running = pass()
      .then((busy) => {
        delayMs = busy || again ? pollMs : Math.min(delayMs * 2, idlePollMaxMs);
      })
      .finally(() => {
        running = null;
        schedule();
      });
  };
  const poll = () => trigger(false);
  const wake = () => trigger(true);

  localRelays.add(wake);
  wake();

  return {
    wake,
    async stop() {
      stopped = true;
      localRelays.delete(wake);
      clearTimeout(timer);
      await running;
    },
  };
}
