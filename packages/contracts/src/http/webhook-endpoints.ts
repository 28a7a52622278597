import { Type, type Static } from '@sinclair/typebox';
import { WEBHOOK_DELIVERY_STATUSES, WEBHOOK_EVENT_TYPES } from '../enums.js';
import { API_VERSIONS } from '../versions.js';
import { AccountView } from './accounts.js';
import { AdminReason, Nullable, Page, PageQuery, Timestamp, Uuid } from './common.js';
import { TransactionView } from './money.js';
import { UserView } from './users.js';

export const WebhookEventTypeSchema = Type.Union(
  WEBHOOK_EVENT_TYPES.map((type) => Type.Literal(type)),
  { description: 'An event type an endpoint may subscribe to' },
);

const EndpointUrl = Type.String({
  minLength: 1,
  maxLength: 2048,
  description: 'http(s) URL the events are POSTed to; loopback, private and link-local addresses are refused',
});
const EndpointEvents = Type.Array(WebhookEventTypeSchema, { minItems: 1, maxItems: 16, uniqueItems: true });
const Description = Type.String({ maxLength: 500 });

/** POST /webhook-endpoints. */
export const NewWebhookEndpointBody = Type.Object(
  { url: EndpointUrl, events: EndpointEvents, description: Type.Optional(Description) },
  { additionalProperties: false },
);

/**
 * PUT /webhook-endpoints/{id}: a partial update. An admin changing another user's endpoint may only enable or
 * disable it (with an optional `reason`): where its events go and how they are signed are its owner's alone.
 */
export const WebhookEndpointUpdateBody = Type.Object(
  {
    url: Type.Optional(EndpointUrl),
    events: Type.Optional(EndpointEvents),
    description: Type.Optional(Description),
    enabled: Type.Optional(Type.Boolean()),
    api_version: Type.Optional(
      Type.Union(
        API_VERSIONS.map((version) => Type.Literal(version)),
        {
          description: 'Render the objects of events from now on at this version',
        },
      ),
    ),
    reason: Type.Optional(AdminReason),
  },
  { additionalProperties: false, minProperties: 1 },
);

/** POST /webhook-endpoints/{id}/rotate-secret: how long the previous secret keeps signing deliveries. */
export const RotateSecretBody = Type.Object(
  {
    grace_period_seconds: Type.Optional(
      Type.Integer({ minimum: 0, maximum: 604_800, description: 'Default 86400 (24 h); at most 7 days' }),
    ),
  },
  { additionalProperties: false },
);

export const WebhookEndpointView = Type.Object(
  {
    id: Uuid,
    user_id: Uuid,
    url: Type.String(),
    events: Type.Array(WebhookEventTypeSchema),
    description: Nullable(Type.String()),
    enabled: Type.Boolean(),
    api_version: Type.Union(
      API_VERSIONS.map((version) => Type.Literal(version)),
      {
        description:
          'The API version the objects in deliveries are rendered at: the one the endpoint was created with',
      },
    ),
    previous_secret_expires_at: Nullable(Timestamp),
    created_at: Timestamp,
    updated_at: Timestamp,
  },
  { additionalProperties: false },
);

/** The answer to creation and rotation: the only time the signing secret is shown. */
export const WebhookEndpointWithSecretView = Type.Object(
  { ...WebhookEndpointView.properties, secret: Type.String({ description: 'Shown once: store it now' }) },
  { additionalProperties: false },
);

export const WebhookEndpointPage = Page(WebhookEndpointView);

export const WebhookEndpointListQuery = Type.Object({
  ...PageQuery.properties,
  user_id: Type.Optional(Type.String({ format: 'uuid', description: 'Admins only: one user’s endpoints' })),
});

export const WebhookDeliveryListQuery = Type.Object({
  ...PageQuery.properties,
  status: Type.Optional(Type.Union(WEBHOOK_DELIVERY_STATUSES.map((status) => Type.Literal(status)))),
});

export const WebhookDeliveryAttemptView = Type.Object(
  {
    attempt: Type.Integer({ minimum: 1 }),
    status_code: Nullable(Type.Integer()),
    latency_ms: Type.Integer({ minimum: 0 }),
    error: Nullable(Type.String()),
    response_body_prefix: Nullable(Type.String({ description: 'At most the first 256 characters' })),
    attempted_at: Timestamp,
    next_attempt_at: Nullable(Timestamp),
  },
  { additionalProperties: false },
);

export const WebhookDeliveryView = Type.Object(
  {
    id: Uuid,
    endpoint_id: Uuid,
    event_id: Uuid,
    event_type: WebhookEventTypeSchema,
    status: Type.Union(WEBHOOK_DELIVERY_STATUSES.map((status) => Type.Literal(status))),
    attempts: Type.Integer({ minimum: 0 }),
    last_status_code: Nullable(Type.Integer()),
    last_latency_ms: Nullable(Type.Integer()),
    last_error: Nullable(Type.String()),
    next_attempt_at: Nullable(Timestamp),
    created_at: Timestamp,
    updated_at: Timestamp,
    delivered_at: Nullable(Timestamp),
  },
  { additionalProperties: false },
);

export const WebhookDeliveryDetailView = Type.Object(
  { ...WebhookDeliveryView.properties, attempt_log: Type.Array(WebhookDeliveryAttemptView) },
  { additionalProperties: false },
);

export const WebhookDeliveryPage = Page(WebhookDeliveryView);

/**
 * What an endpoint receives: the body of every delivery, signed in `Stripe-Signature`. `data.object` is the
 * resource as the API renders it at `api_version`.
 */
export const WebhookEventPayload = Type.Object(
  {
    id: Uuid,
    object: Type.Literal('event'),
    type: WebhookEventTypeSchema,
    api_version: Type.Union(API_VERSIONS.map((version) => Type.Literal(version))),
    created: Type.Integer({ description: 'Unix seconds' }),
    created_at: Timestamp,
    data: Type.Object({ object: Type.Union([TransactionView, AccountView, UserView]) }),
  },
  { additionalProperties: false },
);
export type WebhookEventPayloadBody = Static<typeof WebhookEventPayload>;
