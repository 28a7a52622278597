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
  // A key's own error names the key (ajv adds a vaguer "property name must be valid" after it).
  return (errors ?? []).flatMap((error) => (error.keyword === 'propertyNames' ? [] : [toFieldError(error)]));
}

/** How long a key may be quoted in a message. */
const QUOTED_KEY_MAX = 40;

function toFieldError(error: ErrorObject): FieldError {
  const path = error.instancePath.replace(/^\//, '').replaceAll('/', '.');
  if (error.propertyName !== undefined) {
    const name = error.propertyName;
    const quoted = JSON.stringify(name.length > QUOTED_KEY_MAX ? `${name.slice(0, QUOTED_KEY_MAX)}…` : name);
    return { field: path || '(body)', message: `key ${quoted} ${error.message ?? 'is invalid'}` };
  }
  if (error.keyword === 'maxProperties') {
    const limit = (error.params as { limit: number }).limit;
    return { field: path || '(body)', message: `must have at most ${limit} keys` };
  }
  if (error.keyword === 'required') {
    const field = (error.params as { missingProperty: string }).missingProperty;
    return { field: path ? `${path}.${field}` : field, message: 'is required' };
  }
  if (error.keyword === 'additionalProperties') {
    const field = (error.params as { additionalProperty: string }).additionalProperty;
    return { field: path ? `${path}.${field}` : field, message: 'is not allowed' };
  }
  return { field: path || '(body)', message: error.message ?? 'is invalid' };
}
