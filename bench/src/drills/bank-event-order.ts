import { createHttpClient } from '../harness/http-client.js';
import type { BankDrillContext } from './bank-drill.js';

/** How the sandbox's events about payments reached webhook-ingest. */
export interface EventArrivals {
  /** Distinct Stripe events webhook-ingest recorded. */
  events: number;
  /** Deliveries of them, copies included, and the copies it answered as deliveries of an event it had. */
  deliveries: number;
  duplicates: number;
  /** Events recorded after an event of the same payment that the sandbox made later. */
  late: number;
  /** Which kinds of event came late, counted. */
  lateKinds: Record<string, number>;
}

interface Arrival {
  eventId: string;
  type: string;
  payment: string;
  objectId: string;
  refunded: number | null;
  receivedUs: bigint;
}

const ORDERED_TYPES = [
  'payment_intent.succeeded',
  'charge.refunded',
  'charge.dispute.created',
  'charge.dispute.closed',
];

/**
 * Whether the sandbox made `a` before `b`, both about one payment: its success before any refund or dispute, a
 * lower refunded total before a higher one, a dispute's opening before its close.
 */
function madeBefore(a: Arrival, b: Arrival): boolean {
  if (a.type === 'payment_intent.succeeded') return b.type !== a.type;
  if (a.type === 'charge.refunded' && b.type === a.type) return (a.refunded ?? 0) < (b.refunded ?? 0);
  return (
    a.type === 'charge.dispute.created' && b.type === 'charge.dispute.closed' && a.objectId === b.objectId
  );
}

const lateKind = (late: Arrival, overtaker: Arrival) =>
  late.type === 'charge.refunded'
    ? 'a refunded total after a higher one'
    : late.type === 'charge.dispute.created'
      ? "a dispute's opening after its close"
      : `a payment after its ${overtaker.type.startsWith('charge.dispute') ? 'dispute' : 'refund'}`;

/**
 * Reads webhook-ingest's records of the payment events (when each was first received) and its counters of
 * deliveries: how the sandbox's duplicated, reordered delivery looked from the receiving side.
 */
export async function eventArrivals(
  context: Pick<BankDrillContext, 'webhookDb' | 'target'>,
): Promise<EventArrivals> {
  const { rows } = await context.webhookDb.query<{
    event_id: string;
    type: string;
    payment: string;
    object_id: string;
    refunded: string | null;
    received_us: string;
  }>(
    `SELECT event_id, event_type AS type,
            coalesce(payload->'data'->'object'->>'payment_intent', payload->'data'->'object'->>'id') AS payment,
            payload->'data'->'object'->>'id' AS object_id,
            payload->'data'->'object'->>'amount_refunded' AS refunded,
            (extract(epoch FROM received_at) * 1000000)::bigint AS received_us
     FROM webhook_events WHERE source = 'provider' AND event_type = ANY($1::text[])`,
    [ORDERED_TYPES],
  );
  const byPayment = new Map<string, Arrival[]>();
  for (const row of rows) {
    const arrival: Arrival = {
      eventId: row.event_id,
      type: row.type,
      payment: row.payment,
      objectId: row.object_id,
      refunded: row.refunded === null ? null : Number(row.refunded),
      receivedUs: BigInt(row.received_us),
    };
    byPayment.set(arrival.payment, [...(byPayment.get(arrival.payment) ?? []), arrival]);
  }
  const lateKinds: Record<string, number> = {};
  let late = 0;
  for (const arrivals of byPayment.values()) {
    for (const event of arrivals) {
      // Strictly earlier: events recorded in one statement share their time and say nothing of their order.
      const overtaker = arrivals.find(
        (other) => madeBefore(event, other) && other.receivedUs < event.receivedUs,
      );
      if (!overtaker) continue;
      late += 1;
      const kind = lateKind(event, overtaker);
      lateKinds[kind] = (lateKinds[kind] ?? 0) + 1;
    }
  }
  const { events, deliveries, duplicates } = await deliveryCounts(context);
  return { events, deliveries, duplicates, late, lateKinds };
}

/** webhook-ingest's counters of provider events: received (copies included), and answered as duplicates. */
async function deliveryCounts(context: Pick<BankDrillContext, 'webhookDb' | 'target'>) {
  // Raw: webhook-ingest's own metrics (service token), not an API operation the client covers.
  const client = createHttpClient(context.target.webhookIngestUrl, 1);
  try {
    const answer = await client.send({
      method: 'GET',
      path: '/metrics',
      headers: { authorization: `Bearer ${context.target.serviceToken}` },
    });
    const total = (name: string) =>
      answer.body
        .split('\n')
        .filter((line) => line.startsWith(`${name}{`) && line.includes('source="provider"'))
        .reduce((sum, line) => sum + Number(line.slice(line.lastIndexOf(' ') + 1)), 0);
    const { rows } = await context.webhookDb.query<{ count: string }>(
      `SELECT count(*) FROM webhook_events WHERE source = 'provider'`,
    );
    return {
      events: Number(rows[0]?.count ?? 0),
      deliveries: total('webhook_events_received_total'),
      duplicates: total('webhook_events_duplicate_total'),
    };
  } finally {
    client.close();
  }
}
