import type { ComponentName } from '../http/components.js';
import type { Operation, Tag } from './operation.js';

/** A read anyone may make of the currency service. */
function currencyRead(
  path: string,
  tag: Tag,
  summary: string,
  success: Operation['success'],
  rest: Partial<Operation>,
): Operation {
  return {
    method: 'get',
    path,
    owner: 'currency',
    access: 'public',
    tag,
    summary,
    success,
    errors: [],
    ...rest,
  };
}

/** A read of the catalogue: cacheable, and answered 304 for a current `If-None-Match`. */
const catalogueRead = (
  path: string,
  summary: string,
  schema: ComponentName,
  extra: Partial<Operation> = {},
) =>
  currencyRead(
    path,
    'Currencies',
    summary,
    { status: 200, description: summary, schema, headers: ['ETag', 'CacheControl'] },
    { alsoAnswers: [304], errors: path.includes('{') ? [400, 404] : [], ...extra },
  );

/** A read of the exchange rates, cached for their time to live. */
const ratesRead = (
  path: string,
  summary: string,
  answer: { description: string; schema: ComponentName },
  extra: Partial<Operation> = {},
) =>
  currencyRead(
    path,
    'Exchange rates',
    summary,
    { status: 200, ...answer, headers: ['CacheControl'] },
    { errors: [400, 404], ...extra },
  );

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
  listExchangeRates: ratesRead(
    '/api/currencies/rates',
    'Exchange rates against a base currency (v1.1, cached)',
    { description: 'The rates', schema: 'RateTable' },
    { query: 'RatesQuery' },
  ),
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
  getExchangeRate: ratesRead(
    '/api/currencies/{from}/rate/{to}',
    'The rate from one currency to another (v1.1, cached)',
    { description: 'The rate', schema: 'ExchangeRate' },
  ),
} satisfies Record<string, Operation>;
