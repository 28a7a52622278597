import { createHmac, timingSafeEqual } from 'node:crypto';
import { PaymentsError } from './errors.js';
import type { ApiVersion, WebhookEvent } from './types.js';

/** The header the system signs each delivery in: Stripe's name and scheme, so Stripe's libraries verify it too. */
export const WEBHOOK_SIGNATURE_HEADER = 'Stripe-Signature';

/** How far the signed timestamp may be from now, either way, unless told otherwise (the system's own tolerance). */
export const DEFAULT_WEBHOOK_TOLERANCE_SECONDS = 300;

export type WebhookSignatureFailure =
  /** No header, or an empty one. */
  | 'missing'
  /** Not a `k=v,…` list, or without a numeric `t`. */
  | 'malformed'
  /** No `v1` entry (other schemes are ignored). */
  | 'no_signature'
  /** The timestamp is further than the tolerance from now. */
  | 'stale'
  /** No `v1` entry matches any of the secrets. */
  | 'mismatch'
  /** Signed, but the body is not an event. */
  | 'invalid_payload';

export class WebhookSignatureError extends PaymentsError {
  override name = 'WebhookSignatureError';
  constructor(
    readonly reason: WebhookSignatureFailure,
    message: string,
  ) {
    super(message);
  }
}

export interface VerifyWebhookOptions {
  /** Seconds the signed timestamp may be from now, either way; default 300. */
  toleranceSeconds?: number;
  /** The current time in ms (default `Date.now()`). */
  now?: number;
}

const MAX_HEADER_LENGTH = 4096;
const TIMESTAMP = /^\d{1,12}$/;
const HEX_SHA256 = /^[0-9a-f]{64}$/i;

/**
 * Verifies a delivery from this system and returns its event, typed by `type` and `api_version`:
 * `Stripe-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256(secret, "<t>.<raw body>")>[,v1=…]`. Pass the body
 * exactly as received (a Buffer or the raw string, never re-serialised JSON) and every secret you hold: during a
 * rotation each delivery is signed with the old and the new one, and either matching is enough. Comparisons are
 * constant-time. Throws `WebhookSignatureError` (with a `reason`) for anything else.
 */
export function verifyWebhookEvent<V extends ApiVersion = ApiVersion>(
  rawBody: string | Uint8Array,
  signatureHeader: string | readonly string[] | null | undefined,
  secrets: string | readonly string[],
  options: VerifyWebhookOptions = {},
): WebhookEvent<V> {
  const header = Array.isArray(signatureHeader)
    ? signatureHeader.join(',')
    : (signatureHeader as string | null);
  if (!header?.trim()) throw new WebhookSignatureError('missing', `No ${WEBHOOK_SIGNATURE_HEADER} header`);
  const { timestamp, signatures } = parseHeader(header);
  const tolerance = options.toleranceSeconds ?? DEFAULT_WEBHOOK_TOLERANCE_SECONDS;
  const now = options.now ?? Date.now();
  if (Math.abs(now / 1000 - timestamp) > tolerance) {
    throw new WebhookSignatureError(
      'stale',
      `The signature's timestamp is more than ${tolerance} s from now`,
    );
  }
  const body = typeof rawBody === 'string' ? Buffer.from(rawBody, 'utf8') : Buffer.from(rawBody);
  const keys = typeof secrets === 'string' ? [secrets] : secrets;
  if (keys.length === 0) throw new TypeError('verifyWebhookEvent needs at least one secret');
  // Every secret against every signature, without stopping at the first match: the time taken tells nothing.
  let matched = false;
  for (const secret of keys) {
    const expected = createHmac('sha256', secret).update(`${timestamp}.`).update(body).digest();
    for (const candidate of signatures) matched = timingSafeEqual(expected, candidate) || matched;
  }
  if (!matched) throw new WebhookSignatureError('mismatch', 'No signature matches the secrets given');
  return parseEvent<V>(body);
}

function parseHeader(header: string): { timestamp: number; signatures: Buffer[] } {
  const malformed = () =>
    new WebhookSignatureError('malformed', `The ${WEBHOOK_SIGNATURE_HEADER} header is not t=…,v1=…`);
  if (header.length > MAX_HEADER_LENGTH) throw malformed();
  let timestamp: number | null = null;
  const signatures: Buffer[] = [];
  for (const item of header.split(',')) {
    const separator = item.indexOf('=');
    if (separator <= 0) throw malformed();
    const key = item.slice(0, separator).trim();
    const value = item.slice(separator + 1).trim();
    if (key === 't') {
      if (timestamp !== null || !TIMESTAMP.test(value)) throw malformed();
      timestamp = Number(value);
    } else if (key === 'v1' && HEX_SHA256.test(value)) {
      signatures.push(Buffer.from(value, 'hex'));
    }
  }
  if (timestamp === null) throw malformed();
  if (signatures.length === 0)
    throw new WebhookSignatureError('no_signature', 'The header has no v1 signature');
  return { timestamp, signatures };
}

function parseEvent<V extends ApiVersion>(body: Buffer): WebhookEvent<V> {
  let event: unknown;
  try {
    event = JSON.parse(body.toString('utf8'));
  } catch {
    throw new WebhookSignatureError('invalid_payload', 'The signed body is not JSON');
  }
  const candidate = event as { object?: unknown; type?: unknown; data?: { object?: unknown } } | null;
  if (
    candidate?.object !== 'event' ||
    typeof candidate.type !== 'string' ||
    typeof candidate.data?.object !== 'object'
  ) {
    throw new WebhookSignatureError('invalid_payload', 'The signed body is not an event');
  }
  return event as WebhookEvent<V>;
}
