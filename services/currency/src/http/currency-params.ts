import type { Request } from 'express';
import { CurrencyPageQuery, CurrencySearchQuery, RatesQuery } from '@payments/contracts';
import { queryValidator, validationError } from '@payments/service-kit';

const CODE = /^[A-Za-z]{3}$/;

/** A path or query code in any case, upper-cased; anything but three letters is a 400. */
export function parseCurrencyCode(value: unknown, field: string): string {
  if (typeof value !== 'string' || !CODE.test(value)) {
    throw validationError(
      [{ field, message: 'must be a three-letter ISO 4217 currency code' }],
      `${field} must be a three-letter ISO 4217 currency code`,
    );
  }
  return value.toUpperCase();
}

export const readPage = queryValidator(CurrencyPageQuery);

const readSearchQuery = queryValidator(CurrencySearchQuery);

/** The trimmed `q`; missing, blank or longer than MAX_SEARCH_LENGTH is a 400. */
export function readSearch(req: Request): string {
  const q = readSearchQuery(req).q.trim();
  if (q === '')
    throw validationError([{ field: 'q', message: 'must not be blank' }], 'Invalid query parameters');
  return q;
}

export const readRatesQuery = queryValidator(RatesQuery);
