import {
  createBatcher,
  currentTraceCarrier,
  processOnce,
  type Consumer,
  type EventBus,
  type Knex,
} from '@payments/service-kit';
import type { DeliveryRepository, FanOutEvent } from '../data/delivery-repository.js';
import type { EndpointRepository } from '../data/endpoint-repository.js';
import type { EventRepository } from '../data/event-repository.js';
import type { SubscribableEvent } from '../domain/event-payload.js';
import { WEBHOOK_EVENT_OF } from '../domain/webhook-events.js';

const CONSUMER = 'webhook-delivery';

/** Deliveries in hand, and how many events one statement fans out at most. */
const PREFETCH = 200;
const BATCH_SIZE = 100;
/**
 * How long an event waits for others to join its statement. Events trickle in one by one at moderate rates (the
 * ledger announces each completion as it commits); an outgoing webhook a few milliseconds later costs nothing,
 * a statement per event costs this service and its database most of their CPU.
 */
const GATHER_MS = 10;

export interface FanOutDeps {
  bus: EventBus;
  knex: Knex;
  endpoints: EndpointRepository;
  deliveries: DeliveryRepository;
  events: EventRepository;
  retryWindowMs: number;
  /** Tells the delivery worker there is something new to send. */
  wake: () => void;
  /** Tells the event renderer there may be events to render. */
  wakeRenderer: () => void;
  prefetch?: number;
}

/**
 * The service's queue: each event is kept for its user to read (GET /events) and becomes one durable delivery per
 * subscribed endpoint, written together with
 * the inbox record, so a redelivered event adds nothing and a crash before the commit loses nothing (the broker
 * redelivers it). Rendering and sending are the delivery worker's, never the consumer's: neither a slow endpoint
 * nor a slow ledger holds up the queue, and their failures are retried with the deliveries' own backoff.
 *
 * Most events concern users without endpoints (every deposit announces its completion). Events that arrive
 * together are fanned out together: one statement for up to BATCH_SIZE of them (group commit, the kit's
 * batcher), which keeps each event and writes no delivery for one no enabled endpoint subscribes to; each event is
 * acknowledged once that statement has committed. A batch that fails is retried one event at a time, so a poison
 * event fails alone.
 */
export function startEventFanOut(deps: FanOutDeps): Promise<Consumer> {
  const fanOuts = createBatcher<FanOutEvent, void>(
    async (batch) => {
      const retryUntil = new Date(Date.now() + deps.retryWindowMs);
      const created = await deps.deliveries.fanOut(CONSUMER, batch, retryUntil);
      if (created > 0) deps.wake();
      deps.wakeRenderer();
      return batch.map(() => undefined);
    },
    { maxSize: BATCH_SIZE },
  );

  // The events that arrive within GATHER_MS of the first are submitted in the same turn, so one run takes them.
  let gathering: Promise<void> | null = null;
  const gathered = () =>
    (gathering ??= new Promise<void>((resolve) =>
      setTimeout(() => {
        gathering = null;
        resolve();
      }, GATHER_MS),
    ));

  const fanOut = async (event: SubscribableEvent, userId: string) => {
    // Taken in the delivery's span: events fanned out together each keep their own trace.
    const traceContext = currentTraceCarrier();
    await gathered();
    await fanOuts.submit({ event, userId, eventType: WEBHOOK_EVENT_OF[event.type], traceContext });
  };

  return deps.bus.consume(
    'webhook-delivery',
    {
      TransactionCompleted: (event) => fanOut(event, event.data.user_id),
      TransactionFailed: (event) => fanOut(event, event.data.user_id),
      TransactionCanceled: (event) => fanOut(event, event.data.user_id),
      TransactionReversed: (event) => fanOut(event, event.data.user_id),
      TransactionUpdated: (event) => fanOut(event, event.data.user_id),
      AccountOpened: (event) => fanOut(event, event.data.user_id),
      UserUpdated: (event) => fanOut(event, event.data.user_id),
      // A deleted user's endpoints go with them, and with them their pending deliveries, and their events.
      UserDeleted: async (event) => {
        await processOnce(deps.knex, CONSUMER, event.id, async () => {
          await deps.endpoints.deleteAllOf(event.data.user_id);
          await deps.events.deleteAllOf(event.data.user_id);
        });
      },
    },
    { prefetch: deps.prefetch ?? PREFETCH },
  );
}
