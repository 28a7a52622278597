import type { Metrics } from '@payments/service-kit';
import { isHandledProviderEventType } from './domain/provider-events.js';
import type { IncomingWebhookEvent, WebhookSource } from './domain/webhook-event.js';

/** What the counters are labelled with: an incoming event, or its record. */
type LabelledEvent = Pick<IncomingWebhookEvent, 'source' | 'type'>;

export interface WebhookMetrics {
  received(event: LabelledEvent): void;
  rejected(source: WebhookSource, reason: string): void;
  published(event: LabelledEvent): void;
  duplicate(event: LabelledEvent): void;
  republished(event: LabelledEvent): void;
}

// Provider event types are open-ended; only the handled ones get their own label.
function typeLabel(event: LabelledEvent): string {
  return event.source === 'provider' && !isHandledProviderEventType(event.type) ? 'unhandled' : event.type;
}

export function createWebhookMetrics(metrics: Metrics): WebhookMetrics {
  const received = metrics.counter(
    'webhook_events_received_total',
    'Valid webhook events received, redeliveries included',
    ['source', 'type'],
  );
  const rejected = metrics.counter(
    'webhook_events_rejected_total',
    'Webhook calls rejected for a bad signature or payload',
    ['source', 'reason'],
  );
  const published = metrics.counter(
    'webhook_events_published_total',
    'PaymentProcessed (and PaymentAdjusted, PayoutAccountUpdated) events published from webhooks',
    ['source', 'type'],
  );
  const duplicate = metrics.counter(
    'webhook_events_duplicate_total',
    'Redelivered webhook events answered without publishing again',
    ['source', 'type'],
  );
  const republished = metrics.counter(
    'webhook_events_republished_total',
    'PaymentProcessed events the republisher published for webhook calls that left them unpublished',
    ['source', 'type'],
  );
  return {
    received: (event) => received.inc({ source: event.source, type: typeLabel(event) }),
    rejected: (source, reason) => rejected.inc({ source, reason }),
    published: (event) => published.inc({ source: event.source, type: typeLabel(event) }),
    duplicate: (event) => duplicate.inc({ source: event.source, type: typeLabel(event) }),
    republished: (event) => republished.inc({ source: event.source, type: typeLabel(event) }),
  };
}
