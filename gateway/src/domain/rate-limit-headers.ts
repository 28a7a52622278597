export interface RateLimitPolicy {
  /** The policy's name in the RateLimit-Policy and RateLimit fields. */
  name: string;
  quota: number;
  windowSeconds: number;
}

export interface RateLimitState {
  policy: RateLimitPolicy;
  remaining: number;
  resetSeconds: number;
}

/** `RateLimit-Policy` in the IETF draft's structured-field syntax: `"address";q=100;w=10`. */
export function formatPolicies(states: readonly RateLimitState[]): string {
  return states
    .map(({ policy }) => `"${policy.name}";q=${policy.quota};w=${policy.windowSeconds}`)
    .join(', ');
}

/** `RateLimit`: what is left of each policy and when it resets, e.g. `"address";r=42;t=7`. */
export function formatRemaining(states: readonly RateLimitState[]): string {
  return states.map((s) => `"${s.policy.name}";r=${s.remaining};t=${s.resetSeconds}`).join(', ');
}
