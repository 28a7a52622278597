import { AppError, createServiceClient, type Logger } from '@payments/service-kit';
import type { CurrencyDirectory, CurrencyInfo, ExchangeRate } from '../use-cases/currencies.js';

export interface CurrencyDirectoryOptions {
  baseUrl: string;
  ttlMs: number;
  rateTtlMs: number;
  /** How long past its TTL a rate may be served while the currency service is down (exponents: without end). */
  rateStaleGraceMs?: number;
  logger: Logger;
  now?: () => number;
}

interface CurrencyBody {
  code: string;
  minor_units: number | null;
  supported: boolean;
}

const CODE = /^[A-Z]{3}$/;

const unavailable = () =>
  new AppError('SERVICE_UNAVAILABLE', 'The currency service is unavailable', undefined, {
    'Retry-After': '1',
  });

/**
 * A cache that loads each key once at a time and keeps values for `ttlMs`; when a refresh fails it keeps
 * serving the stale value for `staleGraceMs` past its expiry, so a currency service outage does not take account
 * reads down with it.
 */
function createTtlCache<T>(ttlMs: number, now: () => number, logger: Logger, staleGraceMs = Infinity) {
  const entries = new Map<string, { value: T; expiresAt: number }>();
  const loading = new Map<string, Promise<T>>();
  return async (key: string, load: () => Promise<T>): Promise<T> => {
    const cached = entries.get(key);
    if (cached && cached.expiresAt > now()) return cached.value;
    let pending = loading.get(key);
    if (!pending) {
      pending = load()
        .then((value) => {
          entries.set(key, { value, expiresAt: now() + ttlMs });
          return value;
        })
        .finally(() => loading.delete(key));
      loading.set(key, pending);
    }
    try {
      return await pending;
    } catch (error) {
      if (!cached || now() - cached.expiresAt > staleGraceMs) throw error;
      logger.warn({ err: error, key }, 'serving a stale currency value: the currency service did not answer');
      return cached.value;
    }
  };
}

export function createCurrencyDirectory(options: CurrencyDirectoryOptions): CurrencyDirectory {
  const client = createServiceClient(options.baseUrl);
  const now = options.now ?? Date.now;
  const currencies = createTtlCache<CurrencyInfo | null>(options.ttlMs, now, options.logger);
  const supportedList = createTtlCache<CurrencyInfo[]>(options.ttlMs, now, options.logger);
  const rates = createTtlCache<ExchangeRate | null>(
    options.rateTtlMs,
    now,
    options.logger,
    options.rateStaleGraceMs,
  );

  const toInfo = (body: CurrencyBody): CurrencyInfo => ({
    code: body.code,
    exponent: body.minor_units ?? 0,
    supported: body.supported,
  });

  const getJson = async <T>(path: string): Promise<T | null> => {
    const response = await client.get<T>(path);
    if (response.status === 404) return null;
    if (response.status !== 200) {
      options.logger.warn({ path, status: response.status }, 'unexpected answer from the currency service');
      throw unavailable();
    }
    return response.body;
  };

  return {
    find(code) {
      if (!CODE.test(code)) return Promise.resolve(null);
      return currencies(code, async () => {
        const body = await getJson<CurrencyBody>(`/api/currencies/${code}`);
        return body ? toInfo(body) : null;
      });
    },

    supported() {
      return supportedList('supported', async () => {
        const body = await getJson<{ data: CurrencyBody[] }>('/api/currencies/supported');
        if (!body) throw unavailable();
        return body.data.map(toInfo);
      });
    },

    rate(from, to) {
      if (!CODE.test(from) || !CODE.test(to)) return Promise.resolve(null);
      return rates(`${from}:${to}`, async () => {
        const body = await getJson<{ from: string; to: string; rate: string | number; as_of: string }>(
          `/api/currencies/${from}/rate/${to}`,
        );
        return body ? { from, to, rate: String(body.rate), asOf: body.as_of } : null;
      });
    },
  };
}
