import { randomUUID } from 'node:crypto';
import { signWebhookPayload } from '@payments/service-kit';
import type { HttpAnswer, HttpClient } from './http-client.js';
import { sleep } from './load.js';
import type { MoneyRequest } from './provider-requests.js';

export interface DepositConfirmation {
  transactionId: string;
  /** Minor units, as the provider reports them. */
  amount: number;
  currency?: string;
  /** The provider's event id; a redelivery reuses it. */
  eventId?: string;
  /** `attempt_failed` sends payment_intent.payment_failed (a declined attempt) instead of payment_intent.succeeded. */
  outcome?: 'succeeded' | 'attempt_failed';
}

/**
 * The body of a Stripe-style `payment_intent.*` event for a pending deposit, as SPEC's stand-in sends it (the object
 * is the transaction itself); a redelivery sends the same bytes.
 */
export function providerEventBody(confirmation: DepositConfirmation): string {
  const failed = confirmation.outcome === 'attempt_failed';
  return JSON.stringify({
    id: confirmation.eventId ?? `evt_${randomUUID()}`,
    object: 'event',
    type: failed ? 'payment_intent.payment_failed' : 'payment_intent.succeeded',
    created: Math.floor(Date.now() / 1000),
    data: {
      object: {
        id: confirmation.transactionId,
        object: 'payment_intent',
        amount: confirmation.amount,
        currency: (confirmation.currency ?? 'usd').toLowerCase(),
        status: failed ? 'requires_payment_method' : 'succeeded',
        metadata: { transaction_id: confirmation.transactionId },
        ...(failed && { last_payment_error: { message: 'card declined (drill)' } }),
      },
    },
  });
}

/**
 * How the provider confirms a deposit handed to it (DepositRequested), as the sandbox does: the payment is the
 * transaction (its id in the metadata), for the amount and currency of the request, under an event id derived from
 * the request's, so a request the outbox published twice is confirmed by the same event.
 */
export function depositConfirmationOf(request: MoneyRequest): DepositConfirmation {
  return {
    transactionId: request.transactionId,
    amount: request.amount,
    currency: request.currency,
    eventId: `evt_${request.eventId}`,
  };
}

/** Posts an event body with a fresh signature, as a provider does on every attempt. */
export function postProviderEvent(client: HttpClient, body: string, secret: string): Promise<HttpAnswer> {
  // Raw: the provider's inbound webhook, which only providers call and @payments/client does not cover.
  return client.send({
    method: 'POST',
    path: '/webhook/provider',
    headers: { 'content-type': 'application/json', 'provider-signature': signWebhookPayload(body, secret) },
    body,
  });
}

export interface ProviderDelivery {
  /** Answered 200 before the provider gave up. */
  delivered: boolean;
  /** HTTP attempts, the successful one included. */
  attempts: number;
}

/**
 * Delivers an event as a provider does: the same body, freshly signed, retried with backoff (100 ms doubling, at
 * most 2 s) after every answer but 200, until the next pause would end past `giveUpAt()`.
 */
export async function deliverProviderEvent(
  client: HttpClient,
  body: string,
  secret: string,
  giveUpAt: () => number,
): Promise<ProviderDelivery> {
  for (let attempt = 0; ; attempt += 1) {
    const answer = await postProviderEvent(client, body, secret).catch(() => null);
    if (answer?.status === 200) return { delivered: true, attempts: attempt + 1 };
    const pause = Math.min(100 * 2 ** attempt, 2000);
    if (Date.now() + pause > giveUpAt()) return { delivered: false, attempts: attempt + 1 };
    await sleep(pause);
  }
}

/** Posts a provider event to `/webhook/provider` on `client` (the gateway or webhook-ingest itself). */
export function sendProviderEvent(
  client: HttpClient,
  confirmation: DepositConfirmation,
  secret: string,
): Promise<HttpAnswer> {
  return postProviderEvent(client, providerEventBody(confirmation), secret);
}
