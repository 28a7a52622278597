import type { Express } from 'express';
import type { Deployment } from '@payments/contracts';
import { Type } from '@sinclair/typebox';
import { createAmqpBus } from './bus/amqp-bus.js';
import type { DeliveryObserver, EventBus } from './bus/event-bus.js';
import { CommonConfig, DatabaseConfig, PortNumber } from './config.js';
import {
  databaseOptions,
  isDatabaseUp,
  openDatabase,
  type DatabaseOptions,
  type Knex,
} from './data/database.js';
import type { ReadinessCheck } from './http/app.js';
import { listen } from './http/listen.js';
import { createShutdown, type Shutdown } from './lifecycle.js';
import type { Logger } from './logger.js';
import type { Metrics } from './metrics.js';

/** Adapters a launcher may hand a service instead of the ones its config names (embedded mode, tests). */
export interface ServiceDeps {
  bus?: EventBus;
  logger?: Logger;
}

export interface RunningService {
  name: string;
  url: string;
  port: number;
  stop(): Promise<void>;
}

export const BusConfig = {
  AMQP_URL: Type.String({
    default: 'amqp://guest:guest@127.0.0.1:5672',
    pattern: '^amqps?://[^,\\s]+(,amqps?://[^,\\s]+)*$',
    description:
      'The RabbitMQ broker events travel on: one URL, or the nodes of a cluster as URLs separated by commas. ' +
      'A node that is lost or unreachable gives way to the next, in turn',
  }),
  AMQP_NAMESPACE: Type.String({
    default: '',
    pattern: '^[a-z0-9.-]*$',
    description: 'Prefix for exchange and queue names, so test runs and tenants never share a queue',
  }),
};

/** What every service with a database of its own reads first: the common variables, its port, database and broker. */
export const DatabaseServiceConfig = (port: number, database: string, service: string) => ({
  ...CommonConfig,
  PORT: PortNumber(port),
  ...DatabaseConfig(database, service),
  ...BusConfig,
});

export const TokenConfig = {
  JWT_ISSUER: Type.String({
    default: 'payments-identity',
    description: "Access tokens' `iss`, issued and required",
  }),
  JWT_AUDIENCE: Type.String({
    default: 'payments-api',
    description: "Access tokens' `aud`, issued and required",
  }),
};

/** `events_dead_lettered_total{queue}`: events a consumer gave up on, sent to the queue's dead-letter queue. */
export function countDeadLetters(metrics: Metrics): DeliveryObserver {
  const deadLettered = metrics.counter(
    'events_dead_lettered_total',
    'Events sent to a dead-letter queue: invalid, rejected, or failing past the delivery limit',
    ['queue'],
  );
  return (queue, outcome) => {
    if (outcome === 'dead-letter') deadLettered.inc({ queue });
  };
}

/**
 * The injected bus, or a RabbitMQ bus that keeps reconnecting if the broker is not up yet. With `metrics`, the
 * events its consumers dead-letter are counted there; `deployment` names the optional queues the service needs.
 */
export async function connectBus(
  config: { AMQP_URL: string; AMQP_NAMESPACE: string },
  logger: Logger,
  shutdown: Shutdown,
  given?: EventBus,
  options: { metrics?: Metrics; deployment?: Deployment } = {},
): Promise<EventBus> {
  if (given) return given;
  const bus = createAmqpBus({
    url: config.AMQP_URL,
    namespace: config.AMQP_NAMESPACE,
    deployment: options.deployment,
    logger,
    onDelivery: options.metrics && countDeadLetters(options.metrics),
  });
  shutdown.add('event bus', () => bus.close());
  await bus.start();
  return bus;
}

/** The service's pool, migrated as `databaseOptions` says, closed at shutdown. */
export async function openServiceDatabase(
  config: Parameters<typeof databaseOptions>[0],
  rest: Pick<DatabaseOptions, 'migrations' | 'privileges' | 'logger'>,
  shutdown: Shutdown,
): Promise<Knex> {
  const knex = await openDatabase(databaseOptions(config, rest));
  shutdown.add('database pool', () => knex.destroy());
  return knex;
}

/**
 * `/ready`'s check on the service's database, for a service that cannot answer its requests without it. The broker is
 * never a readiness check (docs/adr/0110): while it is away consumers wait, and `event_bus_connected` says so.
 */
export function databaseReadiness(knex: Knex): ReadinessCheck {
  return { name: 'database', check: () => isDatabaseUp(knex) };
}

/** `event_bus_connected`: 1 while the process is connected to the broker, 0 while it reconnects and its consumers wait. */
export function measureBusConnection(metrics: Metrics, bus: EventBus): void {
  metrics.gauge(
    'event_bus_connected',
    'Whether this process is connected to the broker (1) or reconnecting while its consumers wait (0)',
    () => Promise.resolve(bus.isConnected() ? 1 : 0),
  );
}

/** Listens and registers the HTTP drain as the first thing to stop. */
export async function serveHttp(
  name: string,
  app: Express,
  address: { HOST: string; PORT: number },
  shutdown: Shutdown,
): Promise<Omit<RunningService, 'stop'>> {
  const http = await listen(app, address.PORT, address.HOST);
  shutdown.add('http server', () => http.close());
  return { name, port: http.port, url: `http://${address.HOST}:${http.port}` };
}

/**
 * Starts a service with its shutdown: what `start` opened is closed again when it fails part-way, and the running
 * service's `stop` drains for `drainSeconds` (SHUTDOWN_DRAIN_SECONDS) and then closes it all.
 */
export async function startService(
  logger: Logger,
  lifetime: { drainSeconds: number },
  start: (shutdown: Shutdown) => Promise<Omit<RunningService, 'stop'>>,
): Promise<RunningService> {
  const shutdown = createShutdown(logger);
  try {
    const address = await start(shutdown);
    return { ...address, stop: () => shutdown.run({ drainMs: lifetime.drainSeconds * 1000 }) };
  } catch (error) {
    await shutdown.run();
    throw error;
  }
}
