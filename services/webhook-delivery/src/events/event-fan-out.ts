import { randomUUID } from 'node:crypto';
import { processOnce, type Consumer, type EventBus, type Knex } from '@payments/service-kit';
import type { DeliveryRepository } from '../data/delivery-repository.js';
import type { EndpointRepository } from '../data/endpoint-repository.js';
import type { SubscribableEvent } from '../domain/event-payload.js';
import { WEBHOOK_EVENT_OF } from '../domain/webhook-events.js';

const CONSUMER = 'webhook-delivery';

export interface FanOutDeps {
  bus: EventBus;
  knex: Knex;
  endpoints: EndpointRepository;
  deliveries: DeliveryRepository;
  retryWindowMs: number;
  /** Tells the delivery worker there is something new to send. */
  wake: () => void;
  prefetch?: number;
}

/**
 * The service's queue: each event becomes one durable delivery per subscribed endpoint, written together with
 * the inbox record, so a redelivered event adds nothing and a crash before the commit loses nothing (the broker
 * redelivers it). Rendering and sending are the delivery worker's, never the consumer's: neither a slow endpoint
 * nor a slow ledger holds up the queue, and their failures are retried with the deliveries' own backoff.
 */
export function startEventFanOut(deps: FanOutDeps): Promise<Consumer> {
  const fanOut = async (event: SubscribableEvent, userId: string) => {
    const subscribed = await deps.endpoints.subscribed(userId, WEBHOOK_EVENT_OF[event.type]);
    if (subscribed.length === 0) return;
    const retryUntil = new Date(Date.now() + deps.retryWindowMs);
    await processOnce(deps.knex, CONSUMER, event.id, (trx) =>
      deps.deliveries.insertAll(
        trx,
        subscribed.map((endpoint) => ({
          id: randomUUID(),
          endpointId: endpoint.id,
          eventType: WEBHOOK_EVENT_OF[event.type],
          event,
          apiVersion: endpoint.apiVersion,
          retryUntil,
        })),
      ),
    );
    deps.wake();
  };

  return deps.bus.consume(
    'webhook-delivery',
    {
      TransactionCompleted: (event) => fanOut(event, event.data.user_id),
      TransactionFailed: (event) => fanOut(event, event.data.user_id),
      TransactionCanceled: (event) => fanOut(event, event.data.user_id),
      TransactionReversed: (event) => fanOut(event, event.data.user_id),
      AccountOpened: (event) => fanOut(event, event.data.user_id),
      UserUpdated: (event) => fanOut(event, event.data.user_id),
      // A deleted user's endpoints go with them, and with them their pending deliveries.
      UserDeleted: async (event) => {
        await processOnce(deps.knex, CONSUMER, event.id, async () => {
          await deps.endpoints.deleteAllOf(event.data.user_id);
        });
      },
    },
    { prefetch: deps.prefetch ?? 20 },
  );
}
