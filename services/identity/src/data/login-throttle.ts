import {
  RateLimiterMemory,
  RateLimiterRedis,
  RateLimiterRes,
  type RateLimiterAbstract,
} from 'rate-limiter-flexible';
import type { Logger } from '@payments/service-kit';

export type ThrottleDecision = { allowed: true } | { allowed: false; retryAfterSeconds: number };

/**
 * Failed logins per identity and per client address in a fixed window. An attempt is counted before its
 * password is checked, so concurrent guesses cannot slip past the limit, and handed back when it succeeds.
 */
export interface LoginThrottle {
  attempt(identityKey: string, address: string): Promise<ThrottleDecision>;
  /** A correct password: the identity starts over and the address gets its attempt back. */
  succeeded(identityKey: string, address: string): Promise<void>;
  close(): Promise<void>;
}

export interface LoginThrottleOptions {
  maxFailures: number;
  windowSeconds: number;
  redisUrl?: string;
  logger: Logger;
}

export async function createLoginThrottle(options: LoginThrottleOptions): Promise<LoginThrottle> {
  const limits = { points: options.maxFailures, duration: options.windowSeconds };
  let limiterFor: (keyPrefix: string) => RateLimiterAbstract;
  let close = async () => {};
  if (options.redisUrl) {
    const { Redis } = await import('ioredis');
    // No offline queue: while Redis is away the memory insurance limiter answers at once.
    const redis = new Redis(options.redisUrl, { enableOfflineQueue: false, maxRetriesPerRequest: 1 });
    redis.on('error', (error) => options.logger.warn({ err: error }, 'login throttle store unavailable'));
    limiterFor = (keyPrefix) =>
      new RateLimiterRedis({
        ...limits,
        keyPrefix,
        storeClient: redis,
        insuranceLimiter: new RateLimiterMemory({ ...limits, keyPrefix }),
      });
    close = async () => {
      await redis.quit().catch(() => redis.disconnect());
    };
  } else {
    limiterFor = (keyPrefix) => new RateLimiterMemory({ ...limits, keyPrefix });
  }
  const byIdentity = limiterFor('login_failures_identity');
  const byAddress = limiterFor('login_failures_address');

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
        ? { allowed: false, retryAfterSeconds: Math.max(1, Math.ceil(retryAfterMs / 1000)) }
        : { allowed: true };
    },
    async succeeded(identityKey, address) {
      await Promise.all([byIdentity.delete(identityKey), byAddress.reward(address, 1)]);
    },
    close,
  };
}
