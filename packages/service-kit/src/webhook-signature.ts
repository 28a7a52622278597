import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * Stripe-compatible webhook signatures: `t=<unix seconds>,v1=<hex HMAC-SHA256(secret, "<t>.<raw body>")>`.
 * Several `v1` entries may be present (the sender signs with every secret during a rotation); other schemes are
 * ignored. The one place that signs and verifies, so the sender (provider sandbox) and receiver never drift.
 */

/** The secret used when none is configured outside production. Never valid in production. */
export const DEVELOPMENT_WEBHOOK_SECRET = 'whsec_development_only_do_not_use_in_production';

/** The provider sandbox's Stripe test key when none is configured; public, so refused beyond loopback like the above. */
export const DEVELOPMENT_SANDBOX_API_KEY = 'sk_test_sandbox_development_only';

export const DEFAULT_WEBHOOK_TOLERANCE_SECONDS = 300;

export type SignatureFailure =
  /** No header, or an empty one. */
  | 'missing'
  /** Not a `k=v,k=v` list, no timestamp, or a timestamp that is not a number. */
  | 'malformed'
  /** Well formed, but no `v1` entry (e.g. only `v0`). */
  | 'no-signature'
  /** The timestamp is further than the tolerance from now, in either direction. */
  | 'stale'
  /** No `v1` entry matches any configured secret. */
  | 'mismatch';

export type SignatureVerification = { ok: true; timestamp: number } | { ok: false; reason: SignatureFailure };

const SCHEME = 'v1';
const MAX_HEADER_LENGTH = 4096;
const TIMESTAMP = /^\d{1,12}$/;
const HEX_SHA256 = /^[0-9a-f]{64}$/i;

function hmac(payload: string | Buffer, secret: string, timestamp: number): Buffer {
  return createHmac('sha256', secret).update(`${timestamp}.`).update(payload).digest();
}

/** The signature header value for `payload`, signed now (or at `timestamp`, unix seconds). */
export function signWebhookPayload(
  payload: string | Buffer,
  secret: string,
  timestamp: number = Math.floor(Date.now() / 1000),
): string {
  return `t=${timestamp},${SCHEME}=${hmac(payload, secret, timestamp).toString('hex')}`;
}

/**
 * One header signed with every secret (`t=…,v1=…,v1=…`), as during a secret rotation: a receiver holding either the
 * old or the new secret accepts it (Stripe's verifiers do the same).
 */
export function signWebhookPayloadWithSecrets(
  payload: string | Buffer,
  secrets: readonly string[],
  timestamp: number = Math.floor(Date.now() / 1000),
): string {
  if (secrets.length === 0) throw new Error('signing needs at least one secret');
  const signatures = secrets.map((secret) => `${SCHEME}=${hmac(payload, secret, timestamp).toString('hex')}`);
  return [`t=${timestamp}`, ...signatures].join(',');
}

function parseHeader(header: string): { timestamp: number; signatures: Buffer[] } | SignatureFailure {
  if (header.length > MAX_HEADER_LENGTH) return 'malformed';
  let timestamp: number | null = null;
  const signatures: Buffer[] = [];
  for (const item of header.split(',')) {
    const separator = item.indexOf('=');
    if (separator <= 0) return 'malformed';
    const key = item.slice(0, separator).trim();
    const value = item.slice(separator + 1).trim();
    if (key === 't') {
      if (timestamp !== null || !TIMESTAMP.test(value)) return 'malformed';
      timestamp = Number(value);
    } else if (key === SCHEME && HEX_SHA256.test(value)) {
      signatures.push(Buffer.from(value, 'hex'));
    }
  }
  if (timestamp === null) return 'malformed';
  if (signatures.length === 0) return 'no-signature';
  return { timestamp, signatures };
}

/**
 * Verifies a signature header against the raw request bytes, before anything parses them. Accepts when any `v1`
 * entry matches any of `secrets` (rotation) and the timestamp is within `toleranceSeconds` of `now` (ms).
 */
export function verifyWebhookSignature(
  rawBody: string | Buffer,
  header: string | undefined,
  secrets: readonly string[],
  toleranceSeconds: number = DEFAULT_WEBHOOK_TOLERANCE_SECONDS,
  now: number = Date.now(),
): SignatureVerification {
  if (!header?.trim()) return { ok: false, reason: 'missing' };
  const parsed = parseHeader(header);
  if (typeof parsed === 'string') return { ok: false, reason: parsed };
  if (Math.abs(now / 1000 - parsed.timestamp) > toleranceSeconds) return { ok: false, reason: 'stale' };
  const matches = secrets.some((secret) => {
    const expected = hmac(rawBody, secret, parsed.timestamp);
    // Every candidate is 32 bytes (checked by the pattern), so timingSafeEqual never throws on length.
    return parsed.signatures.some((candidate) => timingSafeEqual(expected, candidate));
  });
  return matches ? { ok: true, timestamp: parsed.timestamp } : { ok: false, reason: 'mismatch' };
}
