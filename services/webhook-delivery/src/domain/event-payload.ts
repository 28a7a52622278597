import {
  CURRENT_VERSION,
  type AnyEvent,
  type ApiVersion,
  type WebhookEventPayloadBody,
} from '@payments/contracts';
import { WEBHOOK_EVENT_OF, type SubscribableBusEvent } from './webhook-events.js';

/**
 * The version the events API renders an event's object at, once: the latest, as Stripe renders an event at the
 * account's version when it happens. A webhook endpoint at this version is sent the very same body.
 */
export const EVENT_API_VERSION: ApiVersion = CURRENT_VERSION;

export type SubscribableEvent = Extract<AnyEvent, { type: SubscribableBusEvent }>;

/** The body an endpoint receives for an event, with the object rendered at its API version. */
export function eventPayload(
  event: SubscribableEvent,
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
