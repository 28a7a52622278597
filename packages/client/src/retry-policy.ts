export interface RetryPolicy {
  /** Retries after the first attempt; 0 turns retrying off. */
  maxRetries: number;
  /** The backoff of the first retry; each further retry doubles it, up to `maxDelayMs`. */
  baseDelayMs: number;
  maxDelayMs: number;
}

export const DEFAULT_RETRY_POLICY: RetryPolicy = { maxRetries: 2, baseDelayMs: 500, maxDelayMs: 8_000 };

/** 429 and the gateway's or a proxy's "try again" answers; a 500 may have done something, so it is not retried. */
const RETRYABLE_STATUSES = new Set([429, 502, 503, 504]);

export function isRetryableStatus(status: number): boolean {
  return RETRYABLE_STATUSES.has(status);
}

/** Reads have no effect, and a write with an Idempotency-Key is replayed by the server rather than repeated. */
export function isSafeToRetry(method: string, headers: Headers): boolean {
  return method === 'GET' || method === 'HEAD' || headers.has('idempotency-key');
}

/**
 * Exponential backoff with jitter: between half and all of `base × 2^retry` (capped), so that clients that failed
 * together do not come back together. `retry` counts from 0.
 */
export function backoffMs(policy: RetryPolicy, retry: number, random: () => number = Math.random): number {
  const ceiling = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** retry);
  return Math.round(ceiling / 2 + (random() * ceiling) / 2);
}

/**
 * How long the server asked us to wait, in ms: `Retry-After` (seconds or an HTTP date), else the reset of the
 * exhausted policy in `RateLimit` (`"address";r=0;t=7`, the IETF draft the gateway sends), else the older draft's
 * `RateLimit-Reset` (seconds). Null when none says.
 */
export function serverDelayMs(headers: Headers, now: number = Date.now()): number | null {
  const retryAfter = headers.get('retry-after')?.trim();
  if (retryAfter) {
    if (/^\d+$/.test(retryAfter)) return Number(retryAfter) * 1000;
    const date = Date.parse(retryAfter);
    if (!Number.isNaN(date)) return Math.max(0, date - now);
  }
  const rateLimit = headers.get('ratelimit');
  if (rateLimit) {
    const reset = exhaustedPolicyReset(rateLimit);
    if (reset !== null) return reset * 1000;
  }
  const legacyReset = headers.get('ratelimit-reset')?.trim();
  if (legacyReset && /^\d+$/.test(legacyReset)) return Number(legacyReset) * 1000;
  return null;
}

/** The longest `t` among the policies with nothing left (`r=0`), in seconds. */
function exhaustedPolicyReset(field: string): number | null {
  let longest: number | null = null;
  for (const item of field.split(',')) {
    const params = new Map(
      item
        .split(';')
        .slice(1)
        .map((param) => param.trim().split('=') as [string, string | undefined]),
    );
    const remaining = Number(params.get('r'));
    const reset = Number(params.get('t'));
    if (remaining === 0 && Number.isFinite(reset) && reset >= 0) longest = Math.max(longest ?? 0, reset);
  }
  return longest;
}
