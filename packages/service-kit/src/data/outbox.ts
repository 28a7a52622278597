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

/** Records events to publish in the caller's transaction; the relay publishes them after commit. */
export async function enqueueEvents(trx: Knex.Transaction, events: AnyEvent[]): Promise<void> {
  if (events.length === 0) return;
  await trx('outbox').insert(events.map((event) => ({ event_id: event.id, event })));
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
  pollMs?: number;
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
  const batchSize = options.batchSize ?? 200;
  const retainMs = options.retainMs ?? 24 * 3600_000;
  let stopped = false;
  let running: Promise<void> | null = null;
  let again = false;
  let failures = 0;
  let lastCleanup = 0;

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

  const pass = async () => {
    do {
      again = false;
      try {
        while (!stopped && (await relayBatch()) === batchSize);
        failures = 0;
        if (Date.now() - lastCleanup > 60_000) {
          lastCleanup = Date.now();
          await knex('outbox')
            .whereNotNull('published_at')
            .where('published_at', '<', new Date(Date.now() - retainMs))
            .delete();
        }
      } catch (error) {
        failures += 1;
        if (failures === 1 || failures % 50 === 0)
          logger.warn({ err: error, failures }, 'outbox relay failed; will retry');
      }
    } while (again && !stopped);
  };

  const trigger = () => {
    if (stopped) return;
    if (running) {
      again = true;
      return;
    }
    running = pass().finally(() => {
      running = null;
    });
  };

  const timer = setInterval(trigger, pollMs);
  timer.unref();
  trigger();

  return {
    wake: trigger,
    async stop() {
      stopped = true;
      clearInterval(timer);
      await running;
    },
  };
}
