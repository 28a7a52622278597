import { createHash } from 'node:crypto';
import { validationError } from '@payments/service-kit';

const KEY = /^[\x21-\x7e]{1,255}$/;

/** The Idempotency-Key header: up to 255 visible ASCII characters, or absent. */
export function readIdempotencyKey(header: string | undefined): string | null {
  if (header === undefined) return null;
  if (!KEY.test(header)) {
    throw validationError(
      [{ field: 'Idempotency-Key', message: 'must be 1 to 255 visible ASCII characters' }],
      'Invalid Idempotency-Key header',
    );
  }
  return header;
}

function canonical(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(canonical);
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(
      Object.keys(value)
        .sort()
        .map((key) => [key, canonical((value as Record<string, unknown>)[key])]),
    );
  }
  return value;
}

/** What makes two requests "the same": the operation, its account and its body, key order aside. */
export function requestFingerprint(operation: string, accountId: string, body: unknown): string {
  return createHash('sha256')
    .update(JSON.stringify([operation, accountId, canonical(body)]))
    .digest('hex');
}
