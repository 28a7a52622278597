import type { Logger } from '@payments/service-kit';
import {
  contextFromCarrier,
  inSpan,
  signWebhookPayloadWithSecrets,
  SpanKind,
  startPoller,
} from '@payments/service-kit';
import type { Delivery, DeliveryRepository } from '../data/delivery-repository.js';
import type { EndpointRepository } from '../data/endpoint-repository.js';
import { RENDER_TIMEOUT_MS, type ObjectRenderer } from '../data/object-renderer.js';
import type { EventRepository } from '../data/event-repository.js';
import { EVENT_API_VERSION, eventPayload } from '../domain/event-payload.js';
import type { EventRendering } from './event-rendering.js';
import { signingSecrets, type WebhookEndpoint } from '../domain/endpoint.js';
import { nextAttemptAt, type RetryPolicy } from '../domain/retry-schedule.js';
import type { DeliveryMetrics } from './delivery-metrics.js';
import type { SendResult, WebhookSender } from './http-sender.js';

/** The header deliveries are signed in: the name Stripe uses, so Stripe's libraries verify them as they are. */
export const SIGNATURE_HEADER = 'Stripe-Signature';

export interface DeliveryWorkerDeps {
  deliveries: DeliveryRepository;
  endpoints: EndpointRepository;
  sender: WebhookSender;
  renderer: ObjectRenderer;
  /** The events as the events API keeps them: a delivery at their version sends the body they keep. */
  events: EventRepository;
  rendering: EventRendering;
  metrics: DeliveryMetrics;
  logger: Logger;
  retry: RetryPolicy;
  concurrency: number;
  perEndpointConcurrency: number;
  timeoutMs: number;
  /** How soon it looks again after finding due deliveries; idle, up to five times that. */
  pollMs: number;
}

export interface DeliveryWorker {
  wake(): void;
  /** Takes no new deliveries and waits for those in flight. */
  stop(): Promise<void>;
}

/**
 * Sends due deliveries, each attempt on its own (never awaited by the loop), at most `concurrency` at once and
 * `perEndpointConcurrency` per endpoint. A delivery is claimed with a lease a little longer than the timeout: if
 * the process dies mid-attempt, the lease lapses and the delivery is sent again (at least once).
 */
export function startDeliveryWorker(deps: DeliveryWorkerDeps): DeliveryWorker {
  const inFlight = new Set<Promise<void>>();
  // Long enough for a render and a send to time out, with a margin.
  const leaseMs = RENDER_TIMEOUT_MS + deps.timeoutMs + 5000;
  let stopped = false;

  /** At the version the event is kept at, the body it keeps (one render for both); at another, its own. */
  const rendered = async (delivery: Delivery): Promise<string> => {
    const stored = delivery.apiVersion === EVENT_API_VERSION ? await deps.events.get(delivery.eventId) : null;
    // An event kept before a version change keeps that version's body, which is not this delivery's.
    if (stored && stored.apiVersion === delivery.apiVersion) return deps.rendering.payloadOf(stored);
    const object = await deps.renderer.render(delivery.event, delivery.apiVersion);
    return eventPayload(delivery.event, object, delivery.apiVersion);
  };

  /** The stored body, or the event rendered now and stored for every later attempt; a render failure is a failed attempt. */
  const payloadOf = async (delivery: Delivery): Promise<string | SendResult> => {
    if (delivery.payload !== null) return delivery.payload;
    try {
      return await deps.deliveries.fixPayload(delivery.id, await rendered(delivery));
    } catch (error) {
      deps.logger.warn(
        { err: error, delivery_id: delivery.id },
        'could not render a webhook event; will retry',
      );
      return {
        statusCode: null,
        latencyMs: 0,
        error: 'not sent: the event could not be rendered yet',
        responseBodyPrefix: null,
      };
    }
  };

  /** An endpoint whose secret will not open: not sent, retried on the usual schedule, the reason on record. */
  const unsigned = (endpointId: string, problem: string): SendResult => {
    deps.logger.error({ endpoint_id: endpointId }, `webhook deliveries cannot be signed: ${problem}`);
    return {
      statusCode: null,
      latencyMs: 0,
      error: `not sent: the endpoint cannot sign it. ${problem}`,
      responseBodyPrefix: null,
    };
  };

  const sendTo = async (endpoint: WebhookEndpoint, delivery: Delivery): Promise<SendResult> => {
    const { secrets } = endpoint;
    if (!secrets.open) return unsigned(endpoint.id, secrets.problem);
    const payload = await payloadOf(delivery);
    if (typeof payload !== 'string') return payload;
    const signing = signingSecrets({ ...secrets, previousSecretExpiresAt: endpoint.previousSecretExpiresAt });
    return deps.sender.send(endpoint.url, payload, {
      [SIGNATURE_HEADER]: signWebhookPayloadWithSecrets(payload, signing),
      'webhook-id': delivery.eventId,
      'webhook-delivery-id': delivery.id,
      'webhook-attempt': String(delivery.attempts),
    });
  };

  const attempt = async (delivery: Delivery) => {
    const endpoint = await deps.endpoints.find(delivery.endpointId);
    if (!endpoint) return;
    // Each attempt is a span in the trace of the event it sends (none is sent to the endpoint).
    const result = await inSpan(
      `webhook send ${delivery.eventType}`,
      {
        kind: SpanKind.CLIENT,
        parent: contextFromCarrier(delivery.traceContext),
        attributes: { 'payments.delivery_id': delivery.id, 'payments.attempt': delivery.attempts },
      },
      async (span) => {
        const sent = await sendTo(endpoint, delivery);
        if (sent.statusCode !== null) span.setAttribute('http.response.status_code', sent.statusCode);
        return sent;
      },
    );
    const succeeded = result.statusCode !== null && result.statusCode >= 200 && result.statusCode < 300;
    const next = succeeded
      ? null
      : nextAttemptAt(delivery.attempts, new Date(), delivery.retryUntil, deps.retry);
    await deps.deliveries.recordAttempt(delivery.id, {
      attempt: delivery.attempts,
      succeeded,
      statusCode: result.statusCode,
      latencyMs: result.latencyMs,
      error: result.error,
      responseBodyPrefix: result.responseBodyPrefix,
      nextAttemptAt: next,
    });
    // Due again then: looked for then, however long the idle wait.
    if (next) poller.wakeAt(next.getTime());
    deps.metrics.attempted(succeeded ? 'success' : 'failure');
    if (succeeded) deps.metrics.succeeded();
    else if (!next) {
      deps.metrics.failed();
      deps.logger.warn(
        { delivery_id: delivery.id, endpoint_id: endpoint.id, attempts: delivery.attempts },
        'webhook delivery failed for good after its retry window',
      );
    }
  };

  /** Claims what is due, up to the free capacity, and starts each attempt; whether it claimed any. */
  const claim = async (): Promise<boolean> => {
    const capacity = deps.concurrency - inFlight.size;
    // At capacity, each attempt that ends wakes the poller.
    if (stopped || capacity <= 0) return false;
    const due = await deps.deliveries.claimDue({
      limit: capacity,
      perEndpoint: deps.perEndpointConcurrency,
      leaseMs,
    });
    for (const delivery of due) {
      const running: Promise<void> = attempt(delivery)
        .catch((error: unknown) =>
          // The lease lapses and the delivery is tried again.
          deps.logger.error({ err: error, delivery_id: delivery.id }, 'could not record a delivery attempt'),
        )
        .finally(() => {
          inFlight.delete(running);
          poller.wake();
        });
      inFlight.add(running);
    }
    return due.length > 0;
  };

  // Idle, it looks every few seconds: what this process makes due (a delivery fanned out or redelivered, a retry
  // it scheduled) wakes it; what the poll alone finds is a lapsed lease of a process that died.
  const poller = startPoller({
    intervalMs: deps.pollMs,
    task: claim,
    onError: (error) => deps.logger.warn({ err: error }, 'could not claim due webhook deliveries'),
  });
  poller.wake();

  return {
    wake: () => poller.wake(),
    async stop() {
      stopped = true;
      await poller.stop();
      await Promise.allSettled([...inFlight]);
    },
  };
}
