import { RateLimiterMemory, RateLimiterRedis, type RateLimiterAbstract } from 'rate-limiter-flexible';
import type { Logger } from '@payments/service-kit';

export interface ThrottleLimits {
  points: number;
  /** Seconds. */
  duration: number;
}

/** Where identity's counters live: in memory, or in Redis shared by every identity process when REDIS_URL is set. */
export interface ThrottleStore {
  limiter(keyPrefix: string, limits: ThrottleLimits): RateLimiterAbstract;
  close(): Promise<void>;
}

export async function createThrottleStore(options: {
  redisUrl?: string;
  logger: Logger;
}): Promise<ThrottleStore> {
  if (!options.redisUrl) {
    return {
      limiter: (keyPrefix, limits) => new RateLimiterMemory({ ...limits, keyPrefix }),
      close: async () => {},
    };
  }
  const { Redis } = await import('ioredis');
  // No offline queue: while Redis is away the memory insurance limiter answers at once.
  const redis = new Redis(options.redisUrl, { enableOfflineQueue: false, maxRetriesPerRequest: 1 });
  redis.on('error', (error) => options.logger.warn({ err: error }, 'throttle store unavailable'));
  return {
    limiter: (keyPrefix, limits) =>
      new RateLimiterRedis({
        ...limits,
        keyPrefix,
        storeClient: redis,
        insuranceLimiter: new RateLimiterMemory({ ...limits, keyPrefix }),
      }),
    async close() {
      await redis.quit().catch(() => redis.disconnect());
    },
  };
}
