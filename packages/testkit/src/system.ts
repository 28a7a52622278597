import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import {
  planLogins,
  provisionLogins,
  randomSuffix,
  removeLogins,
  SERVICE_NAMES,
  serviceEnvironment,
  startProcessSystem,
  type ProcessSystem,
  type ServiceName,
} from '@payments/infra';
import { createTestBroker } from './broker.js';
import { findInfrastructure } from './infrastructure.js';
import { freePortBlock } from './ports.js';

export interface TestSystem extends ProcessSystem {
  /** The secret the webhook endpoints verify with (and the sandbox signs with). */
  webhookSecret: string;
  /** Variables a second copy of a service needs to join this system (same databases and queues). */
  environment(service: ServiceName): Record<string, string>;
}

export interface TestSystemOptions {
  /** Extra variables per service, e.g. `{ 'provider-sandbox': { SANDBOX_ENABLED: 'false' } }`. */
  serviceEnv?: Partial<Record<ServiceName, Record<string, string>>>;
  env?: Record<string, string>;
}

/**
 * The whole system, every service in its own process, against the real PostgreSQL and RabbitMQ: fresh
 * databases, a uuid-namespaced exchange and queues, free ports. As deployed, each service logs in with its own
 * database role and broker user, provisioned for this run. `stop()` tears all of it down.
 */
export async function startSystem(options: TestSystemOptions = {}): Promise<TestSystem> {
  const { postgresUrl, amqpManagementUrl } = await findInfrastructure();
  const broker = await createTestBroker();
  const suffix = randomSuffix();
  const provisioning = {
    postgresUrl,
    amqpUrl: broker.url,
    managementUrl: amqpManagementUrl,
    namespace: broker.namespace,
    databaseSuffix: suffix,
  };
  const logins = planLogins(provisioning, { database: true, broker: true });
  const dataDir = await mkdtemp(path.join(tmpdir(), 'payments-test-'));
  const base = await freePortBlock(SERVICE_NAMES.length);
  const ports = Object.fromEntries(SERVICE_NAMES.map((name, i) => [name, base + i])) as Record<
    ServiceName,
    number
  >;
  const webhookSecret = `whsec_test_${suffix}`;
  const settings = {
    postgresUrl,
    amqpUrl: broker.url,
    amqpNamespace: broker.namespace,
    databaseSuffix: suffix,
    ports,
    dataDir,
    nodeEnv: 'test' as const,
    logLevel: process.env.TEST_LOG_LEVEL ?? 'warn',
    webhookSecret,
    logins,
    env: { RATE_LIMIT_ENABLED: 'false', ...options.env },
    serviceEnv: options.serviceEnv,
  };
  const cleanup = async () => {
    await dropDatabases(postgresUrl, suffix);
    await removeLogins(provisioning, logins);
    await broker.cleanup().catch(() => undefined);
    await rm(dataDir, { recursive: true, force: true });
  };
  let system: ProcessSystem;
  try {
    await provisionLogins(provisioning, logins);
    system = await startProcessSystem(settings);
  } catch (error) {
    // What failed (e.g. no way to create broker users) is the news, not a cleanup that fails after it.
    await cleanup().catch(() => undefined);
    throw error;
  }
  return {
    ...system,
    webhookSecret,
    environment: (service) => serviceEnvironment(service, settings),
    async stop() {
      await system.stop();
      await cleanup();
    },
  };
}

async function dropDatabases(serverUrl: string, suffix: string): Promise<void> {
  const client = new pg.Client({ connectionString: serverUrl });
  await client.connect();
  try {
    const { rows } = await client.query<{ datname: string }>(
      "SELECT datname FROM pg_database WHERE datname LIKE 'payments\\_%' AND datname LIKE $1",
      [`%${suffix}`],
    );
    for (const { datname } of rows) await client.query(`DROP DATABASE IF EXISTS "${datname}" WITH (FORCE)`);
  } finally {
    await client.end();
  }
}
