import path from 'node:path';
import { Type, type TInteger, type TLiteral, type TUnion } from '@sinclair/typebox';
import { CommonConfig, Url } from '@payments/service-kit';
import { defaultPorts } from '@payments/infra';

/**
 * The variables `pnpm start` itself reads (each service reads its own: docs/configuration.md). readLauncherSettings
 * takes defaults, bounds and choices from here, and the configuration reference is generated from it.
 */
export const LauncherConfigSchema = Type.Object({
  PAYMENTS_MODE: Type.Union([Type.Literal('auto'), Type.Literal('embedded')], {
    default: 'auto',
    description:
      'auto: separate processes against DATABASE_URL/AMQP_URL or the local servers when they answer, else embedded; ' +
      'embedded: one process with its own PostgreSQL and an in-memory bus',
  }),
  DATABASE_URL: Type.Optional(
    Url({
      description:
        'With AMQP_URL: a PostgreSQL server (superuser) for the service databases, in processes mode',
    }),
  ),
  AMQP_URL: Type.Optional(Url({ description: 'With DATABASE_URL: the RabbitMQ broker, in processes mode' })),
  PAYMENTS_PROBE_POSTGRES: Type.String({
    default: '127.0.0.1:5432',
    description:
      'Where a local PostgreSQL is looked for (host:port) when DATABASE_URL/AMQP_URL are not both set',
  }),
  PAYMENTS_PROBE_AMQP: Type.String({
    default: '127.0.0.1:5672',
    description: 'Where a local RabbitMQ is looked for',
  }),
  GATEWAY_PORT: Type.Integer({
    minimum: 1,
    maximum: 65535,
    default: 8080,
    description: "The gateway's port",
  }),
  SERVICES_PORT_BASE: Type.Integer({
    minimum: 1,
    maximum: 65535 - 6,
    default: 3000,
    description: 'The services listen on the six ports after it (identity +1 … webhook-delivery +6)',
  }),
  EMBEDDED_POSTGRES_PORT: Type.Integer({
    minimum: 1,
    maximum: 65535,
    default: 54329,
    description: "Embedded mode's PostgreSQL port",
  }),
  DATA_DIR: Type.String({
    default: '.data',
    description:
      'Development state (generated secrets and signing key; embedded PostgreSQL), relative to the checkout',
  }),
  NODE_ENV: CommonConfig.NODE_ENV,
  LOG_LEVEL: CommonConfig.LOG_LEVEL,
  SANDBOX_ENABLED: Type.Union([Type.Literal('true'), Type.Literal('false')], {
    default: 'true',
    description: 'false runs no provider sandbox: deposits and withdrawals wait for signed provider webhooks',
  }),
});

type Properties = typeof LauncherConfigSchema.properties;
type PortName = { [K in keyof Properties]: Properties[K] extends TInteger ? K : never }[keyof Properties];
type ChoiceName = {
  [K in keyof Properties]: Properties[K] extends TUnion<TLiteral<string>[]> ? K : never;
}[keyof Properties];
type Choice<K extends ChoiceName> = Properties[K] extends TUnion<TLiteral<infer T>[]> ? T : never;

/** A variable as set: an empty value counts as unset, as for the services. */
const setting = (env: NodeJS.ProcessEnv, name: string): string | undefined =>
  env[name] === '' ? undefined : env[name];

/** A port variable: a whole number within the schema's bounds. */
function portSetting(env: NodeJS.ProcessEnv, name: PortName): number {
  const { minimum, maximum, default: fallback } = LauncherConfigSchema.properties[name];
  const raw = setting(env, name);
  if (raw === undefined) return fallback as number;
  const port = Number(raw);
  if (!/^\d+$/.test(raw) || port < minimum! || port > maximum!)
    throw new Error(
      `${name} must be a port number from ${minimum} to ${maximum}, not ${JSON.stringify(raw)}.`,
    );
  return port;
}

/** A variable that takes one of a few values. */
function choiceSetting<K extends ChoiceName>(env: NodeJS.ProcessEnv, name: K): Choice<K> {
  const schema = LauncherConfigSchema.properties[name] as TUnion<TLiteral<string>[]>;
  const choices = schema.anyOf.map((literal) => literal.const);
  const raw = setting(env, name) ?? (schema.default as string);
  if (!choices.includes(raw))
    throw new Error(`${name} must be one of ${choices.join(', ')}, not ${JSON.stringify(raw)}.`);
  return raw as Choice<K>;
}

/** Every variable the launcher reads, checked before anything starts: a bad one is named in one sentence. */
export function readLauncherSettings(env: NodeJS.ProcessEnv = process.env) {
  const { properties } = LauncherConfigSchema;
  return {
    mode: choiceSetting(env, 'PAYMENTS_MODE'),
    dataDir: path.resolve(setting(env, 'DATA_DIR') ?? properties.DATA_DIR.default),
    ports: defaultPorts(portSetting(env, 'GATEWAY_PORT'), portSetting(env, 'SERVICES_PORT_BASE')),
    postgresPort: portSetting(env, 'EMBEDDED_POSTGRES_PORT'),
    nodeEnv: choiceSetting(env, 'NODE_ENV'),
    logLevel: choiceSetting(env, 'LOG_LEVEL'),
    sandbox: choiceSetting(env, 'SANDBOX_ENABLED') === 'true',
    databaseUrl: setting(env, 'DATABASE_URL'),
    amqpUrl: setting(env, 'AMQP_URL'),
    probe: {
      postgres: setting(env, 'PAYMENTS_PROBE_POSTGRES') ?? properties.PAYMENTS_PROBE_POSTGRES.default,
      amqp: setting(env, 'PAYMENTS_PROBE_AMQP') ?? properties.PAYMENTS_PROBE_AMQP.default,
    },
  };
}

export type LauncherSettings = ReturnType<typeof readLauncherSettings>;
