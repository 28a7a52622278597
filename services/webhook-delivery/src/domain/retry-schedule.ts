export interface RetryPolicy {
  baseMs: number;
  maxMs: number;
}

/**
 * How long to wait after failed attempt `attempt` (1-based): exponential, capped, with "equal jitter" (half
 * fixed, half random) so endpoints that failed together do not all retry at the same instant.
 */
export function retryDelayMs(
  attempt: number,
  policy: RetryPolicy,
  random: () => number = Math.random,
): number {
  const exponential = Math.min(policy.maxMs, policy.baseMs * 2 ** Math.min(attempt - 1, 40));
  return Math.round(exponential / 2 + random() * (exponential / 2));
}

/** When to try again, or null when the next attempt would fall after the retry window: the delivery has failed. */
export function nextAttemptAt(
  attempt: number,
  now: Date,
  retryUntil: Date,
  policy: RetryPolicy,
  random?: () => number,
): Date | null {
  const next = new Date(now.getTime() + retryDelayMs(attempt, policy, random));
  return next.getTime() > retryUntil.getTime() ? null : next;
}
