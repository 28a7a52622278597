import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import type { Deployment } from '@payments/contracts';
import {
  deployedServices,
  planLogins,
  provisionLogins,
  randomSuffix,
  removeLogins,
  SERVICE_NAMES,
  serviceEnvironment,
  startProcessSystem,
  type ProcessSystem,
  type ProvisionTarget,
  type ServiceName,
  type ServiceRuntime,
  type SystemLogins,
} from '@payments/infra';
import { createTestBroker, type TestBroker } from './broker.js';
import { findInfrastructure } from './infrastructure.js';
import { eventually, freePortBlock } from './ports.js';

/**
 * How the programs tests start run (the services of a test system, the CLI) unless a test says otherwise. The global
 * setup (mocha-hooks.ts) builds the workspace and sets `compiled`: plain node on `dist/`, what production runs, at
 * about half the CPU of a start through tsx. Anything else, unset included, runs the sources.
 */
export const TEST_RUNTIME_ENV = 'TEST_RUNTIME';

export function testRuntime(): ServiceRuntime {
  return process.env[TEST_RUNTIME_ENV] === 'compiled' ? 'compiled' : 'sources';
}

/** The SERVICE_TOKEN of every system this test process starts: random, so never a public value. */
export const testServiceToken = randomBytes(32).toString('hex');

export interface TestSystem extends ProcessSystem {
  /** The secret the webhook endpoints verify with (and the sandbox signs with). */
  webhookSecret: string;
  /** The key the sandbox's Stripe API accepts (and the ledger calls it with). */
  sandboxApiKey: string;
  /** What `/internal/*` and `/metrics` require (`Authorization: Bearer …`); the same as `testServiceToken`. */
  serviceToken: string;
  /** Variables a second copy of a service needs to join this system (same databases and queues). */
  environment(service: ServiceName): Record<string, string>;
}

export interface TestSystemOptions {
  /**
   * Extra variables per service, e.g. `{ 'provider-sandbox': { SANDBOX_ENABLED: 'false' } }` (the sandbox is on
   * by default here) or `{ 'webhook-ingest': { UNSIGNED_WEBHOOK_ENABLED: 'true' } }` (off by default).
   */
  serviceEnv?: Partial<Record<ServiceName, Record<string, string>>>;
  env?: Record<string, string>;
  /** `compiled`: plain node on each package's `dist/` (built beforehand); by default `testRuntime()`. */
  runtime?: ServiceRuntime;
  /**
   * Whether the provider sandbox is deployed (default true, and enabled unless its SANDBOX_ENABLED says false);
   * false: no sandbox process and no queue for it, as in production.
   */
  sandbox?: boolean;
}

/**
 * What one run of the whole system takes on the shared servers and this machine, all its own: a broker namespace,
 * a database suffix, a database role and broker user per service (planned, not yet made), a block of free ports.
 */
export interface SystemResources {
  postgresUrl: string;
  broker: TestBroker;
  suffix: string;
  provisioning: ProvisionTarget;
  logins: SystemLogins;
  ports: Record<ServiceName, number>;
  deployment: Deployment;
}

export async function reserveSystemResources(deployment: Deployment): Promise<SystemResources> {
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
  const base = await freePortBlock(SERVICE_NAMES.length);
  const ports = Object.fromEntries(SERVICE_NAMES.map((name, i) => [name, base + i])) as Record<
    ServiceName,
    number
  >;
  const logins = planLogins(provisioning, { database: true, broker: true, deployment });
  return { postgresUrl, broker, suffix, provisioning, logins, ports, deployment };
}

/**
 * The whole system, every service in its own process, against the real PostgreSQL and RabbitMQ: fresh
 * databases, a uuid-namespaced exchange and queues, free ports. As deployed, each service logs in with its own
 * database role and broker user, provisioned for this run. `stop()` tears all of it down.
 */
export async function startSystem(options: TestSystemOptions = {}): Promise<TestSystem> {
  const deployment: Deployment = { sandbox: options.sandbox ?? true };
  const { postgresUrl, broker, suffix, provisioning, logins, ports } =
    await reserveSystemResources(deployment);
  const dataDir = await mkdtemp(path.join(tmpdir(), 'payments-test-'));
  const webhookSecret = `whsec_test_${suffix}`;
  const sandboxApiKey = `sk_test_${suffix.replace(/\W/g, '')}`;
  const sandboxEnabled =
    deployment.sandbox &&
    (options.serviceEnv?.['provider-sandbox']?.SANDBOX_ENABLED ?? options.env?.SANDBOX_ENABLED) !== 'false';
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
    sandboxApiKey,
    // Where the sandbox plays Stripe, the ledger asks it for every payment, as it would ask Stripe.
    paysThroughSandbox: sandboxEnabled,
    serviceToken: testServiceToken,
    logins,
    // Tests register and log in many users from 127.0.0.1; the registration and login limits have tests of their
    // own.
    env: {
      RATE_LIMIT_ENABLED: 'false',
      REGISTRATION_MAX_PER_WINDOW: '1000000',
      LOGIN_MAX_ATTEMPTS_PER_ADDRESS: '1000000',
      SANDBOX_ENABLED: 'true',
      ...options.env,
    },
    serviceEnv: options.serviceEnv,
    runtime: options.runtime ?? testRuntime(),
    services: deployedServices(deployment),
  };
  const cleanup = async () => {
    await dropDatabases(postgresUrl, suffix);
    await removeLogins(provisioning, logins);
    await broker.cleanup().catch(() => undefined);
    await rm(dataDir, { recursive: true, force: true });
  };
  let system: ProcessSystem;
  try {
    await provisionLogins(provisioning, logins, deployment);
    system = await startProcessSystem(settings);
    await revocationsLoaded([system.gatewayUrl, system.urls.ledger]);
    await revocationsLoaded([system.urls['webhook-delivery']], 30_000, '/webhook-endpoints');
    await revocationsLoaded([system.urls.currency], 30_000, '/admin/dead-letters/currency');
  } catch (error) {
    // What failed (e.g. no way to create broker users) is the news, not a cleanup that fails after it.
    await cleanup().catch(() => undefined);
    throw error;
  }
  return {
    ...system,
    webhookSecret,
    sandboxApiKey,
    serviceToken: testServiceToken,
    environment: (service) => serviceEnvironment(service, settings),
    async stop() {
      await system.stop();
      await cleanup();
    },
  };
}

/**
 * Waits until each process has loaded the revocations in force: started alongside identity, they refuse every
 * token with 503 until then. A token that is no token tells: 503 while loading, 401 after.
 */
export async function revocationsLoaded(
  urls: string[],
  timeoutMs = 30_000,
  protectedPath = '/accounts',
): Promise<void> {
  for (const url of urls) {
    await eventually(
      () =>
        fetch(`${url}${protectedPath}`, { headers: { authorization: 'Bearer not.a.token' } })
          .then((response) => response.status)
          .catch(() => 0),
      (answer) => answer === 401,
      { timeoutMs, intervalMs: 100, what: `${url} loading the token revocations (401 for a bad token)` },
    );
  }
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
