import pRetry, { AbortError } from 'p-retry';
import { signWebhookPayload, type Logger } from '@payments/service-kit';

/** A provider event as it is sent: the sandbox's own, or a Stripe event object. */
export interface SentEvent {
  id: string;
  type: string;
}

export interface ProviderWebhookClient {
  /**
   * Delivers a signed event, retrying transient failures with backoff for about a minute, as a provider keeps
   * retrying; throws once it gives up, or at once for a refusal (4xx).
   */
  send(event: SentEvent, correlationId: string): Promise<void>;
}

export interface ProviderWebhookClientOptions {
  webhookIngestUrl: string;
  secret: string;
  logger: Logger;
  attempts?: number;
  retryDelayMs?: number;
  maxRetryDelayMs?: number;
  timeoutMs?: number;
}

// Timeouts, throttling and server errors may pass; any other refusal will not change on a retry.
const isTransient = (status: number) => status >= 500 || status === 408 || status === 429;

export function createProviderWebhookClient(options: ProviderWebhookClientOptions): ProviderWebhookClient {
  const {
    secret,
    logger,
    attempts = 12,
    retryDelayMs = 200,
    maxRetryDelayMs = 10_000,
    timeoutMs = 5000,
  } = options;
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
            `the webhook refused ${event.type} ${event.id} with ${response.status}: ${answer.slice(0, 200)}`,
          );
        }
        throw new Error(`could not deliver ${event.type} ${event.id}: status ${response.status}`);
      };
      await pRetry(attempt, {
        retries: attempts - 1,
        minTimeout: retryDelayMs,
        maxTimeout: maxRetryDelayMs,
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
