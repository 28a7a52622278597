import type { RequestOptions } from '../http-transport.js';
import { offsetPagedList, type PagedList } from '../pagination.js';
import type {
  Currency,
  CurrencyList,
  CurrencyPageQuery,
  CurrencyStatistics,
  CurrencySupport,
  ExchangeRate,
  Page,
  RateTable,
  RatesQuery,
  RegionCurrencies,
} from '../types.js';
import type { ResourceDeps } from './resource-deps.js';

/** The catalogue allows pages of up to 200, so that it comes whole in one request. */
const MAX_CURRENCY_PAGE = 200;

/** The ISO 4217 catalogue (public: no token needed). */
export function currenciesResource({ transport }: ResourceDeps) {
  const read = async <T>(
    operation:
      | 'listSupportedCurrencies'
      | 'getCurrencyStatistics'
      | 'getDefaultCurrency'
      | 'getCurrency'
      | 'checkCurrencySupported'
      | 'listRegionCurrencies'
      | 'searchCurrencies',
    request: { params?: Record<string, string>; query?: Record<string, string> },
    options: RequestOptions | undefined,
  ) => transport.body<T>(operation, { ...request, options });
  const listPage = async (query: CurrencyPageQuery = {}, options?: RequestOptions) =>
    transport.body<Page<Currency>>('listCurrencies', { query, options });

  return {
    /** Every active ISO 4217 currency. */
    list: (query: CurrencyPageQuery = {}, options?: RequestOptions): PagedList<Currency> =>
      offsetPagedList((window) => listPage({ ...query, ...window }, options), query, MAX_CURRENCY_PAGE),
    listPage,
    /** The currencies accounts may be opened in. */
    supported: (options?: RequestOptions) => read<CurrencyList>('listSupportedCurrencies', {}, options),
    /** By code, name or country, accents and case ignored. */
    search: (q: string, options?: RequestOptions) =>
      read<CurrencyList>('searchCurrencies', { query: { q } }, options),
    statistics: (options?: RequestOptions) => read<CurrencyStatistics>('getCurrencyStatistics', {}, options),
    default: (options?: RequestOptions) => read<Currency>('getDefaultCurrency', {}, options),
    /** By continent name or code (`Europe`, `EU`). */
    region: (region: string, options?: RequestOptions) =>
      read<RegionCurrencies>('listRegionCurrencies', { params: { region } }, options),
    get: (code: string, options?: RequestOptions) =>
      read<Currency>('getCurrency', { params: { code } }, options),
    isSupported: (code: string, options?: RequestOptions) =>
      read<CurrencySupport>('checkCurrencySupported', { params: { code } }, options),
  };
}

/** Exchange rates (v1.1), cached with a TTL. */
export function ratesResource({ transport }: ResourceDeps) {
  return {
    /** Every rate against one base (the default currency when left out). */
    async list(query: RatesQuery = {}, options?: RequestOptions): Promise<RateTable> {
      return transport.body<RateTable>('listExchangeRates', { query, options });
    },
    async get(from: string, to: string, options?: RequestOptions): Promise<ExchangeRate> {
      return transport.body<ExchangeRate>('getExchangeRate', { params: { from, to }, options });
    },
  };
}
