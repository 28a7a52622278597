import { Type } from '@sinclair/typebox';
import type { Request } from 'express';
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

/**
 * Other lists cap a page at 100; the catalogue is static, cacheable and about 170 entries long, so a page of up to
 * 200 lets a client take it whole in one request.
 */
export const MAX_CURRENCY_PAGE = 200;

export const readPage = queryValidator(
  Type.Object({
    limit: Type.Integer({ minimum: 1, maximum: MAX_CURRENCY_PAGE, default: 20 }),
    offset: Type.Integer({ minimum: 0, default: 0 }),
  }),
);

export const MAX_SEARCH_LENGTH = 64;

const readSearchQuery = queryValidator(
  Type.Object({ q: Type.String({ minLength: 1, maxLength: MAX_SEARCH_LENGTH }) }),
);

/** The trimmed `q`; missing, blank or longer than MAX_SEARCH_LENGTH is a 400. */
export function readSearch(req: Request): string {
  const q = readSearchQuery(req).q.trim();
  if (q === '')
    throw validationError([{ field: 'q', message: 'must not be blank' }], 'Invalid query parameters');
  return q;
}

export const readRatesQuery = queryValidator(Type.Object({ base: Type.Optional(Type.String()) }));
