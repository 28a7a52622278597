import { Type } from '@sinclair/typebox';
import { CurrencyCode, Nullable, Page, Timestamp } from './common.js';

/**
 * Other lists cap a page at 100; the catalogue is static, cacheable and about 170 entries long, so a page of up to
 * 200 lets a client take it whole in one request.
 */
export const MAX_CURRENCY_PAGE = 200;
export const MAX_SEARCH_LENGTH = 64;

/** GET /api/currencies. */
export const CurrencyPageQuery = Type.Object({
  limit: Type.Integer({ minimum: 1, maximum: MAX_CURRENCY_PAGE, default: 20, description: 'Page size' }),
  offset: Type.Integer({ minimum: 0, default: 0, description: 'Items to skip' }),
});

/** GET /api/currencies/search. */
export const CurrencySearchQuery = Type.Object({
  q: Type.String({
    minLength: 1,
    maxLength: MAX_SEARCH_LENGTH,
    description: 'A code, a name or a country, accents and case ignored',
  }),
});

/** GET /api/currencies/rates. */
export const RatesQuery = Type.Object({
  base: Type.Optional(Type.String({ description: 'The base currency; the default currency when left out' })),
});

/** A code in a path: any case, three letters (else 400). */
export const CurrencyCodeParam = Type.String({
  pattern: '^[A-Za-z]{3}$',
  description: 'ISO 4217 code, any case',
});

export const CurrencyView = Type.Object(
  {
    code: CurrencyCode,
    name: Type.String(),
    numeric_code: Type.String({ pattern: '^\\d{3}$' }),
    minor_units: Type.Integer({ minimum: 0, description: 'The ISO 4217 exponent (2 for cents)' }),
    symbol: Nullable(Type.String()),
    regions: Type.Array(Type.String(), { description: 'Continent codes, e.g. EU' }),
    countries: Type.Array(
      Type.Object(
        { code: Nullable(Type.String({ description: 'ISO 3166-1 alpha-2' })), name: Type.String() },
        { additionalProperties: false },
      ),
    ),
    supported: Type.Boolean({ description: 'Whether accounts may be opened in it' }),
  },
  { additionalProperties: false },
);

export const CurrencyPage = Page(CurrencyView);

export const CurrencyList = Type.Object({ data: Type.Array(CurrencyView) }, { additionalProperties: false });

export const CurrencySupportView = Type.Object(
  { code: CurrencyCode, supported: Type.Boolean() },
  { additionalProperties: false },
);

export const RegionCurrenciesView = Type.Object(
  {
    region: Type.Object({ code: Type.String(), name: Type.String() }, { additionalProperties: false }),
    data: Type.Array(CurrencyView),
  },
  { additionalProperties: false },
);

const Counts = (description: string) =>
  Type.Record(Type.String(), Type.Integer({ minimum: 0 }), { description });

export const CurrencyStatisticsView = Type.Object(
  {
    total: Type.Integer({ minimum: 0 }),
    supported: Type.Integer({ minimum: 0 }),
    by_region: Counts('Currencies per region name'),
    by_minor_units: Counts('Currencies per exponent'),
    accounts_per_currency: Counts('Accounts opened per currency code'),
  },
  { additionalProperties: false },
);

const Rate = Type.String({ pattern: '^[0-9.]+$', description: 'An exact decimal' });

/** v1.1: exchange rates, served from a cache with a TTL. */
export const RateTableView = Type.Object(
  {
    base: CurrencyCode,
    as_of: Timestamp,
    cached: Type.Boolean({ description: 'Whether the answer came from the cache' }),
    rates: Type.Record(Type.String(), Rate, { description: 'Units of each currency per 1 base' }),
  },
  { additionalProperties: false },
);

export const ExchangeRateView = Type.Object(
  { from: CurrencyCode, to: CurrencyCode, rate: Rate, as_of: Timestamp, cached: Type.Boolean() },
  { additionalProperties: false },
);
