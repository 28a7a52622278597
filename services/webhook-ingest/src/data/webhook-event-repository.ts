import type { Knex } from '@payments/service-kit';
import type { IncomingWebhookEvent, PaymentProcessedData, WebhookSource } from '../domain/webhook-event.js';

export interface WebhookEventRecord {
  eventId: string;
  source: WebhookSource;
  type: string;
  /** The PaymentProcessed data recorded with the event; null when it has no effect. */
  payment: PaymentProcessedData | null;
  receivedAt: Date;
  publishedAt: Date | null;
}

export interface WebhookEventRepository {
  /** Records the event unless its id is already recorded; returns the record and whether it is new. */
  record(event: IncomingWebhookEvent): Promise<{ record: WebhookEventRecord; isNew: boolean }>;
  /**
   * Locks the record and, if it is still unpublished, runs `publish` and marks it published before the lock
   * is released, so concurrent deliveries of one event publish it once. A failing `publish` leaves it unpublished.
   */
  publishOnce(
    eventId: string,
    publish: (record: WebhookEventRecord) => Promise<void>,
  ): Promise<'published' | 'already-published'>;
}

interface WebhookEventRow {
  event_id: string;
  source: WebhookSource;
  event_type: string;
  event_data: PaymentProcessedData | null;
  received_at: Date;
  published_at: Date | null;
}

const COLUMNS = ['event_id', 'source', 'event_type', 'event_data', 'received_at', 'published_at'];

function toRecord(row: WebhookEventRow): WebhookEventRecord {
  return {
    eventId: row.event_id,
    source: row.source,
    type: row.event_type,
    payment: row.event_data,
    receivedAt: row.received_at,
    publishedAt: row.published_at,
  };
}

export function createWebhookEventRepository(knex: Knex): WebhookEventRepository {
  const table = (db: Knex | Knex.Transaction = knex) => db('webhook_events');

  return {
    async record(event) {
      const inserted: WebhookEventRow[] = await table()
        .insert({
          event_id: event.eventId,
          source: event.source,
          event_type: event.type,
          payload: JSON.stringify(event.payload),
          outcome: event.payment?.status ?? 'ignored',
          event_data: event.payment ? JSON.stringify(event.payment) : null,
        })
        .onConflict('event_id')
        .ignore()
        .returning(COLUMNS);
      if (inserted[0]) return { record: toRecord(inserted[0]), isNew: true };
      const existing: WebhookEventRow | undefined = await table()
        .select(COLUMNS)
        .where({ event_id: event.eventId })
        .first();
      if (!existing) throw new Error(`webhook event ${event.eventId} vanished after a conflicting insert`);
      return { record: toRecord(existing), isNew: false };
    },

    publishOnce(eventId, publish) {
      return knex.transaction(async (trx) => {
        const row: WebhookEventRow | undefined = await table(trx)
          .select(COLUMNS)
          .where({ event_id: eventId })
          .forUpdate()
          .first();
        if (!row) throw new Error(`webhook event ${eventId} is not recorded`);
        if (row.published_at) return 'already-published';
        await publish(toRecord(row));
        await table(trx).where({ event_id: eventId }).update({ published_at: trx.fn.now() });
        return 'published';
      });
    },
  };
}
