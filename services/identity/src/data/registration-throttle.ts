import { RateLimiterRes } from 'rate-limiter-flexible';
import { retryAfterSecondsOf, type ThrottleDecision } from './login-throttle.js';
import type { ThrottleStore } from './throttle-store.js';

/** Registrations per client address in a fixed window: each one costs an argon2 hash. */
export interface RegistrationThrottle {
  attempt(address: string): Promise<ThrottleDecision>;
}

export interface RegistrationThrottleOptions {
  maxPerWindow: number;
  windowSeconds: number;
}

export function createRegistrationThrottle(
  store: ThrottleStore,
  options: RegistrationThrottleOptions,
): RegistrationThrottle {
  const byAddress = store.limiter('registrations_address', {
    points: options.maxPerWindow,
    duration: options.windowSeconds,
  });
  return {
    async attempt(address) {
      try {
        await byAddress.consume(address);
        return { allowed: true };
      } catch (error) {
        if (!(error instanceof RateLimiterRes)) throw error;
        return { allowed: false, retryAfterSeconds: retryAfterSecondsOf(error.msBeforeNext) };
      }
    },
  };
}
