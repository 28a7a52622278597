import type { OperationExamples } from '../operation.js';
import type { WEBHOOK_ENDPOINT_OPERATIONS } from '../webhook-endpoint-operations.js';
import { delivery, endpoint, ENDPOINT, NOW, page } from './samples.js';

const secret = 'whsec_5GkXq8VbN2mR7tYw3ZpL9cJd4FhA6sE1';

let drilled = 0;
/** One case of a drill's report; each case's event has an id of its own. */
const drillCase = (
  name: string,
  created: number,
  signedAt: number,
  expected: 'accept' | 'reject',
  statusCode: number,
  duplicate: boolean | null,
  outcome: string,
  detail: string,
) => ({
  case: name,
  // The duplicate is the valid case's event again.
  event_id: `evt_drill_4Fq8Lm2Rt6Yp${name === 'duplicate' ? drilled : (drilled += 1)}`,
  event_type: name === 'out_of_order_earlier' ? 'drill.transaction.failed' : 'drill.transaction.completed',
  created,
  signed_at: signedAt,
  expected,
  status_code: statusCode,
  latency_ms: 42,
  error: null,
  duplicate,
  outcome,
  detail,
});

/** Examples of outgoing webhooks: endpoints, their secrets and their deliveries. */
export const WEBHOOK_ENDPOINT_EXAMPLES = {
  createWebhookEndpoint: {
    request: {
      url: 'https://shop.example.com/hooks/payments',
      events: ['transaction.completed', 'transaction.failed', 'transaction.reversed'],
      description: 'Order fulfilment',
    },
    response: { ...endpoint, secret },
  },
  listWebhookEndpoints: { response: { data: [endpoint], has_more: false, pagination: page(1) } },
  getWebhookEndpoint: { response: endpoint },
  updateWebhookEndpoint: {
    request: { events: ['transaction.completed', 'transaction.failed'], api_version: '1.1' },
    response: { ...endpoint, events: ['transaction.completed', 'transaction.failed'], updated_at: NOW },
  },
  deleteWebhookEndpoint: { request: { reason: 'The shop moved to a new host' } },
  rotateWebhookEndpointSecret: {
    response: {
      ...endpoint,
      secret: 'whsec_8RtYu2IoP5aSd7FgH1jKl4ZxC9vBn3Mq',
      previous_secret_expires_at: '2026-03-17T10:00:00.000Z',
      updated_at: NOW,
    },
  },
  listWebhookDeliveries: { response: { data: [delivery], has_more: false, pagination: page(1) } },
  getWebhookDelivery: {
    response: {
      ...delivery,
      attempt_log: [
        {
          attempt: 1,
          status_code: 503,
          latency_ms: 10002,
          error: 'the endpoint answered 503',
          response_body_prefix: '<html><body>Service Unavailable</body></html>',
          attempted_at: '2026-03-14T09:26:56.000Z',
          next_attempt_at: '2026-03-14T09:27:26.000Z',
        },
        {
          attempt: 2,
          status_code: 200,
          latency_ms: 184,
          error: null,
          response_body_prefix: '{"received":true}',
          attempted_at: '2026-03-14T09:27:26.918Z',
          next_attempt_at: null,
        },
      ],
    },
  },
  redeliverWebhook: {
    request: { reason: 'The customer fixed their endpoint and asked for the event again' },
    response: {
      ...delivery,
      status: 'pending',
      attempts: 0,
      last_status_code: null,
      last_latency_ms: null,
      next_attempt_at: NOW,
      created_at: NOW,
      updated_at: NOW,
      delivered_at: null,
    },
  },
  drillWebhookEndpoint: {
    response: {
      id: 'drill_7Hk2pQ9sWm4xZ1cV',
      object: 'webhook_drill',
      endpoint_id: ENDPOINT,
      url: 'https://shop.example.com/hooks/payments',
      event_types: ['transaction.completed', 'transaction.failed'],
      tolerance_seconds: 300,
      result: 'failed',
      cases: [
        drillCase(
          'valid',
          1773655200,
          1773655200,
          'accept',
          200,
          null,
          'passed',
          'Accepted, as a valid event must be',
        ),
        drillCase(
          'duplicate',
          1773655200,
          1773655201,
          'accept',
          200,
          true,
          'passed',
          'Accepted and recognised as a duplicate',
        ),
        drillCase(
          'out_of_order_later',
          1773655260,
          1773655201,
          'accept',
          200,
          null,
          'passed',
          'Accepted, as a valid event must be',
        ),
        drillCase(
          'out_of_order_earlier',
          1773655140,
          1773655201,
          'accept',
          200,
          null,
          'passed',
          'Accepted, though created before the one it follows',
        ),
        drillCase(
          'stale_timestamp',
          1773654600,
          1773654600,
          'accept',
          200,
          null,
          'failed',
          'Accepted a signature 600 s old: check the timestamp against a tolerance',
        ),
        drillCase(
          'wrong_signature',
          1773655200,
          1773655202,
          'reject',
          400,
          null,
          'passed',
          'Rejected, as a forged event must be',
        ),
      ],
      started_at: NOW,
      finished_at: '2026-03-16T10:00:01.214Z',
    },
  },
} satisfies { [K in keyof typeof WEBHOOK_ENDPOINT_OPERATIONS]?: OperationExamples };
