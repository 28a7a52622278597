import type { WebhookEventRecord } from '@payments/contracts';
import type { Knex } from '@payments/service-kit';

/** The events that name a transaction, and what became of each at each endpoint (a timeline's part, ADR 0126). */
export interface TransactionActivityRepository {
  /** Oldest first: the newest `limit` events, each with its deliveries and their attempts; and whether more were. */
  findAbout(transactionId: string, limit: number): Promise<{ data: WebhookEventRecord[]; hasMore: boolean }>;
}

/** The ids an event names, exactly as the index webhook_events_transactions (migration 005) spells them. */
const NAMED_TRANSACTIONS = `ARRAY[event#>>'{data,transaction_id}', event#>>'{data,original_transaction_id}']`;
/** Attempts kept per delivery in a timeline: this many first ones, and as many latest ones. */
const ATTEMPTS_AT_EACH_END = 10;

interface EventRow {
  id: string;
  type: string;
  created_at: Date;
}
interface DeliveryRow {
  id: string;
  event_id: string;
  endpoint_id: string;
  url: string;
  status: string;
  created_at: Date;
}
interface AttemptRow {
  delivery_id: string;
  attempt: number;
  status_code: number | null;
  error: string | null;
  latency_ms: number;
  attempted_at: Date;
}

export function createTransactionActivityRepository(knex: Knex): TransactionActivityRepository {
  return {
    async findAbout(transactionId, limit) {
      const events: EventRow[] = await knex('webhook_events')
        .whereRaw(`${NAMED_TRANSACTIONS} && ARRAY[?]::text[]`, [transactionId])
        .select('id', 'type', 'created_at')
        .orderBy([
          { column: 'created_at', order: 'desc' },
          { column: 'id', order: 'desc' },
        ])
        .limit(limit + 1);
      const kept = events.slice(0, limit).reverse();
      const deliveries: DeliveryRow[] =
        kept.length === 0
          ? []
          : await knex('webhook_deliveries AS d')
              .join('webhook_endpoints AS e', 'e.id', 'd.endpoint_id')
              .whereIn(
                'd.event_id',
                kept.map((event) => event.id),
              )
              .select('d.id', 'd.event_id', 'd.endpoint_id', 'e.url', 'd.status', 'd.created_at')
              .orderBy('d.created_at');
      const attempts: AttemptRow[] =
        deliveries.length === 0
          ? []
          : await knex('webhook_delivery_attempts')
              .whereIn(
                'delivery_id',
                deliveries.map((delivery) => delivery.id),
              )
              // By the index on (delivery_id, attempt): the first ones, and those within reach of the last.
              .whereRaw(
                `(attempt <= ? OR attempt > (SELECT max(latest.attempt) FROM webhook_delivery_attempts latest
                   WHERE latest.delivery_id = webhook_delivery_attempts.delivery_id) - ?)`,
                [ATTEMPTS_AT_EACH_END, ATTEMPTS_AT_EACH_END],
              )
              .select('delivery_id', 'attempt', 'status_code', 'error', 'latency_ms', 'attempted_at')
              .orderBy([{ column: 'delivery_id' }, { column: 'attempt' }]);
      return {
        data: kept.map((event) => ({
          id: event.id,
          type: event.type,
          created_at: event.created_at.toISOString(),
          deliveries: deliveries
            .filter((delivery) => delivery.event_id === event.id)
            .map((delivery) => ({
              id: delivery.id,
              endpoint_id: delivery.endpoint_id,
              url: delivery.url,
              status: delivery.status,
              created_at: delivery.created_at.toISOString(),
              attempts: attempts
                .filter((attempt) => attempt.delivery_id === delivery.id)
                .map((attempt) => ({
                  attempt: attempt.attempt,
                  status_code: attempt.status_code,
                  error: attempt.error,
                  latency_ms: attempt.latency_ms,
                  attempted_at: attempt.attempted_at.toISOString(),
                })),
            })),
        })),
        hasMore: events.length > limit,
      };
    },
  };
}
