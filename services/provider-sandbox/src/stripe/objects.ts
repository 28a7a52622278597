import { randomBytes } from 'node:crypto';
import type Stripe from 'stripe';

/** What the sandbox's Stripe objects share: ids, times, the API version, errors and the event envelope. */

export const API_VERSION = '2025-12-15.clover';

/** A Stripe-style id: the object's prefix and a random part (`pi_…`, `acct_…`, `evt_…`). */
export const stripeId = (prefix: string) =>
  `${prefix}_${randomBytes(12).toString('base64url').replace(/[-_]/g, '0')}`;

/** Stripe's timestamps: Unix seconds. */
export const unixNow = () => Math.floor(Date.now() / 1000);

/** What Stripe answers a refused request with: its HTTP status and `error` object. */
export class StripeApiError extends Error {
  constructor(
    readonly status: number,
    readonly error: {
      type: 'api_error' | 'card_error' | 'idempotency_error' | 'invalid_request_error';
      message: string;
      code?: string;
      decline_code?: string;
      param?: string;
      payment_intent?: Stripe.PaymentIntent;
    },
  ) {
    super(error.message);
  }
}

/** Stripe's answer for an id that names nothing: 404 for the object asked for, 400 for a parameter. */
export const resourceMissing = (status: 400 | 404, param: string, message: string) =>
  new StripeApiError(status, { type: 'invalid_request_error', code: 'resource_missing', param, message });

/**
 * The event Stripe sends about a change to `object`: the request that caused it (its idempotency key), and for a
 * connected account's object the account.
 */
export function stripeEvent<E extends Stripe.Event>(
  type: E['type'],
  object: unknown,
  cause: { idempotencyKey?: string | null; account?: string } = {},
): E {
  return {
    id: stripeId('evt'),
    object: 'event',
    api_version: API_VERSION,
    created: unixNow(),
    data: { object: structuredClone(object) },
    livemode: false,
    pending_webhooks: 1,
    request: {
      id: cause.idempotencyKey === undefined ? null : stripeId('req'),
      idempotency_key: cause.idempotencyKey ?? null,
    },
    type,
    ...(cause.account && { account: cause.account }),
  } as E;
}
