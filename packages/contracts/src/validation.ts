import { Ajv, type ErrorObject } from 'ajv';
import addFormatsModule from 'ajv-formats';
import type { Static, TSchema } from '@sinclair/typebox';
import type { FieldError } from './errors.js';

// ajv-formats ships CommonJS with a default export; under NodeNext it arrives wrapped.
const addFormats = addFormatsModule as unknown as typeof addFormatsModule.default;

/** One ajv instance for every contract schema: formats on, all errors reported, nothing coerced. */
export const ajv = addFormats(new Ajv({ allErrors: true, strict: false }));

export type SchemaCheck<T> = (value: unknown) => { ok: true; value: T } | { ok: false; errors: string[] };

export function compileSchema<S extends TSchema>(schema: S): SchemaCheck<Static<S>> {
  const validate = ajv.compile(schema);
  return (value) =>
    validate(value)
      ? { ok: true, value: value as Static<S> }
      : {
          ok: false,
          errors: (validate.errors ?? []).map((e) => `${e.instancePath || '/'} ${e.message ?? 'is invalid'}`),
        };
}

/** Turns ajv errors into the problem body's `errors[]`, naming fields as they appear in the request. */
export function toFieldErrors(errors: ErrorObject[] | null | undefined): FieldError[] {
  return (errors ?? []).map((error) => {
    const path = error.instancePath.replace(/^\//, '').replaceAll('/', '.');
    if (error.keyword === 'required') {
      const field = (error.params as { missingProperty: string }).missingProperty;
      return { field: path ? `${path}.${field}` : field, message: 'is required' };
    }
    if (error.keyword === 'additionalProperties') {
      const field = (error.params as { additionalProperty: string }).additionalProperty;
      return { field: path ? `${path}.${field}` : field, message: 'is not allowed' };
    }
    return { field: path || '(body)', message: error.message ?? 'is invalid' };
  });
}
