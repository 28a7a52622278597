import { Ajv } from 'ajv';
import addFormatsModule from 'ajv-formats';
import type { Static, TSchema } from '@sinclair/typebox';
import type { Request } from 'express';
import { ajv, toFieldErrors } from '@payments/contracts';
import { validationError } from '../errors.js';

const addFormats = addFormatsModule as unknown as typeof addFormatsModule.default;
// Query strings are text: coerce "20" to 20 there, and only there.
const queryAjv = addFormats(
  new Ajv({ allErrors: true, coerceTypes: true, useDefaults: true, strict: false }),
);

/** Compiles a body validator once; the returned function throws a 400 VALIDATION_ERROR naming each field. */
export function bodyValidator<S extends TSchema>(schema: S): (req: Request) => Static<S> {
  const validate = ajv.compile(schema);
  return (req) => {
    const body: unknown = req.body;
    if (body === undefined || body === null || typeof body !== 'object' || Array.isArray(body)) {
      throw validationError(
        [{ field: '(body)', message: 'must be a JSON object' }],
        'The request body must be a JSON object',
      );
    }
    if (!validate(body)) throw validationError(toFieldErrors(validate.errors));
    return body as Static<S>;
  };
}

/** Compiles a query validator once; defaults are applied and numbers coerced. */
export function queryValidator<S extends TSchema>(schema: S): (req: Request) => Static<S> {
  const validate = queryAjv.compile(schema);
  return (req) => {
    const query = { ...(req.query as Record<string, unknown>) };
    if (!validate(query)) throw validationError(toFieldErrors(validate.errors), 'Invalid query parameters');
    return query as Static<S>;
  };
}
