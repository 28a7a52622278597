import type { RequestHandler } from 'express';
import { AppError, notFound } from '@payments/service-kit';
import type { Catalogue } from '../domain/catalogue.js';
import { crossRate, ratesAgainst } from '../domain/exchange-rates.js';
import type { RateCache } from '../domain/rate-cache.js';
import { parseCurrencyCode, readRatesQuery } from './currency-params.js';

export interface RateHandlerDeps {
  catalogue: Catalogue;
  rates: RateCache;
}

// `cached` differs from one request to the next, so shared caches must not keep these answers.
const RATE_CACHE_CONTROL = 'no-store';

export function createRateHandlers({
  catalogue,
  rates,
}: RateHandlerDeps): Record<'listRates' | 'showRate', RequestHandler> {
  const knownCode = (value: unknown, field: string): string => {
    const code = parseCurrencyCode(value, field);
    if (!catalogue.find(code)) throw notFound(`Currency ${code}`);
    return code;
  };

  const listRates: RequestHandler = async (req, res) => {
    const { base: given } = readRatesQuery(req);
    const base = given === undefined ? catalogue.defaultCurrency().code : knownCode(given, 'base');
    const { table, cached } = await rates.current();
    const against = ratesAgainst(table, base);
    if (!against) throw new AppError('RESOURCE_NOT_FOUND', `No exchange rates for ${base}`);
    res.set('Cache-Control', RATE_CACHE_CONTROL).json({ base, as_of: table.as_of, cached, rates: against });
  };

  const showRate: RequestHandler = async (req, res) => {
    const from = knownCode(req.params.from, 'from');
    const to = knownCode(req.params.to, 'to');
    const { table, cached } = await rates.current();
    const rate = crossRate(table, from, to);
    if (rate === null) throw new AppError('RESOURCE_NOT_FOUND', `No exchange rate from ${from} to ${to}`);
    res.set('Cache-Control', RATE_CACHE_CONTROL).json({ from, to, rate, as_of: table.as_of, cached });
  };

  return { listRates, showRate };
}
