import type { CURRENCY_OPERATIONS } from '../currency-operations.js';
import type { OperationExamples } from '../operation.js';
import { eur, jpy, NOW, page, usd } from './samples.js';

/** Examples of the currency catalogue and the exchange rates. */
export const CURRENCY_EXAMPLES = {
  listCurrencies: { response: { data: [eur, jpy, usd], has_more: true, pagination: page(155, 3) } },
  listSupportedCurrencies: { response: { data: [eur, usd] } },
  searchCurrencies: { response: { data: [usd] } },
  getCurrencyStatistics: {
    response: {
      total: 155,
      supported: 2,
      by_region: { Africa: 42, Americas: 30, Asia: 44, Europe: 27, Oceania: 12 },
      by_minor_units: { '0': 16, '2': 131, '3': 8 },
      accounts_per_currency: { USD: 1840, EUR: 622 },
    },
  },
  getDefaultCurrency: { response: usd },
  listExchangeRates: {
    response: {
      base: 'USD',
      as_of: NOW,
      cached: true,
      rates: { EUR: '0.9174', GBP: '0.7861', JPY: '149.32' },
    },
  },
  listRegionCurrencies: { response: { region: { code: 'EU', name: 'Europe' }, data: [eur] } },
  getCurrency: { response: eur },
  checkCurrencySupported: { response: { code: 'EUR', supported: true } },
  getExchangeRate: { response: { from: 'USD', to: 'EUR', rate: '0.9174', as_of: NOW, cached: false } },
} satisfies { [K in keyof typeof CURRENCY_OPERATIONS]?: OperationExamples };
