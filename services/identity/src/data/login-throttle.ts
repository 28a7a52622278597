import { RateLimiterRes } from 'rate-limiter-flexible';
import type { ThrottleStore } from './throttle-store.js';

export type ThrottleDecision = { allowed: true } | { allowed: false; retryAfterSeconds: number };

/**
 * Failed logins per identity and per client address in a fixed window. An attempt is counted before its
 * password is checked, so concurrent guesses cannot slip past the limit, and handed back when it succeeds.
 */
export interface LoginThrottle {
  attempt(identityKey: string, address: string): Promise<ThrottleDecision>;
  /** A correct password: the identity starts over and the address gets its attempt back. */
  succeeded(identityKey: string, address: string): Promise<void>;
}

export interface LoginThrottleOptions {
  maxFailures: number;
  windowSeconds: number;
}

export function createLoginThrottle(store: ThrottleStore, options: LoginThrottleOptions): LoginThrottle {
  const limits = { points: options.maxFailures, duration: options.windowSeconds };
  const byIdentity = store.limiter('login_failures_identity', limits);
  const byAddress = store.limiter('login_failures_address', limits);
  return {
    async attempt(identityKey, address) {
      const outcomes = await Promise.allSettled([
        byIdentity.consume(identityKey),
        byAddress.consume(address),
      ]);
      let rejected = false;
      let retryAfterMs = 0;
      for (const outcome of outcomes) {
        if (outcome.status === 'fulfilled') continue;
        if (!(outcome.reason instanceof RateLimiterRes)) throw outcome.reason;
        rejected = true;
        retryAfterMs = Math.max(retryAfterMs, outcome.reason.msBeforeNext);
      }
      return rejected
        ? { allowed: false, retryAfterSeconds: retryAfterSecondsOf(retryAfterMs) }
        : { allowed: true };
    },
    async succeeded(identityKey, address) {
      await Promise.all([byIdentity.delete(identityKey), byAddress.reward(address, 1)]);
    },
  };
}

export function retryAfterSecondsOf(ms: number): number {
  return Math.max(1, Math.ceil(ms / 1000));
}
