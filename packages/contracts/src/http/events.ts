import { Type } from '@sinclair/typebox';
import { CursorQuery, HasMore } from './common.js';
import { WebhookEventPayload, WebhookEventTypeSchema } from './webhook-endpoints.js';

const UnixSeconds = (description: string) =>
  Type.Integer({ minimum: 0, maximum: 253_402_300_799, description });

/**
 * GET /events: the caller's events, newest first, by cursor. `created[…]` bounds are Unix seconds and compare with
 * an event's `created`, as Stripe's do.
 */
export const EventListQuery = Type.Object(
  {
    limit: Type.Integer({ minimum: 1, maximum: 100, default: 20, description: 'Page size' }),
    ...CursorQuery.properties,
    type: Type.Optional(WebhookEventTypeSchema),
    'created[gte]': Type.Optional(UnixSeconds('Only events created at or after this moment')),
    'created[gt]': Type.Optional(UnixSeconds('Only events created after this moment')),
    'created[lte]': Type.Optional(UnixSeconds('Only events created at or before this moment')),
    'created[lt]': Type.Optional(UnixSeconds('Only events created before this moment')),
  },
  { additionalProperties: false },
);

/** A page of events: `{ data, has_more }`, as Stripe's lists answer (no offset, so no total). */
export const EventPage = Type.Object(
  { data: Type.Array(WebhookEventPayload), has_more: HasMore },
  { additionalProperties: false },
);
