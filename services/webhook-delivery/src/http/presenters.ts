import type { Delivery, DeliveryAttempt } from '../data/delivery-repository.js';
import type { WebhookEndpoint } from '../domain/endpoint.js';

const iso = (date: Date | null) => date?.toISOString() ?? null;

export function renderEndpoint(endpoint: WebhookEndpoint, now = new Date()) {
  const graceOpen =
    endpoint.previousSecretExpiresAt !== null && endpoint.previousSecretExpiresAt.getTime() > now.getTime();
  return {
    id: endpoint.id,
    user_id: endpoint.userId,
    url: endpoint.url,
    events: endpoint.events,
    description: endpoint.description,
    enabled: endpoint.enabled,
    api_version: endpoint.apiVersion,
    previous_secret_expires_at: graceOpen ? iso(endpoint.previousSecretExpiresAt) : null,
    created_at: endpoint.createdAt.toISOString(),
    updated_at: endpoint.updatedAt.toISOString(),
  };
}

/** Only at creation and rotation, to the endpoint's owner: the secret is never shown again. */
export function renderEndpointWithSecret(endpoint: WebhookEndpoint, secret: string) {
  return { ...renderEndpoint(endpoint), secret };
}

export function renderDelivery(delivery: Delivery) {
  return {
    id: delivery.id,
    endpoint_id: delivery.endpointId,
    event_id: delivery.eventId,
    event_type: delivery.eventType,
    status: delivery.status,
    attempts: delivery.attempts,
    last_status_code: delivery.lastStatusCode,
    last_latency_ms: delivery.lastLatencyMs,
    last_error: delivery.lastError,
    next_attempt_at: delivery.status === 'pending' ? iso(delivery.nextAttemptAt) : null,
    created_at: delivery.createdAt.toISOString(),
    updated_at: delivery.updatedAt.toISOString(),
    delivered_at: iso(delivery.deliveredAt),
  };
}

export function renderAttempt(attempt: DeliveryAttempt) {
  return {
    attempt: attempt.attempt,
    status_code: attempt.statusCode,
    latency_ms: attempt.latencyMs,
    error: attempt.error,
    response_body_prefix: attempt.responseBodyPrefix,
    attempted_at: attempt.attemptedAt.toISOString(),
    next_attempt_at: iso(attempt.nextAttemptAt),
  };
}
