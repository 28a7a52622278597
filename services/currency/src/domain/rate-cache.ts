import { AppError, type Logger } from '@payments/service-kit';
import type { RateSource, RateTable } from './exchange-rates.js';

export interface RateCacheOptions {
  source: RateSource;
  /** How long fetched rates are served without asking the source again. */
  ttlMs: number;
  /** How much longer the last good rates are served while the source fails. */
  graceMs: number;
  logger: Logger;
  /** Milliseconds since the epoch; injected so tests move time instead of sleeping. */
  now?: () => number;
}

export interface CachedRates {
  table: RateTable;
  /** True when the rates were not fetched for this request. */
  cached: boolean;
}

export interface RateCache {
  current(): Promise<CachedRates>;
}

/**
 * Serves rates from memory for the TTL, then asks the source again (one fetch at a time, shared by concurrent
 * requests). When the source fails, the last good rates are served until TTL + grace; never older than that.
 */
export function createRateCache(options: RateCacheOptions): RateCache {
  const { source, ttlMs, graceMs, logger } = options;
  const now = options.now ?? Date.now;
  let last: { table: RateTable; fetchedAt: number } | null = null;
  let fetching: Promise<RateTable> | null = null;

  const fetchRates = (): Promise<RateTable> => {
    fetching ??= source
      .fetchRates()
      .then((table) => {
        last = { table, fetchedAt: now() };
        return table;
      })
      .finally(() => {
        fetching = null;
      });
    return fetching;
  };

  return {
    async current() {
      const fresh = last;
      if (fresh && now() - fresh.fetchedAt < ttlMs) return { table: fresh.table, cached: true };
      try {
        return { table: await fetchRates(), cached: false };
      } catch (error) {
        const fallback = last;
        const age = fallback ? now() - fallback.fetchedAt : null;
        if (fallback && age !== null && age < ttlMs + graceMs) {
          logger.warn(
            { err: error, source: source.name, age_ms: age },
            'rate source failed; serving last good',
          );
          return { table: fallback.table, cached: true };
        }
        logger.error({ err: error, source: source.name }, 'rate source failed and no usable rates are left');
        throw new AppError('SERVICE_UNAVAILABLE', 'Exchange rates are unavailable right now', undefined, {
          'Retry-After': '5',
        });
      }
    },
  };
}
