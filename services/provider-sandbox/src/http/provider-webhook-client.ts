import pRetry, { AbortError } from 'p-retry';
import { PermanentEventError, signWebhookPayload, type Logger } from '@payments/service-kit';

/** A provider event as it is sent: the sandbox's own, or a Stripe event object. */
export interface SentEvent {
  id: string;
  type: string;
}

export interface ProviderWebhookClient {
  /** Delivers a signed event; retries transient failures, then throws so the bus redelivers later. */
  send(event: SentEvent, correlationId: string): Promise<void>;
}

export interface ProviderWebhookClientOptions {
  webhookIngestUrl: string;
  secret: string;
  logger: Logger;
  attempts?: number;
  retryDelayMs?: number;
  timeoutMs?: number;
}

// Timeouts, throttling and server errors may pass; any other refusal will not change on a retry.
const isTransient = (status: number) => status >= 500 || status === 408 || status === 429;

export function createProviderWebhookClient(options: ProviderWebhookClientOptions): ProviderWebhookClient {
  const { secret, logger, attempts = 4, retryDelayMs = 200, timeoutMs = 5000 } = options;
  const url = `${options.webhookIngestUrl.replace(/\/+$/, '')}/webhook/provider`;

  return {
    async send(event, correlationId) {
      const body = JSON.stringify(event);
      const attempt = async () => {
        const response = await fetch(url, {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            'x-request-id': correlationId,
            // Signed per attempt, as a provider does, so a late retry is not stale.
            'provider-signature': signWebhookPayload(body, secret),
          },
          body,
          signal: AbortSignal.timeout(timeoutMs),
        });
        const answer = await response.text();
        if (response.ok) return;
        if (!isTransient(response.status)) {
          throw new AbortError(
            new PermanentEventError(
              `the webhook refused ${event.type} ${event.id} with ${response.status}: ${answer.slice(0, 200)}`,
            ),
          );
        }
        throw new Error(`could not deliver ${event.type} ${event.id}: status ${response.status}`);
      };
      await pRetry(attempt, {
        retries: attempts - 1,
        minTimeout: retryDelayMs,
        factor: 2,
        randomize: false,
        onFailedAttempt: ({ error, attemptNumber, retriesLeft }) => {
          if (retriesLeft > 0) {
            logger.warn(
              { provider_event_id: event.id, attempt: attemptNumber, failure: error.message },
              'webhook delivery failed; retrying',
            );
          }
        },
      });
    },
  };
}
