import { Redis } from 'ioredis';
import {
  RateLimiterMemory,
  RateLimiterRedis,
  RateLimiterRes,
  type RateLimiterAbstract,
} from 'rate-limiter-flexible';
import type { Logger } from '@payments/service-kit';
import type { RateLimitPolicy, RateLimitState } from '../domain/rate-limit-headers.js';

export interface LimitOutcome extends RateLimitState {
  allowed: boolean;
}

export interface Limiter {
  policy: RateLimitPolicy;
  /** Spends one point for `key`; never throws because the store is down (memory takes over). */
  consume(key: string): Promise<LimitOutcome>;
}

export interface LimiterStore {
  limiter(policy: RateLimitPolicy): Limiter;
  close(): Promise<void>;
}

/** Counters in memory, or in Redis (shared by every gateway process) with memory as insurance while it is down. */
export async function createLimiterStore(options: {
  redisUrl?: string | undefined;
  keyPrefix: string;
  logger: Logger;
}): Promise<LimiterStore> {
  const redis = options.redisUrl ? await connectRedis(options.redisUrl, options.logger) : null;
  return {
    limiter(policy) {
      const settings = {
        keyPrefix: `${options.keyPrefix}:${policy.name}`,
        points: policy.quota,
        duration: policy.windowSeconds,
      };
      const memory = new RateLimiterMemory(settings);
      const backend: RateLimiterAbstract = redis
        ? new RateLimiterRedis({ ...settings, storeClient: redis, insuranceLimiter: memory })
        : memory;
      return { policy, consume: (key) => consume(backend, policy, key) };
    },
    async close() {
      if (redis) await redis.quit().catch(() => redis.disconnect());
    },
  };
}

async function consume(backend: RateLimiterAbstract, policy: RateLimitPolicy, key: string) {
  let result: RateLimiterRes;
  let allowed = true;
  try {
    result = await backend.consume(key);
  } catch (rejection) {
    if (!(rejection instanceof RateLimiterRes)) throw rejection;
    result = rejection;
    allowed = false;
  }
  return {
    allowed,
    policy,
    remaining: Math.max(0, result.remainingPoints),
    resetSeconds: Math.max(1, Math.ceil(result.msBeforeNext / 1000)),
  };
}

async function connectRedis(url: string, logger: Logger): Promise<Redis> {
  // No offline queue: while Redis is away a command fails at once and the memory insurance answers.
  const redis = new Redis(url, { enableOfflineQueue: false, maxRetriesPerRequest: 1, connectTimeout: 2000 });
  redis.on('error', (error: Error) => logger.warn({ err: error }, 'Redis rate-limit store error'));
  await new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, 2000);
    redis.once('ready', () => {
      clearTimeout(timer);
      resolve();
    });
  });
  return redis;
}
