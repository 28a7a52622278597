import { Ajv } from 'ajv';
import { Type, type Static, type TObject, type TProperties } from '@sinclair/typebox';

export class ConfigError extends Error {
  override name = 'ConfigError';
}

const ajv = new Ajv({ allErrors: true, coerceTypes: true, useDefaults: true, strict: false });

/** Variables every service reads. Services extend this with their own. */
export const CommonConfig = {
  NODE_ENV: Type.Union([Type.Literal('development'), Type.Literal('test'), Type.Literal('production')], {
    default: 'development',
  }),
  LOG_LEVEL: Type.Union(
    ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'].map((level) => Type.Literal(level)),
    { default: 'info' },
  ),
  HOST: Type.String({ default: '127.0.0.1' }),
  /** The deployment's service credential for `/internal/*` and `/metrics`; comma-separated during a rotation. */
  SERVICE_TOKEN: Type.Optional(Type.String()),
} satisfies TProperties;

export const PortNumber = (fallback: number) =>
  Type.Integer({ minimum: 0, maximum: 65535, default: fallback });
export const Url = (fallback?: string) =>
  Type.String({ pattern: '^[a-z][a-z0-9+.-]*://', ...(fallback ? { default: fallback } : {}) });

/**
 * Reads the variables named by `schema` from the environment once, coerces and validates them, and throws a
 * ConfigError naming every bad or missing variable. Empty strings count as unset.
 */
export function loadConfig<S extends TObject>(schema: S, env: NodeJS.ProcessEnv = process.env): Static<S> {
  const raw: Record<string, string> = {};
  for (const key of Object.keys(schema.properties)) {
    const value = env[key];
    if (value !== undefined && value !== '') raw[key] = value;
  }
  const validate = ajv.compile(schema);
  if (validate(raw)) return raw as Static<S>;
  const problems = (validate.errors ?? []).map((error) => {
    if (error.keyword === 'required') {
      return `${(error.params as { missingProperty: string }).missingProperty} is required`;
    }
    const name = error.instancePath.replace(/^\//, '');
    const given = env[name];
    return `${name} ${error.message ?? 'is invalid'}${given === undefined ? '' : ` (got ${JSON.stringify(given)})`}`;
  });
  throw new ConfigError(`Invalid configuration: ${[...new Set(problems)].join('; ')}`);
}

/** Comma-separated list variables, e.g. WEBHOOK_SECRETS=a,b. */
export function splitList(value: string | undefined): string[] {
  return (value ?? '')
    .split(',')
    .map((item) => item.trim())
    .filter(Boolean);
}
