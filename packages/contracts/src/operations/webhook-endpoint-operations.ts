import { JSON_BODY, PROTECTED, type Operation } from './operation.js';

/** Webhook-delivery: a client's endpoints for outgoing webhooks, and their deliveries (see the document's `webhooks`). */
export const WEBHOOK_ENDPOINT_OPERATIONS = {
  createWebhookEndpoint: {
    method: 'post',
    path: '/webhook-endpoints',
    owner: 'webhook-delivery',
    access: 'user',
    tag: 'Webhook endpoints',
    summary: 'Register an endpoint for events; the signing secret is shown once',
    description:
      'The URL must be http or https and resolve only to public addresses (checked again at every delivery). ' +
      'Objects in deliveries are rendered at the API version this request is made with. Deliveries are signed ' +
      'in `Stripe-Signature` (`t=…,v1=…`, HMAC-SHA256 of `<t>.<body>`), at least once, with retries for 3 days; ' +
      'neither order nor uniqueness is promised: deduplicate on the event `id`. The endpoint is always the ' +
      'caller’s own: nobody, an admin included, creates one (and learns its secret) for someone else.',
    body: 'NewWebhookEndpoint',
    success: {
      status: 201,
      description: 'The endpoint, with its secret',
      schema: 'WebhookEndpointWithSecret',
      headers: ['Location'],
    },
    errors: [...JSON_BODY, ...PROTECTED, 422],
  },
  listWebhookEndpoints: {
    method: 'get',
    path: '/webhook-endpoints',
    owner: 'webhook-delivery',
    access: 'user',
    tag: 'Webhook endpoints',
    summary: 'Your endpoints (an admin’s: everyone’s, or one user’s)',
    query: 'WebhookEndpointListQuery',
    success: { status: 200, description: 'A page of endpoints', schema: 'WebhookEndpointPage' },
    errors: [400, ...PROTECTED],
  },
  getWebhookEndpoint: {
    method: 'get',
    path: '/webhook-endpoints/{id}',
    owner: 'webhook-delivery',
    access: 'user',
    tag: 'Webhook endpoints',
    summary: 'An endpoint (without its secret)',
    description:
      'An endpoint whose signing secret the service cannot open (sealed under a key an operator dropped too ' +
      'early) answers 500 saying so; its deliveries wait, and rotating its secret mends it.',
    success: { status: 200, description: 'The endpoint', schema: 'WebhookEndpoint' },
    errors: [...PROTECTED, 404],
  },
  updateWebhookEndpoint: {
    method: 'put',
    path: '/webhook-endpoints/{id}',
    owner: 'webhook-delivery',
    access: 'user',
    tag: 'Webhook endpoints',
    summary:
      'Change an endpoint’s URL, events, description or API version, or enable or disable it (partial)',
    description:
      'An admin may only enable or disable another user’s endpoint (403 for any other field: where its events ' +
      'go, which ones and how they are rendered and signed are its owner’s); that change lands in the trail ' +
      'of admin actions with its optional `reason`, or is not made.',
    body: 'WebhookEndpointUpdate',
    success: { status: 200, description: 'The endpoint', schema: 'WebhookEndpoint' },
    errors: [...JSON_BODY, ...PROTECTED, 404],
  },
  deleteWebhookEndpoint: {
    method: 'delete',
    path: '/webhook-endpoints/{id}',
    owner: 'webhook-delivery',
    access: 'user',
    tag: 'Webhook endpoints',
    summary: 'Delete an endpoint and its pending deliveries',
    description:
      'An admin deleting another user’s endpoint may say why (`reason`); the deletion lands in the trail of ' +
      'admin actions, or is not made.',
    body: 'AdminReason',
    bodyOptional: true,
    success: { status: 204, description: 'Deleted' },
    errors: [...JSON_BODY, ...PROTECTED, 404],
  },
  rotateWebhookEndpointSecret: {
    method: 'post',
    path: '/webhook-endpoints/{id}/rotate-secret',
    owner: 'webhook-delivery',
    access: 'user',
    tag: 'Webhook endpoints',
    summary: 'A new signing secret; the old one keeps signing too for the grace period (default 24 h)',
    description:
      'During the grace period every delivery carries two `v1=` signatures, one per secret, so a receiver ' +
      'holding either verifies it. The body is optional. Only the endpoint’s owner rotates it: an admin gets ' +
      '403, since whoever holds the secret can sign events the owner’s server trusts.',
    success: {
      status: 200,
      description: 'The endpoint, with its new secret',
      schema: 'WebhookEndpointWithSecret',
    },
    errors: [...JSON_BODY, ...PROTECTED, 404],
  },
  listWebhookDeliveries: {
    method: 'get',
    path: '/webhook-endpoints/{id}/deliveries',
    owner: 'webhook-delivery',
    access: 'user',
    tag: 'Webhook endpoints',
    summary: 'The delivery log of an endpoint, newest first',
    query: 'WebhookDeliveryListQuery',
    success: { status: 200, description: 'A page of deliveries', schema: 'WebhookDeliveryPage' },
    errors: [400, ...PROTECTED, 404],
  },
  getWebhookDelivery: {
    method: 'get',
    path: '/webhook-endpoints/{id}/deliveries/{delivery_id}',
    owner: 'webhook-delivery',
    access: 'user',
    tag: 'Webhook endpoints',
    summary: 'A delivery and each of its attempts (status code, latency, next retry)',
    success: { status: 200, description: 'The delivery', schema: 'WebhookDeliveryDetail' },
    errors: [...PROTECTED, 404],
  },
  redeliverWebhook: {
    method: 'post',
    path: '/webhook-endpoints/{id}/deliveries/{delivery_id}/redeliver',
    owner: 'webhook-delivery',
    access: 'user',
    tag: 'Webhook endpoints',
    summary: 'Send a delivery again now, with a fresh retry window',
    description:
      'An admin sending another user’s delivery again may say why (`reason`); it lands in the trail of admin ' +
      'actions, or is not sent.',
    body: 'AdminReason',
    bodyOptional: true,
    success: { status: 202, description: 'The delivery, due now', schema: 'WebhookDelivery' },
    errors: [...JSON_BODY, ...PROTECTED, 404, 409],
  },
  drillWebhookEndpoint: {
    method: 'post',
    path: '/webhook-endpoints/{id}/drill',
    owner: 'webhook-delivery',
    access: 'user',
    tag: 'Webhook endpoints',
    summary:
      'Test your receiver: signed drill events, a duplicate, two out of order, a stale and a forged one',
    description:
      'Sends the endpoint, one after another, six deliveries of drill events (`type` `drill.<your recent event ' +
      'type>`, `drill: true`, ids `evt_drill_…`, nothing a real handler acts on), signed and sent like real ' +
      'deliveries: a valid event, the same event again, a later event before an earlier one, one signed ten ' +
      'minutes ago and one with a wrong signature; and answers, per case, whether the receiver accepted (2xx) ' +
      'exactly the valid ones. A receiver that answers `{"duplicate": true}` to an event id it has already ' +
      'processed lets the drill confirm the duplicate was not processed twice; otherwise that case is ' +
      '`unconfirmed`. The whole drill is bounded in time (cases not reached are `not_sent`). Only the ' +
      'endpoint’s owner drills it (another user’s is 404, an admin gets 403: the drill signs with the owner’s ' +
      'secret); one drill per endpoint a minute and a few per user an hour (429 with `Retry-After`); an ' +
      'endpoint whose address is no longer public is refused (422) and nothing is sent.',
    success: { status: 200, description: 'The report, case by case', schema: 'WebhookDrill' },
    errors: [...PROTECTED, 404, 422],
  },
} satisfies Record<string, Operation>;
