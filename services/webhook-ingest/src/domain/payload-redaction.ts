/** What a redacted value is stored as. */
export const REDACTED = '[redacted]';

/** A key that names a secret, wherever it is: a PaymentIntent's `client_secret`, an ephemeral key's `secret`… */
const SECRET_KEY = /secret|password/i;

/**
 * Keys holding how someone paid or where money goes (card and bank details, billing and shipping details), or a
 * link that works as a credential (a 3-D Secure redirect carries the client secret, a receipt URL is its own key).
 */
const DETAIL_KEYS = new Set([
  'acss_debit',
  'au_becs_debit',
  'bacs_debit',
  'bank_account',
  'billing_details',
  'card',
  'card_present',
  'customer_details',
  'external_accounts',
  'next_action',
  'payment_method_details',
  'receipt_email',
  'receipt_url',
  'sepa_debit',
  'shipping',
  'us_bank_account',
]);

/** Stripe objects that are card or bank details whatever key they come under (an expanded `payment_method`). */
const DETAIL_OBJECTS = new Set(['bank_account', 'card', 'payment_method', 'source']);

/** A secret as a value: a client secret (`pi_…_secret_…`, also inside a URL), an API key, a signing secret. */
const SECRET_VALUE = /_secret_|\b[sr]k_(?:live|test)_|\bwhsec_/;

/** Deeper than any provider object nests; a body nested further is cut here rather than overflowing the stack. */
const MAX_DEPTH = 32;

function redact(value: unknown, depth: number): unknown {
  if (typeof value === 'string') return SECRET_VALUE.test(value) ? REDACTED : value;
  if (typeof value !== 'object' || value === null) return value;
  if (depth >= MAX_DEPTH) return REDACTED;
  if (Array.isArray(value)) return value.map((item) => redact(item, depth + 1));
  const record = value as Record<string, unknown>;
  if (typeof record.object === 'string' && DETAIL_OBJECTS.has(record.object)) return REDACTED;
  const kept: Record<string, unknown> = {};
  for (const [key, field] of Object.entries(record)) {
    kept[key] =
      field !== null && (SECRET_KEY.test(key) || DETAIL_KEYS.has(key)) ? REDACTED : redact(field, depth + 1);
  }
  return kept;
}

/**
 * A webhook body as it may be kept: every secret, card and bank detail replaced by REDACTED, everything else as
 * received (ids, type, amounts, currency, status, metadata, failure messages: what operators and reconciliation
 * read). Nothing published depends on it: an event's PaymentProcessed or PaymentAdjusted is recorded apart.
 */
export function redactWebhookPayload(payload: unknown): unknown {
  return redact(payload, 0);
}
