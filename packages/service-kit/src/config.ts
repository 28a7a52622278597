import { Ajv } from 'ajv';
import { Type, type Static, type TObject, type TProperties } from '@sinclair/typebox';
import { DEFAULT_POOL, DEFAULT_STATEMENT_TIMEOUT_MS } from './data/database.js';
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
  SHUTDOWN_DRAIN_SECONDS: Type.Integer({
    minimum: 0,
    maximum: 300,
    default: 0,
    description:
      'On SIGTERM or SIGINT, `/ready` answers 503 at once and the process keeps serving this long before it ' +
      'closes, so a load balancer stops sending it requests first. 0 (development, tests) closes at once; ' +
      'Kubernetes sets 15, below terminationGracePeriodSeconds less the preStop sleep (docs/deployment.md)',
  }),
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
 * connects as, and the owner role its migrations run as (docs/security.md, "Database and broker logins"); and its
 * pool, bounded, with its connections named `service` in `pg_stat_activity` (ADR 0111).
 */
export const DatabaseConfig = (database: string, service: string) =>
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
    DATABASE_POOL_MAX: Type.Integer({
      minimum: 1,
      maximum: 100,
      default: DEFAULT_POOL.max,
      description:
        'Connections this process holds to its database at most; a query finding all busy waits for one. ' +
        'Replicas × this, summed over the services sharing a server, must stay under its max_connections (ADR 0111)',
    }),
    DATABASE_POOL_ACQUIRE_TIMEOUT_MS: Type.Integer({
      minimum: 100,
      maximum: 120_000,
      default: DEFAULT_POOL.acquireTimeoutMs,
      description:
        'How long a query waits for a free connection (or a new one) before it fails; a request then gets 503',
    }),
    DATABASE_CONNECT_TIMEOUT_MS: Type.Integer({
      minimum: 100,
      maximum: 120_000,
      default: DEFAULT_POOL.connectTimeoutMs,
      description:
        'How long opening one connection may take (TCP, TLS, login) before the query that wanted it fails, ' +
        'rather than waiting out the TCP timeout of an address that vanished in a failover',
    }),
    DATABASE_STATEMENT_TIMEOUT_MS: Type.Integer({
      minimum: 100,
      maximum: 3_600_000,
      default: DEFAULT_STATEMENT_TIMEOUT_MS,
      description:
        "PostgreSQL's statement_timeout on the service's connections: a statement (lock waits included) running " +
        "longer is cancelled and the request gets 503. Migrations, and the ledger's `pnpm ledger:audit`, run " +
        'without it (ADR 0111)',
    }),
    DATABASE_APPLICATION_NAME: Type.String({
      pattern: '^[A-Za-z0-9][A-Za-z0-9._:-]{0,62}$',
      default: service,
      description:
        "PostgreSQL's application_name on the service's connections, so that `pg_stat_activity` shows who holds " +
        'each one; its migrations connect as `<name>-migrate`',
    }),
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
