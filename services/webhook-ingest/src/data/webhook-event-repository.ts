import { createBatcher, type Knex } from '@payments/service-kit';
import { redactWebhookPayload } from '../domain/payload-redaction.js';
import type {
  IncomingWebhookEvent,
  PaymentAdjustedData,
  PaymentProcessedData,
  PayoutAccountUpdatedData,
  WebhookSource,
} from '../domain/webhook-event.js';

export interface WebhookEventRecord {
  eventId: string;
  source: WebhookSource;
  type: string;
  /** The PaymentProcessed data recorded with the event; null when it has no effect. */
  payment: PaymentProcessedData | null;
  /** The PaymentAdjusted data of a refund or dispute (then `payment` is null). */
  adjustment?: PaymentAdjustedData | null;
  /** The PayoutAccountUpdated data of a connected account's account.updated (then `payment` is null). */
  payoutAccount?: PayoutAccountUpdatedData | null;
  receivedAt: Date;
  publishedAt: Date | null;
}

/** A record with an effect: one that has a PaymentProcessed (or a PaymentAdjusted) to publish. */
export type PublishableRecord = WebhookEventRecord &
  (
    | { payment: PaymentProcessedData }
    | { payment: null; adjustment: PaymentAdjustedData }
    | { payment: null; payoutAccount: PayoutAccountUpdatedData }
  );

export function isPublishable(record: WebhookEventRecord): record is PublishableRecord {
  return (
    record.payment !== null || (record.adjustment ?? null) !== null || (record.payoutAccount ?? null) !== null
  );
}

/** The event a record's data is published as. */
type Publishes = 'PaymentProcessed' | 'PaymentAdjusted' | 'PayoutAccountUpdated';

export interface RecordedEvent {
  record: WebhookEventRecord;
  /** True for the one call that recorded the event; false when its id was already recorded. */
  isNew: boolean;
}

export interface UnpublishedQuery {
  /** Only events received at least this long ago: younger ones are most likely being published right now. */
  olderThanSeconds: number;
  limit: number;
}

/**
 * The record of every webhook event. The promise it helps keep: an event with an effect is published at least
 * once before its webhook is answered 200 (and the ledger's inbox makes it take effect once). Calls made
 * together are written together: one statement records the events that arrived and marks those whose publishes
 * were confirmed meanwhile.
 */
export interface WebhookEventRepository {
  /** Records the event unless its id is already recorded; returns the record as stored. */
  record(event: IncomingWebhookEvent): Promise<RecordedEvent>;
  /** Marks the event published, once the broker has confirmed its PaymentProcessed. */
  markPublished(eventId: string): Promise<void>;
  /**
   * Calls `republish` with the oldest events that have an effect and are still unpublished, holding a lock that
   * keeps other processes' calls out until it returns; resolves with null, without calling it, while another
   * process holds that lock.
   */
  withUnpublished<T>(
    query: UnpublishedQuery,
    republish: (records: PublishableRecord[]) => Promise<T>,
  ): Promise<T | null>;
  /**
   * Deletes up to `limit` events received more than `retentionDays` ago, in one statement; an event with an
   * effect still unpublished stays, for the republisher. Resolves with how many it deleted.
   */
  pruneReceivedBefore(retentionDays: number, limit: number): Promise<number>;
  /**
   * The events that name any of `keys` (a transaction id, the provider's ids), oldest first: the newest `limit`
   * of them, and whether there were more.
   */
  findNaming(keys: string[], limit: number): Promise<{ data: ReceivedEvent[]; hasMore: boolean }>;
}

/** A received event as an operator reads it: what it was, what it named, what came of it. */
export interface ReceivedEvent {
  eventId: string;
  source: WebhookSource;
  type: string;
  outcome: string;
  objectId: string | null;
  receivedAt: Date;
  publishedAt: Date | null;
}

/** The ids an event names, exactly as the index webhook_events_objects (migration 005) spells them. */
const NAMED_OBJECTS = `ARRAY[
  event_data->>'transaction_id', event_data->>'payment_id', event_data->>'payment_reference',
  payload#>>'{data,object,id}', payload#>>'{data,object,payment_intent}'
]`;

interface WebhookEventRow {
  event_id: string;
  source: WebhookSource;
  event_type: string;
  event_data: PaymentProcessedData | PaymentAdjustedData | PayoutAccountUpdatedData | null;
  publishes: Publishes;
  received_at: Date;
  published_at: Date | null;
}

const COLUMNS = [
  'event_id',
  'source',
  'event_type',
  'event_data',
  'publishes',
  'received_at',
  'published_at',
];

type Write = { kind: 'record'; event: IncomingWebhookEvent } | { kind: 'mark'; eventId: string };

/** At most this many events recorded or marked per statement; the rest wait for the next one. */
const MAX_BATCH = 100;

/**
 * Under load (a run starting right behind the previous one) with a small batch, a run first waits this long for
 * company, so the statements grow: a statement's fixed cost (PostgreSQL's parse, plan and commit, the round trip)
 * dominates one of a few rows. A lone webhook, or one under light load, never waits.
 */
const GATHER_MS = 2;
const GATHER_BELOW = 16;

/** The advisory lock that lets one republishing pass at a time through, across processes. */
const REPUBLISH_LOCK = 'webhook_events:republish';

function toRecord(row: WebhookEventRow): WebhookEventRecord {
  const adjusts = row.publishes === 'PaymentAdjusted';
  const updatesAccount = row.publishes === 'PayoutAccountUpdated';
  return {
    eventId: row.event_id,
    source: row.source,
    type: row.event_type,
    payment: adjusts || updatesAccount ? null : (row.event_data as PaymentProcessedData | null),
    ...(adjusts && { adjustment: row.event_data as PaymentAdjustedData | null }),
    ...(updatesAccount && { payoutAccount: row.event_data as PayoutAccountUpdatedData | null }),
    receivedAt: row.received_at,
    publishedAt: row.published_at,
  };
}

function publishesOf(event: IncomingWebhookEvent): Publishes {
  if (event.adjustment) return 'PaymentAdjusted';
  return event.payoutAccount ? 'PayoutAccountUpdated' : 'PaymentProcessed';
}

function toRow(event: IncomingWebhookEvent) {
  const data = event.payment ?? event.adjustment ?? event.payoutAccount ?? null;
  return {
    event_id: event.eventId,
    source: event.source,
    event_type: event.type,
    // Whoever records an event, its secrets are never written: they are cut here, on the one way in.
    payload: JSON.stringify(redactWebhookPayload(event.payload)),
    outcome:
      event.payment?.status ??
      event.adjustment?.adjustment ??
      (event.payoutAccount ? 'account_updated' : 'ignored'),
    event_data: data ? JSON.stringify(data) : null,
    publishes: publishesOf(event),
  };
}

export function createWebhookEventRepository(knex: Knex): WebhookEventRepository {
  const table = (db: Knex | Knex.Transaction = knex) => db('webhook_events');

  /**
   * Records `events` and marks `published` in one statement: the marks of the events whose publishes were just
   * confirmed ride along with the next webhooks' insert instead of costing a statement of their own.
   */
  const recordAll = async (events: IncomingWebhookEvent[], published: string[]): Promise<RecordedEvent[]> => {
    const rows = events.map(toRow);
    const { rows: inserted } = (await knex.raw(
      `WITH marked AS (
        UPDATE webhook_events SET published_at = now() WHERE event_id = any(?::text[]) AND published_at IS NULL
      )
      INSERT INTO webhook_events (event_id, source, event_type, payload, outcome, event_data, publishes)
      SELECT e.event_id, e.source, e.event_type, e.payload::jsonb, e.outcome, e.event_data::jsonb, e.publishes
      FROM unnest(?::text[], ?::text[], ?::text[], ?::text[], ?::text[], ?::text[], ?::text[])
        AS e(event_id, source, event_type, payload, outcome, event_data, publishes)
      -- In one order everywhere, so two processes recording overlapping events cannot deadlock.
      ORDER BY e.event_id
      ON CONFLICT (event_id) DO NOTHING
      RETURNING event_id, received_at
      `,
      [
        published,
        rows.map((row) => row.event_id),
        rows.map((row) => row.source),
        rows.map((row) => row.event_type),
        rows.map((row) => row.payload),
        rows.map((row) => row.outcome),
        // null for an event without effect; pg sends it as an SQL NULL element.
        rows.map((row) => row.event_data) as string[],
        rows.map((row) => row.publishes),
      ],
    )) as { rows: Pick<WebhookEventRow, 'event_id' | 'received_at'>[] };
    const receivedAt = new Map(inserted.map((row) => [row.event_id, row.received_at]));
    const known = events.filter((event) => !receivedAt.has(event.eventId)).map((event) => event.eventId);
    // Read after the INSERT, so an event another process recorded meanwhile is found too.
    const existing: WebhookEventRow[] =
      known.length === 0 ? [] : await table().select(COLUMNS).whereRaw('event_id = any(?)', [known]);
    const stored = new Map(existing.map((row) => [row.event_id, toRecord(row)]));
    return events.map((event) => {
      const at = receivedAt.get(event.eventId);
      if (at) {
        const { eventId, source, type, payment } = event;
        const adjustment = event.adjustment ?? null;
        const payoutAccount = event.payoutAccount ?? null;
        const record = {
          eventId,
          source,
          type,
          payment,
          ...(adjustment && { adjustment }),
          ...(payoutAccount && { payoutAccount }),
          receivedAt: at,
          publishedAt: null,
        };
        // A second copy of the event in this batch finds it recorded by the first.
        receivedAt.delete(eventId);
        stored.set(eventId, record);
        return { record, isNew: true };
      }
      const record = stored.get(event.eventId);
      if (!record) throw new Error(`webhook event ${event.eventId} vanished after a conflicting insert`);
      return { record, isNew: false };
    });
  };

  const markAllPublished = async (eventIds: string[]): Promise<void> => {
    await knex.raw(
      'UPDATE webhook_events SET published_at = now() WHERE event_id = any(?::text[]) AND published_at IS NULL',
      [eventIds],
    );
  };

  // One group commit for both: each run records the webhooks that arrived and marks the publishes confirmed
  // since the last run, in one statement when it has both.
  const writes = createBatcher<Write, RecordedEvent | undefined>(writeBatch, {
    maxSize: MAX_BATCH,
    gather: { below: GATHER_BELOW, ms: GATHER_MS },
  });

  async function writeBatch(batch: Write[]): Promise<(RecordedEvent | undefined)[]> {
    const events: IncomingWebhookEvent[] = [];
    const published: string[] = [];
    for (const write of batch) {
      if (write.kind === 'record') events.push(write.event);
      else published.push(write.eventId);
    }
    if (events.length === 0) {
      await markAllPublished(published);
      return batch.map(() => undefined);
    }
    const recorded = await recordAll(events, published);
    let next = 0;
    return batch.map((write) => (write.kind === 'record' ? recorded[next++] : undefined));
  }

  return {
    record: (event) => writes.submit({ kind: 'record', event }) as Promise<RecordedEvent>,
    markPublished: async (eventId) => {
      await writes.submit({ kind: 'mark', eventId });
    },

    withUnpublished({ olderThanSeconds, limit }, republish) {
      return knex.transaction(async (trx) => {
        // Held to the end of the transaction; no row locks, so webhooks marking these rows never wait on it.
        const { rows } = await trx.raw<{ rows: { locked: boolean }[] }>(
          'select pg_try_advisory_xact_lock(hashtext(?)) as locked',
          [REPUBLISH_LOCK],
        );
        if (!rows[0]?.locked) return null;
        const due: WebhookEventRow[] = await table(trx)
          .select(COLUMNS)
          // Exactly the predicate of the partial index webhook_events_unpublished, so that index serves it.
          .whereRaw("published_at is null and outcome <> 'ignored'")
          .whereRaw('received_at < now() - make_interval(secs => ?)', [olderThanSeconds])
          .orderBy('received_at')
          .limit(limit);
        return republish(due.map(toRecord).filter(isPublishable));
      });
    },

    async pruneReceivedBefore(retentionDays, limit) {
      const { rowCount } = await knex.raw<{ rowCount: number | null }>(
        `DELETE FROM webhook_events WHERE event_id = any(array(
           SELECT event_id FROM webhook_events
           WHERE received_at < now() - make_interval(days => ?)
             AND (published_at IS NOT NULL OR outcome = 'ignored')
           LIMIT ?))`,
        [retentionDays, limit],
      );
      return rowCount ?? 0;
    },

    async findNaming(keys, limit) {
      const rows: {
        event_id: string;
        source: WebhookSource;
        event_type: string;
        outcome: string;
        object_id: string | null;
        received_at: Date;
        published_at: Date | null;
      }[] = await table()
        .whereRaw(`${NAMED_OBJECTS} && ?::text[]`, [keys])
        .select(
          'event_id',
          'source',
          'event_type',
          'outcome',
          knex.raw(`coalesce(payload#>>'{data,object,id}', event_data->>'payment_id') AS object_id`),
          'received_at',
          'published_at',
        )
        .orderBy([
          { column: 'received_at', order: 'desc' },
          { column: 'event_id', order: 'desc' },
        ])
        .limit(limit + 1);
      return {
        data: rows
          .slice(0, limit)
          .reverse()
          .map((row) => ({
            eventId: row.event_id,
            source: row.source,
            type: row.event_type,
            outcome: row.outcome,
            objectId: row.object_id,
            receivedAt: row.received_at,
            publishedAt: row.published_at,
          })),
        hasMore: rows.length > limit,
      };
    },
  };
}
