import type { Knex } from 'knex';
import type { ClientBase } from 'pg';
import type { AnyEvent } from '@payments/contracts';
import type { EventBus } from '../bus/event-bus.js';
import type { Logger } from '../logger.js';
import type { Metrics } from '../metrics.js';
import { startPoller } from '../poller.js';
import {
  contextFromCarrier,
  currentTraceCarrier,
  inSpan,
  isTracing,
  SpanKind,
  type TraceCarrier,
} from '../tracing.js';
import type { RuntimePrivileges } from './database.js';

/** What a service's runtime role does to the outbox: appends, claims and marks (FOR UPDATE), prunes. */
export const outboxPrivileges = {
  outbox: ['SELECT', 'INSERT', 'UPDATE', 'DELETE'],
} as const satisfies RuntimePrivileges;

interface OutboxRow {
  seq: string;
  event: AnyEvent;
  /** The trace the event was written in (null: tracing off, or a row from before the column). */
  trace_context: TraceCarrier | null;
}

/** The part of knex's client the relay uses: a pooled pg connection, held for one batch. */
interface RawPool {
  acquireConnection(): Promise<ClientBase>;
  releaseConnection(connection: ClientBase): Promise<unknown>;
}

/** bigint sequence numbers as pg returns them (decimal strings, no sign): shorter is smaller. */
function compareSeq(a: string, b: string): number {
  return a.length - b.length || (a < b ? -1 : a > b ? 1 : 0);
}

/** The relays of this process: a commit that enqueued events wakes them, so none waits for its next poll. */
const localRelays = new Set<() => void>();

/**
 * The statement that records events to publish, with two parameters (outboxInsertBindings): the trace context they
 * are written in and the events as one JSON array. A fixed statement text whatever the count: no per-row
 * placeholders for knex to build or Postgres to parse. Rows are numbered (seq) in the array's order. A caller may
 * embed it in a statement of its own (a data-modifying WITH) and then calls wakeRelaysAfterCommit.
 */
export const OUTBOX_INSERT_SQL = `INSERT INTO outbox (event_id, event, trace_context)
  SELECT (e.event ->> 'id')::uuid, e.event, ?::jsonb
  FROM jsonb_array_elements(?::jsonb) WITH ORDINALITY AS e(event, n)
  ORDER BY e.n`;

/** OUTBOX_INSERT_SQL's parameters: the active trace context (null with tracing off) and the events. */
export function outboxInsertBindings(events: AnyEvent[]): [string | null, string] {
  const carrier = currentTraceCarrier();
  return [carrier && JSON.stringify(carrier), JSON.stringify(events)];
}

/** Wakes the relays of this process once `trx` commits (nothing if it rolls back). */
export function wakeRelaysAfterCommit(trx: Knex.Transaction): void {
  const committed = (trx as Partial<Knex.Transaction>).executionPromise;
  const wakeAll = () => localRelays.forEach((wake) => wake());
  if (committed) committed.then(wakeAll, () => undefined);
  else queueMicrotask(wakeAll);
}

/**
 * Records events to publish in the caller's transaction; the relays of this process are woken once it commits
 * (another process's relay finds them at its next poll).
 */
export async function enqueueEvents(trx: Knex.Transaction, events: AnyEvent[]): Promise<void> {
  if (events.length === 0) return;
  await trx.raw(OUTBOX_INSERT_SQL, outboxInsertBindings(events));
  wakeRelaysAfterCommit(trx);
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
  /** Where to export `outbox_oldest_unpublished_seconds`, read at each scrape. */
  metrics?: Metrics;
}

/** Age of the oldest event not yet published (0 when none waits): it grows while the broker cannot take them. */
export async function oldestUnpublishedSeconds(knex: Knex): Promise<number> {
  // The partial index outbox_unpublished finds the first row at once, however long the backlog.
  const result = await knex.raw<{ rows: { age: number | string | null }[] }>(
    `SELECT extract(epoch FROM now() - created_at) AS age FROM outbox
     WHERE published_at IS NULL ORDER BY seq LIMIT 1`,
  );
  return Math.max(0, Number(result.rows[0]?.age ?? 0));
}

function exportOutboxAge(knex: Knex, metrics: Metrics): void {
  metrics.gauge(
    'outbox_oldest_unpublished_seconds',
    'Age in seconds of the oldest outbox event not yet published (0 when none waits)',
    () => oldestUnpublishedSeconds(knex),
  );
}

/**
 * Publishes outbox rows in order with publisher confirms and marks them sent. Rows are claimed (and marked, in
 * the same uncommitted statement) with FOR UPDATE SKIP LOCKED, so several relay processes never publish the same
 * row in normal operation; a crash between publish and commit republishes, which consumers absorb through their
 * inbox.
 */
export function startOutboxRelay(options: OutboxRelayOptions): OutboxRelay {
  const { knex, bus, logger } = options;
  const pollMs = options.pollMs ?? 200;
  const idlePollMaxMs = Math.max(pollMs, options.idlePollMaxMs ?? 5_000);
  const batchSize = options.batchSize ?? 200;
  const retainMs = options.retainMs ?? 24 * 3600_000;
  let stopped = false;
  let failures = 0;
  let lastCleanup = 0;
  if (options.metrics) exportOutboxAge(knex, options.metrics);

  // Claims and marks a batch in one statement, sent with the BEGIN in one round trip; the marks commit only once
  // the broker confirmed every event (a failure rolls them back, and the rows are published again later).
  // `= ANY(ARRAY(...))` evaluates the claim once, so the statement never takes more than `batchSize` rows.
  const claim =
    'BEGIN; UPDATE outbox SET published_at = now() WHERE seq = ANY(ARRAY(' +
    `SELECT seq FROM outbox WHERE published_at IS NULL ORDER BY seq LIMIT ${Number(batchSize)} ` +
    'FOR UPDATE SKIP LOCKED)) RETURNING seq, event, trace_context';

  // Each row is published in the trace it was written in: the message headers carry it on to the consumers.
  const publishRow = (row: OutboxRow): Promise<void> => {
    if (!isTracing()) return bus.publish(row.event);
    return inSpan(
      `${row.event.type} publish`,
      {
        kind: SpanKind.PRODUCER,
        parent: contextFromCarrier(row.trace_context),
        attributes: {
          'messaging.system': 'rabbitmq',
          'messaging.message.id': row.event.id,
          'messaging.operation.type': 'send',
        },
      },
      () => bus.publish(row.event),
    );
  };

  /**
   * A pass on a connection of its own, outside knex's transaction machinery: two round trips a batch (claim,
   * COMMIT), the rows published between them in seq order with pipelined confirms.
   */
  const relayBatch = async (): Promise<number> => {
    const client = knex.client as RawPool;
    const connection = await client.acquireConnection();
    let open = true;
    try {
      const results = (await connection.query(claim)) as unknown as { rows: OutboxRow[] }[];
      const rows = results[results.length - 1]?.rows ?? [];
      if (rows.length > 1) rows.sort((a, b) => compareSeq(a.seq, b.seq));
      if (rows.length > 0) await Promise.all(rows.map(publishRow));
      await connection.query('COMMIT');
      open = false;
      return rows.length;
    } catch (error) {
      if (open) {
        await connection.query('ROLLBACK').catch((rollbackError: unknown) => {
          // A connection that cannot even roll back is not given back to others.
          (connection as { __knex__disposed?: unknown }).__knex__disposed = rollbackError;
        });
      }
      throw error;
    } finally {
      await client.releaseConnection(connection);
    }
  };

  /** Whether it published anything (a failure throws): either way the next look comes soon. */
  const pass = async (): Promise<boolean> => {
    let busy = false;
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
    return busy;
  };

  const poller = startPoller({
    intervalMs: pollMs,
    idleMaxMs: idlePollMaxMs,
    task: pass,
    onError: (error) => {
      failures += 1;
      if (failures === 1 || failures % 50 === 0)
        logger.warn({ err: error, failures }, 'outbox relay failed; will retry');
    },
  });
  const wake = () => poller.wake();
  localRelays.add(wake);
  wake();

  return {
    wake,
    async stop() {
      stopped = true;
      localRelays.delete(wake);
      await poller.stop();
    },
  };
}
