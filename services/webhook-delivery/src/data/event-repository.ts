import type { ApiVersion, WebhookEventType } from '@payments/contracts';
import {
  keysetCondition,
  turned,
  unknownCursor,
  type KeysetOrder,
  type Knex,
  type PageRequest,
} from '@payments/service-kit';
import type { SubscribableEvent } from '../domain/event-payload.js';

/** A user's event as stored: the bus event, and the body a webhook at `apiVersion` carries once rendered. */
export interface StoredEvent {
  id: string;
  userId: string;
  type: WebhookEventType;
  event: SubscribableEvent;
  apiVersion: ApiVersion;
  payload: string | null;
  createdAt: Date;
}

interface EventRow {
  id: string;
  user_id: string;
  type: string;
  event: SubscribableEvent;
  api_version: string;
  payload: string | null;
  created_at: Date;
}

const toStoredEvent = (row: EventRow): StoredEvent => ({
  id: row.id,
  userId: row.user_id,
  type: row.type as WebhookEventType,
  event: row.event,
  apiVersion: row.api_version as ApiVersion,
  payload: row.payload,
  createdAt: row.created_at,
});

/** Which of a user's events: of one type, and within bounds on `created_at` (inclusive `from`, exclusive `before`). */
export interface EventFilter {
  type?: WebhookEventType;
  from?: Date;
  before?: Date;
}

const NEWEST_FIRST: KeysetOrder = { keys: ['created_at', 'id'], direction: 'desc' };

export interface EventRepository {
  /** The user's event, or null: another user's is not theirs to know of. */
  find(userId: string, id: string): Promise<StoredEvent | null>;
  /** Any user's event (to send it as a webhook). */
  get(id: string): Promise<StoredEvent | null>;
  /** A page of the user's events, newest first, by cursor (a cursor not among their events is a 400). */
  list(
    userId: string,
    filter: EventFilter,
    page: Pick<PageRequest, 'limit' | 'cursor'>,
  ): Promise<{ data: StoredEvent[]; hasMore: boolean }>;
  /** Stores the rendered body unless one is there already; returns the body the event keeps. */
  fixPayload(id: string, payload: string): Promise<string | null>;
  /**
   * Takes up to `limit` events due a render, and puts each off by its backoff: one that fails is tried again
   * then, one rendered meanwhile is done. Two processes take different events.
   */
  claimUnrendered(limit: number, now?: Date): Promise<StoredEvent[]>;
  /** Deletes up to `limit` events created before `before`. */
  pruneOlderThan(before: Date, limit: number): Promise<number>;
  deleteAllOf(userId: string): Promise<number>;
}

export function createEventRepository(knex: Knex): EventRepository {
  const table = () => knex<EventRow>('webhook_events');
  return {
    async find(userId, id) {
      const row = await table().where({ id, user_id: userId }).first();
      return row ? toStoredEvent(row as EventRow) : null;
    },

    async get(id) {
      const row = await table().where({ id }).first();
      return row ? toStoredEvent(row as EventRow) : null;
    },

    async list(userId, filter, page) {
      const scope = () => {
        const query = table().where({ user_id: userId });
        if (filter.type) query.where({ type: filter.type });
        if (filter.from) query.where('created_at', '>=', filter.from);
        if (filter.before) query.where('created_at', '<', filter.before);
        return query;
      };
      const { cursor, limit } = page;
      if (cursor) {
        // The cursor must be one of the user's events, whatever the filters.
        const [found, rows] = await Promise.all([
          table().where({ id: cursor.id, user_id: userId }).first('id'),
          keysetCondition(
            knex,
            scope().select('*'),
            table().where({ id: cursor.id }),
            NEWEST_FIRST,
            cursor,
          ).limit(limit + 1) as Promise<EventRow[]>,
        ]);
        if (!found) throw unknownCursor(cursor);
        return {
          data: turned(rows.slice(0, limit), cursor).map(toStoredEvent),
          hasMore: rows.length > limit,
        };
      }
      const rows = (await scope()
        .orderBy([
          { column: 'created_at', order: 'desc' },
          { column: 'id', order: 'desc' },
        ])
        .limit(limit + 1)) as EventRow[];
      return { data: rows.slice(0, limit).map(toStoredEvent), hasMore: rows.length > limit };
    },

    async fixPayload(id, payload) {
      const [row] = (await table()
        .where({ id })
        .update({ payload: knex.raw('coalesce(payload, ?)', [payload]) as unknown as string })
        .returning('payload')) as { payload: string }[];
      return row?.payload ?? null;
    },

    async claimUnrendered(limit, now = new Date()) {
      const { rows } = (await knex.raw(
        `
        UPDATE webhook_events e
        SET render_attempts = e.render_attempts + 1,
            render_after = ?::timestamptz + make_interval(secs => least(3600, 30 * power(2, e.render_attempts)))
        FROM (
          SELECT id FROM webhook_events
          WHERE payload IS NULL AND render_after <= ?
          ORDER BY render_after
          LIMIT ?
          FOR UPDATE SKIP LOCKED
        ) due
        WHERE e.id = due.id
        RETURNING e.*
        `,
        [now, now, limit],
      )) as { rows: EventRow[] };
      return rows.map(toStoredEvent);
    },

    async pruneOlderThan(before, limit) {
      return table()
        .whereIn('id', knex('webhook_events').select('id').where('created_at', '<', before).limit(limit))
        .delete();
    },

    async deleteAllOf(userId) {
      return table().where({ user_id: userId }).delete();
    },
  };
}
