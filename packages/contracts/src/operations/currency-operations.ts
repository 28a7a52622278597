import type { ComponentName } from '../http/components.js';
import type { Operation } from './operation.js';

/** A read of the catalogue: public, cacheable, and answered 304 for a current `If-None-Match`. */
function catalogueRead(
  path: string,
  summary: string,
  schema: ComponentName,
  extra: Partial<Operation> = {},
): Operation {
  return {
    method: 'get',
    path,
    owner: 'currency',
    access: 'public',
    tag: 'Currencies',
    summary,
    success: { status: 200, description: summary, schema, headers: ['ETag', 'CacheControl'] },
    alsoAnswers: [304],
    errors: path.includes('{') ? [400, 404] : [],
    ...extra,
  };
}

/** Currency: the ISO 4217 catalogue and exchange rates, all public. */
export const CURRENCY_OPERATIONS = {
  listCurrencies: catalogueRead('/api/currencies', 'Every active ISO 4217 currency', 'CurrencyPage', {
    query: 'CurrencyPageQuery',
    errors: [400],
  }),
  listSupportedCurrencies: catalogueRead(
    '/api/currencies/supported',
    'The currencies accounts may use',
    'CurrencyList',
  ),
  searchCurrencies: catalogueRead(
    '/api/currencies/search',
    'Currencies matching a code, name or country',
    'CurrencyList',
    { query: 'CurrencySearchQuery', errors: [400] },
  ),
  getCurrencyStatistics: catalogueRead(
    '/api/currencies/statistics',
    'Counts by region, exponent and accounts',
    'CurrencyStatistics',
  ),
  getDefaultCurrency: catalogueRead('/api/currencies/default', 'The default currency', 'Currency'),
  listExchangeRates: {
    method: 'get',
    path: '/api/currencies/rates',
    owner: 'currency',
    access: 'public',
    tag: 'Exchange rates',
    summary: 'Exchange rates against a base currency (v1.1, cached)',
    query: 'RatesQuery',
    success: { status: 200, description: 'The rates', schema: 'RateTable', headers: ['CacheControl'] },
    errors: [400, 404],
  },
  listRegionCurrencies: catalogueRead(
    '/api/currencies/region/{region}',
    'Currencies used in a region',
    'RegionCurrencies',
    { errors: [404] },
  ),
  getCurrency: catalogueRead('/api/currencies/{code}', 'One currency', 'Currency'),
  checkCurrencySupported: catalogueRead(
    '/api/currencies/{code}/supported',
    'Whether a currency is supported',
    'CurrencySupport',
  ),
  getExchangeRate: {
    method: 'get',
    path: '/api/currencies/{from}/rate/{to}',
    owner: 'currency',
    access: 'public',
    tag: 'Exchange rates',
    summary: 'The rate from one currency to another (v1.1, cached)',
    success: { status: 200, description: 'The rate', schema: 'ExchangeRate', headers: ['CacheControl'] },
    errors: [400, 404],
  },
} satisfies Record<string, Operation>;
