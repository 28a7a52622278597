import type { ApiVersion, WebhookDeliveryStatus, WebhookEventType } from '@payments/contracts';
import type { SubscribableEvent } from '../domain/event-payload.js';
import type { Knex, Page, PageRequest, TraceCarrier } from '@payments/service-kit';
import { readNewestFirst } from './pages.js';
import { EVENT_API_VERSION } from '../domain/event-payload.js';

export interface Delivery {
  id: string;
  endpointId: string;
  eventId: string;
  eventType: WebhookEventType;
  event: SubscribableEvent;
  apiVersion: ApiVersion;
  payload: string | null;
  status: WebhookDeliveryStatus;
  attempts: number;
  nextAttemptAt: Date | null;
  lockedUntil: Date | null;
  retryUntil: Date;
  lastStatusCode: number | null;
  lastLatencyMs: number | null;
  lastError: string | null;
  createdAt: Date;
  updatedAt: Date;
  deliveredAt: Date | null;
  /** The trace of the event it sends (null: tracing off, or made before traces were kept). */
  traceContext?: TraceCarrier | null;
}

export interface DeliveryAttempt {
  attempt: number;
  statusCode: number | null;
  latencyMs: number;
  error: string | null;
  responseBodyPrefix: string | null;
  attemptedAt: Date;
  nextAttemptAt: Date | null;
}

interface DeliveryRow {
  id: string;
  endpoint_id: string;
  event_id: string;
  event_type: string;
  event: SubscribableEvent;
  api_version: string;
  payload: string | null;
  status: string;
  attempts: number;
  next_attempt_at: Date | null;
  locked_until: Date | null;
  retry_until: Date;
  last_status_code: number | null;
  last_latency_ms: number | null;
  last_error: string | null;
  created_at: Date;
  updated_at: Date;
  delivered_at: Date | null;
  trace_context?: TraceCarrier | null;
}

const toDelivery = (row: DeliveryRow): Delivery => ({
  id: row.id,
  endpointId: row.endpoint_id,
  eventId: row.event_id,
  eventType: row.event_type as WebhookEventType,
  event: row.event,
  apiVersion: row.api_version as ApiVersion,
  payload: row.payload,
  status: row.status as WebhookDeliveryStatus,
  attempts: row.attempts,
  nextAttemptAt: row.next_attempt_at,
  lockedUntil: row.locked_until,
  retryUntil: row.retry_until,
  lastStatusCode: row.last_status_code,
  lastLatencyMs: row.last_latency_ms,
  lastError: row.last_error,
  createdAt: row.created_at,
  updatedAt: row.updated_at,
  deliveredAt: row.delivered_at,
  traceContext: row.trace_context ?? null,
});

/** An event to fan out: delivered to every enabled endpoint of `userId` subscribed to `eventType`. */
export interface FanOutEvent {
  event: SubscribableEvent;
  userId: string;
  eventType: WebhookEventType;
  /** The trace the event arrived in, kept with its deliveries. */
  traceContext?: TraceCarrier | null;
}

/** What one attempt came to; `nextAttemptAt` null with a failure means the delivery has failed for good. */
export interface AttemptOutcome {
  attempt: number;
  succeeded: boolean;
  statusCode: number | null;
  latencyMs: number;
  error: string | null;
  responseBodyPrefix: string | null;
  nextAttemptAt: Date | null;
}

export interface DeliveryRepository {
  /**
   * Fans events out in one statement: each event is stored for its user to read (once, by its id); each event
   * some enabled endpoint subscribes to (as the statement sees the
   * endpoints) is recorded in the inbox under `consumer` together with one delivery per such endpoint; an event
   * already in the inbox adds nothing, and an event no endpoint wants adds no delivery. Returns how many deliveries
   * were created.
   */
  fanOut(consumer: string, events: FanOutEvent[], retryUntil: Date): Promise<number>;
  /**
   * Claims due deliveries for `leaseMs` and counts the attempt: at most `limit`, and never more than
   * `perEndpoint` held at once for one endpoint (held by any process). A claim that lapses (the process died)
   * makes the delivery due again.
   */
  claimDue(options: { limit: number; perEndpoint: number; leaseMs: number }): Promise<Delivery[]>;
  /** Stores the rendered body unless one is there already; returns the body every attempt sends. */
  fixPayload(id: string, payload: string): Promise<string>;
  /** Records an attempt; the delivery changes only if no later claim took it over meanwhile. */
  recordAttempt(id: string, outcome: AttemptOutcome): Promise<void>;
  find(id: string): Promise<Delivery | null>;
  attemptsOf(id: string): Promise<DeliveryAttempt[]>;
  list(
    endpointId: string,
    filter: { status?: WebhookDeliveryStatus },
    page: PageRequest,
  ): Promise<Page<Delivery>>;
  /**
   * Due again now, with a fresh retry window; refused (null) while an attempt is in flight. `beforeCommit` runs
   * in the same transaction: throwing undoes the redelivery.
   */
  redeliver(
    id: string,
    retryUntil: Date,
    beforeCommit?: (delivery: Delivery) => Promise<void>,
  ): Promise<Delivery | null>;
  countPending(): Promise<number>;
  /** Deletes up to `limit` succeeded or failed deliveries (with their attempts) last changed before `before`. */
  pruneFinished(before: Date, limit: number): Promise<number>;
}

export function createDeliveryRepository(knex: Knex): DeliveryRepository {
  const table = () => knex<DeliveryRow>('webhook_deliveries');
  return {
    async fanOut(consumer, events, retryUntil) {
      if (events.length === 0) return 0;
      // One statement, so the inbox rows and the deliveries commit together; the inbox rows are inserted in
      // event-id order, so two processes fanning out overlapping redeliveries cannot deadlock. The event bodies
      // travel as text and become jsonb only for the deliveries made.
      const { rows } = (await knex.raw(
        `
        WITH given AS (
          SELECT * FROM unnest(?::uuid[], ?::uuid[], ?::text[], ?::text[], ?::text[])
            AS g(event_id, user_id, event_type, event, trace_context)
        ), targets AS (
          SELECT g.event_id, g.event_type, g.event, g.trace_context, e.id AS endpoint_id, e.api_version
          FROM given g
          JOIN webhook_endpoints e ON e.user_id = g.user_id AND e.enabled AND g.event_type = ANY(e.events)
        ), stored AS (
          -- Every event is the user's to read (GET /events), whether or not an endpoint wants it.
          INSERT INTO webhook_events (id, user_id, type, event, api_version, created_at)
          SELECT event_id, user_id, event_type, event::jsonb, ?, (event::jsonb ->> 'occurred_at')::timestamptz
          FROM given ORDER BY event_id
          ON CONFLICT (id) DO NOTHING
        ), fresh AS (
          INSERT INTO processed_events (event_id, consumer)
          SELECT DISTINCT event_id::text, ? FROM targets ORDER BY 1
          ON CONFLICT (event_id, consumer) DO NOTHING
          RETURNING event_id
        )
        INSERT INTO webhook_deliveries
          (id, endpoint_id, event_id, event_type, event, api_version, status, next_attempt_at, retry_until,
           trace_context)
        SELECT gen_random_uuid(), t.endpoint_id, t.event_id, t.event_type, t.event::jsonb, t.api_version,
               'pending', now(), ?, nullif(t.trace_context, '')::jsonb
        FROM targets t JOIN fresh f ON f.event_id = t.event_id::text
        ON CONFLICT (endpoint_id, event_id) DO NOTHING
        RETURNING id
        `,
        [
          events.map((e) => e.event.id),
          events.map((e) => e.userId),
          events.map((e) => e.eventType),
          events.map((e) => JSON.stringify(e.event)),
          // Arrays of text carry no SQL NULL through knex's types: '' stands for none.
          events.map((e) => (e.traceContext ? JSON.stringify(e.traceContext) : '')),
          EVENT_API_VERSION,
          consumer,
          retryUntil,
        ],
      )) as { rows: { id: string }[] };
      return rows.length;
    },

    async claimDue({ limit, perEndpoint, leaseMs }) {
      // The row lock of the UPDATE and its re-checked WHERE keep two processes from claiming the same delivery.
      // The per-endpoint limit counts what every process holds, so claims take turns: two at once would each
      // count the other's claims as free and hold twice the limit between them. A claim is one short statement.
      const { rows } = (await knex.transaction(async (trx) => {
        await trx.raw('SELECT pg_advisory_xact_lock(hashtext(?))', ['webhook_deliveries.claim']);
        return trx.raw(
          `
        WITH held AS (
          SELECT endpoint_id, count(*) AS n FROM webhook_deliveries
          WHERE status = 'pending' AND locked_until > now()
          GROUP BY endpoint_id
        ), due AS (
          SELECT d.id, d.endpoint_id, d.next_attempt_at,
                 row_number() OVER (PARTITION BY d.endpoint_id ORDER BY d.next_attempt_at, d.id) AS rank
          FROM webhook_deliveries d
          JOIN webhook_endpoints e ON e.id = d.endpoint_id AND e.enabled
          WHERE d.status = 'pending' AND d.next_attempt_at <= now()
            AND (d.locked_until IS NULL OR d.locked_until <= now())
        ), picked AS (
          SELECT due.id FROM due LEFT JOIN held ON held.endpoint_id = due.endpoint_id
          WHERE due.rank + coalesce(held.n, 0) <= :perEndpoint
          ORDER BY due.next_attempt_at, due.id
          LIMIT :limit
        )
        UPDATE webhook_deliveries d
        SET locked_until = now() + make_interval(secs => :leaseSeconds), attempts = d.attempts + 1,
            updated_at = now()
        FROM picked
        WHERE d.id = picked.id AND d.status = 'pending'
          AND (d.locked_until IS NULL OR d.locked_until <= now())
        RETURNING d.*
        `,
          { perEndpoint, limit, leaseSeconds: leaseMs / 1000 },
        );
      })) as { rows: DeliveryRow[] };
      return rows.map(toDelivery);
    },

    async fixPayload(id, payload) {
      const [row] = (await table()
        .where({ id })
        .update({ payload: knex.raw('coalesce(payload, ?)', [payload]) as unknown as string })
        .returning('payload')) as { payload: string }[];
      return row?.payload ?? payload;
    },

    async recordAttempt(id, outcome) {
      await knex.transaction(async (trx) => {
        await trx('webhook_delivery_attempts').insert({
          delivery_id: id,
          attempt: outcome.attempt,
          status_code: outcome.statusCode,
          latency_ms: outcome.latencyMs,
          error: outcome.error,
          response_body_prefix: outcome.responseBodyPrefix,
          next_attempt_at: outcome.nextAttemptAt,
        });
        const status = outcome.succeeded ? 'succeeded' : outcome.nextAttemptAt ? 'pending' : 'failed';
        await trx('webhook_deliveries')
          .where({ id, attempts: outcome.attempt, status: 'pending' })
          .update({
            status,
            next_attempt_at: status === 'pending' ? outcome.nextAttemptAt : null,
            locked_until: null,
            last_status_code: outcome.statusCode,
            last_latency_ms: outcome.latencyMs,
            last_error: outcome.error,
            delivered_at: outcome.succeeded ? trx.fn.now() : null,
            updated_at: trx.fn.now(),
          });
      });
    },

    async find(id) {
      const row = await table().where({ id }).first();
      return row ? toDelivery(row as DeliveryRow) : null;
    },

    async attemptsOf(id) {
      const rows = (await knex('webhook_delivery_attempts')
        .where({ delivery_id: id })
        .orderBy([{ column: 'attempt' }, { column: 'id' }])
        .limit(200)) as {
        attempt: number;
        status_code: number | null;
        latency_ms: number;
        error: string | null;
        response_body_prefix: string | null;
        attempted_at: Date;
        next_attempt_at: Date | null;
      }[];
      return rows.map((row) => ({
        attempt: row.attempt,
        statusCode: row.status_code,
        latencyMs: row.latency_ms,
        error: row.error,
        responseBodyPrefix: row.response_body_prefix,
        attemptedAt: row.attempted_at,
        nextAttemptAt: row.next_attempt_at,
      }));
    },

    async list(endpointId, filter, page) {
      const filtered = () => {
        const query = table().where({ endpoint_id: endpointId });
        return filter.status ? query.andWhere({ status: filter.status }) : query;
      };
      return readNewestFirst(knex, filtered, page, toDelivery);
    },

    async redeliver(id, retryUntil, beforeCommit) {
      return knex.transaction(async (trx) => {
        const [row] = (await trx<DeliveryRow>('webhook_deliveries')
          .where({ id })
          .andWhere((query) => {
            query.whereNull('locked_until').orWhere('locked_until', '<=', knex.fn.now());
          })
          .update({
            status: 'pending',
            next_attempt_at: knex.fn.now() as unknown as Date,
            retry_until: retryUntil,
            updated_at: knex.fn.now() as unknown as Date,
          })
          .returning('*')) as DeliveryRow[];
        if (!row) return null;
        const again = toDelivery(row);
        await beforeCommit?.(again);
        return again;
      });
    },

    async pruneFinished(before, limit) {
      return table()
        .whereIn(
          'id',
          knex('webhook_deliveries')
            .select('id')
            .whereIn('status', ['succeeded', 'failed'])
            .andWhere('updated_at', '<', before)
            .limit(limit),
        )
        .delete();
    },

    async countPending() {
      const [{ count }] = (await table().where({ status: 'pending' }).count({ count: '*' })) as unknown as [
        { count: string },
      ];
      return Number(count);
    },
  };
}
