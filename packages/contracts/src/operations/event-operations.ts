import { PROTECTED, type Operation } from './operation.js';

/** Webhook-delivery: the caller's events, as its outgoing webhooks carry them, for 30 days. */
export const EVENT_OPERATIONS = {
  listEvents: {
    method: 'get',
    path: '/events',
    owner: 'webhook-delivery',
    access: 'user',
    tag: 'Webhook endpoints',
    summary: 'Your events of the last 30 days, newest first',
    description:
      'Every event about your transactions, accounts and user, whether or not an endpoint subscribes to it: the ' +
      'body a webhook endpoint receives for it (`type`, `created`, `data.object` with your `metadata` and ' +
      '`reference`), rendered once, at the current API version, shortly after it happened. Page by cursor: ' +
      'while `has_more`, ask again with `starting_after` set to the last `id` of the page. A cursor that names ' +
      'none of your events is a 400. Only your own events, an admin’s too.',
    query: 'EventListQuery',
    success: { status: 200, description: 'A page of events, newest first', schema: 'EventPage' },
    alsoAnswers: [503],
    errors: [400, ...PROTECTED],
  },
  getEvent: {
    method: 'get',
    path: '/events/{id}',
    owner: 'webhook-delivery',
    access: 'user',
    tag: 'Webhook endpoints',
    summary: 'One of your events',
    description: 'Another user’s event, or one older than 30 days, is a 404.',
    success: { status: 200, description: 'The event', schema: 'WebhookEvent' },
    alsoAnswers: [503],
    errors: [...PROTECTED, 404],
  },
} satisfies Record<string, Operation>;
