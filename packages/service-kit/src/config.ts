import { Ajv } from 'ajv';
import { Type, type Static, type TObject, type TProperties } from '@sinclair/typebox';
import { DEFAULT_INBOX_RETENTION_DAYS } from './data/inbox.js';
import { TracingConfig } from './tracing.js';

export class ConfigError extends Error {
  override name = 'ConfigError';
}

const ajv = new Ajv({ allErrors: true, coerceTypes: true, useDefaults: true, strict: false });

/**
 * Every variable a schema names carries a `description`, and `production` when NODE_ENV=production refuses some
 * values or requires it: docs/configuration.md is generated from these (scripts/configuration-reference.ts).
 */
export interface VariableNotes {
  description: string;
  production?: string;
}

/** Variables every service reads. Services extend this with their own. */
export const CommonConfig = {
  NODE_ENV: Type.Union([Type.Literal('development'), Type.Literal('test'), Type.Literal('production')], {
    default: 'development',
    description: 'production refuses development secrets and unsafe switches (the last column)',
  }),
  LOG_LEVEL: Type.Union(
    ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'].map((level) => Type.Literal(level)),
    { default: 'info', description: 'The least severe level logged' },
  ),
  HOST: Type.String({ default: '127.0.0.1', description: 'The address to listen on' }),
  SERVICE_TOKEN: Type.Optional(
    Type.String({
      description:
        "The deployment's service credential for `/internal/*` and `/metrics`; comma-separated during a rotation " +
        '(the first is sent, all are accepted). Elsewhere a development value',
      production: 'required, each at least 32 characters; the development value is refused',
    }),
  ),
  ...TracingConfig,
} satisfies TProperties;

export const PortNumber = (fallback: number) =>
  Type.Integer({ minimum: 0, maximum: 65535, default: fallback, description: 'The port to listen on' });

/** A URL variable; without a default it is optional only where wrapped in Type.Optional. */
export const Url = (notes: VariableNotes & { default?: string }) =>
  Type.String({ pattern: '^[a-z][a-z0-9+.-]*://', ...notes });

/**
 * The service's own PostgreSQL database, named `database` on the local server by default: the runtime role it
 * connects as, and the owner role its migrations run as (docs/security.md, "Database and broker logins").
 */
export const DatabaseConfig = (database: string) =>
  ({
    DATABASE_URL: Url({
      default: `postgres://postgres@127.0.0.1:5432/${database}`,
      description:
        "This service's PostgreSQL database, as its runtime role: rows only (the DML its code needs), no DDL. " +
        'Unset MIGRATION_DATABASE_URL: its migrations run as this role, which must then own the database',
      production: 'a role that owns no table in the database and is not a superuser',
    }),
    MIGRATION_DATABASE_URL: Type.Optional(
      Url({
        description:
          "The same database as its owner role: the service's migrations, and the runtime role's grants, run as it " +
          "before the service opens DATABASE_URL. Deployments run them apart (the image's `node dist/migrate.js`), " +
          'so the running service never holds this credential',
      }),
    ),
  }) satisfies TProperties;

/** A service that consumes events keeps an inbox (`processed_events`): how long it remembers each event. */
export const InboxConfig = {
  INBOX_RETENTION_DAYS: Type.Integer({
    minimum: 7,
    maximum: 3650,
    default: DEFAULT_INBOX_RETENTION_DAYS,
    description:
      'An event processed is remembered this long, so that a copy delivered again takes no effect, then ' +
      "forgotten. Longer than any redelivery: a broker's, a dead letter's replay, a provider's (Stripe retries " +
      'for 3 days, and can send an event again for 30)',
  }),
} satisfies TProperties;

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
