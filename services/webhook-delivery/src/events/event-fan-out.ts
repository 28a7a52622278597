import { randomUUID } from 'node:crypto';
import type { ApiVersion, WebhookEventPayloadBody } from '@payments/contracts';
import { processOnce, type Consumer, type EventBus, type Knex } from '@payments/service-kit';
import type { DeliveryRepository } from '../data/delivery-repository.js';
import type { EndpointRepository } from '../data/endpoint-repository.js';
import type { ObjectRenderer, RenderableEvent } from '../data/object-renderer.js';
import { WEBHOOK_EVENT_OF } from '../domain/webhook-events.js';

const CONSUMER = 'webhook-delivery';

export interface FanOutDeps {
  bus: EventBus;
  knex: Knex;
  endpoints: EndpointRepository;
  deliveries: DeliveryRepository;
  renderer: ObjectRenderer;
  retryWindowMs: number;
  /** Tells the delivery worker there is something new to send. */
  wake: () => void;
  prefetch?: number;
}

/** The body every endpoint of one API version receives for an event: the same bytes on every attempt. */
export function eventPayload(
  event: RenderableEvent,
  object: Record<string, unknown>,
  version: ApiVersion,
): string {
  const body = {
    id: event.id,
    object: 'event',
    type: WEBHOOK_EVENT_OF[event.type],
    api_version: version,
    created: Math.floor(Date.parse(event.occurred_at) / 1000),
    created_at: new Date(event.occurred_at).toISOString(),
    data: { object: object as WebhookEventPayloadBody['data']['object'] },
  } satisfies WebhookEventPayloadBody;
  return JSON.stringify(body);
}

/**
 * The service's queue: each event becomes one durable delivery per subscribed endpoint, written together with
 * the inbox record, so a redelivered event adds nothing and a crash before the commit loses nothing (the broker
 * redelivers it). Sending is the delivery worker's, never the consumer's: a slow endpoint holds up no event.
 */
export function startEventFanOut(deps: FanOutDeps): Promise<Consumer> {
  const fanOut = async (event: RenderableEvent, userId: string) => {
    const subscribed = await deps.endpoints.subscribed(userId, WEBHOOK_EVENT_OF[event.type]);
    if (subscribed.length === 0) return;
    const payloads = new Map<ApiVersion, string>();
    for (const version of new Set(subscribed.map((endpoint) => endpoint.apiVersion))) {
      payloads.set(version, eventPayload(event, await deps.renderer.render(event, version), version));
    }
    const retryUntil = new Date(Date.now() + deps.retryWindowMs);
    await processOnce(deps.knex, CONSUMER, event.id, (trx) =>
      deps.deliveries.insertAll(
        trx,
        subscribed.map((endpoint) => ({
          id: randomUUID(),
          endpointId: endpoint.id,
          eventId: event.id,
          eventType: WEBHOOK_EVENT_OF[event.type],
          payload: payloads.get(endpoint.apiVersion) as string,
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
