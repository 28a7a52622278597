import { PaymentsError } from './errors.js';
import { webCrypto } from './runtime.js';
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
const SCHEME = 'v1';

/**
 * Verifies a delivery from this system and resolves with its event, typed by `type` and `api_version`:
 * `Stripe-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256(secret, "<t>.<raw body>")>[,v1=…]`. Pass the body
 * exactly as received (the raw string, or its bytes: a Uint8Array, a Node Buffer, an ArrayBuffer; never re-serialised
 * JSON) and every secret you hold: during a rotation each delivery is signed with the old and the new one, and either
 * matching is enough. The HMAC is WebCrypto's (`globalThis.crypto.subtle`, whose `verify` compares in constant time),
 * so it runs in Node, Deno, Bun, browsers and edge runtimes alike. Rejects with `WebhookSignatureError` (with a
 * `reason`) for anything else. Stripe's counterpart is `stripe.webhooks.constructEventAsync`.
 */
export async function verifyWebhookEvent<V extends ApiVersion = ApiVersion>(
  rawBody: string | Uint8Array | ArrayBuffer,
  signatureHeader: string | readonly string[] | null | undefined,
  secrets: string | readonly string[],
  options: VerifyWebhookOptions = {},
): Promise<WebhookEvent<V>> {
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
  const body = bytesOf(rawBody);
  const keys = typeof secrets === 'string' ? [secrets] : secrets;
  if (keys.length === 0) throw new TypeError('verifyWebhookEvent needs at least one secret');
  const signed = signedContent(timestamp, body);
  const { subtle } = webCrypto();
  // Every secret against every signature, without stopping at the first match: the time taken tells nothing.
  let matched = false;
  for (const secret of keys) {
    const key = await hmacKey(secret, 'verify');
    for (const candidate of signatures) {
      matched = (await subtle.verify('HMAC', key, candidate, signed)) || matched;
    }
  }
  if (!matched) throw new WebhookSignatureError('mismatch', 'No signature matches the secrets given');
  return parseEvent<V>(body);
}

export interface TestHeaderOptions {
  /** The body exactly as it will be given to `verifyWebhookEvent` (a JSON string, say). */
  payload: string | Uint8Array | ArrayBuffer;
  /** The endpoint's secret, or several: one `v1` signature each, as the system signs during a rotation. */
  secret: string | readonly string[];
  /** Unix seconds (default: now). */
  timestamp?: number;
}

/**
 * A `Stripe-Signature` header for `payload`, made exactly as the system signs its deliveries
 * (`t=<timestamp>,v1=<hex HMAC-SHA256(secret, "<t>.<payload>")>`, one `v1` per secret): for testing your webhook
 * receiver without a running system. Stripe's counterpart is `stripe.webhooks.generateTestHeaderStringAsync`.
 */
export async function generateTestHeaderString(options: TestHeaderOptions): Promise<string> {
  const timestamp = options.timestamp ?? Math.floor(Date.now() / 1000);
  if (!Number.isInteger(timestamp) || !TIMESTAMP.test(String(timestamp)))
    throw new TypeError('timestamp is whole unix seconds');
  const secrets = typeof options.secret === 'string' ? [options.secret] : options.secret;
  if (secrets.length === 0) throw new TypeError('generateTestHeaderString needs at least one secret');
  const signed = signedContent(timestamp, bytesOf(options.payload));
  const parts = [`t=${timestamp}`];
  for (const secret of secrets) {
    const signature = await webCrypto().subtle.sign('HMAC', await hmacKey(secret, 'sign'), signed);
    parts.push(`${SCHEME}=${toHex(new Uint8Array(signature))}`);
  }
  return parts.join(',');
}

const hmacKey = (secret: string, usage: 'sign' | 'verify') =>
  webCrypto().subtle.importKey(
    'raw',
    new TextEncoder().encode(secret),
    { name: 'HMAC', hash: 'SHA-256' },
    false,
    [usage],
  );

function bytesOf(raw: string | Uint8Array | ArrayBuffer): Uint8Array<ArrayBuffer> {
  if (typeof raw === 'string') return new TextEncoder().encode(raw);
  // A typed array (a Node Buffer too, which may be a view into a shared pool) is copied; an ArrayBuffer is viewed.
  return new Uint8Array(raw);
}

/** `<t>.` then the body's bytes: what is signed. */
function signedContent(timestamp: number, body: Uint8Array): Uint8Array<ArrayBuffer> {
  const prefix = new TextEncoder().encode(`${timestamp}.`);
  const signed = new Uint8Array(prefix.length + body.length);
  signed.set(prefix);
  signed.set(body, prefix.length);
  return signed;
}

const toHex = (bytes: Uint8Array) => Array.from(bytes, (byte) => byte.toString(16).padStart(2, '0')).join('');

const fromHex = (hex: string) => Uint8Array.from(hex.match(/../g) ?? [], (pair) => parseInt(pair, 16));

function parseHeader(header: string): { timestamp: number; signatures: Uint8Array<ArrayBuffer>[] } {
  const malformed = () =>
    new WebhookSignatureError('malformed', `The ${WEBHOOK_SIGNATURE_HEADER} header is not t=…,v1=…`);
  if (header.length > MAX_HEADER_LENGTH) throw malformed();
  let timestamp: number | null = null;
  const signatures: Uint8Array<ArrayBuffer>[] = [];
  for (const item of header.split(',')) {
    const separator = item.indexOf('=');
    if (separator <= 0) throw malformed();
    const key = item.slice(0, separator).trim();
    const value = item.slice(separator + 1).trim();
    if (key === 't') {
      if (timestamp !== null || !TIMESTAMP.test(value)) throw malformed();
      timestamp = Number(value);
    } else if (key === SCHEME && HEX_SHA256.test(value)) {
      signatures.push(fromHex(value));
    }
  }
  if (timestamp === null) throw malformed();
  if (signatures.length === 0)
    throw new WebhookSignatureError('no_signature', 'The header has no v1 signature');
  return { timestamp, signatures };
}

function parseEvent<V extends ApiVersion>(body: Uint8Array): WebhookEvent<V> {
  let event: unknown;
  try {
    event = JSON.parse(new TextDecoder().decode(body));
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
