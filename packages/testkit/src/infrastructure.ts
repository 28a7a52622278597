import { answers } from '@payments/infra';
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { promisify } from 'node:util';
import type { StartedTestContainer } from 'testcontainers';

/**
 * Where the tests find PostgreSQL and RabbitMQ, in order: TEST_DATABASE_URL / TEST_AMQP_URL, the local services
 * on 127.0.0.1, then containers where a Docker engine answers. TEST_INFRASTRUCTURE=containers skips the first two
 * (`pnpm test:containers`). Nothing found is an error that says what to start; a test never skips because
 * infrastructure is missing.
 */
export interface Infrastructure {
  /** A server URL whose database is the maintenance database `postgres`. */
  postgresUrl: string;
  amqpUrl: string;
  /** The RabbitMQ management API, to create per-service users; unset: the AMQP host's 15672, then rabbitmqctl. */
  amqpManagementUrl?: string;
  source: 'environment' | 'local' | 'containers';
}

const LOCAL_POSTGRES = 'postgres://postgres@127.0.0.1:5432/postgres';
const LOCAL_AMQP = 'amqp://guest:guest@127.0.0.1:5672';
const HOW_TO_START =
  'Start PostgreSQL and RabbitMQ (bash infra/ensure-infra.sh), or set TEST_DATABASE_URL and TEST_AMQP_URL, ' +
  'or run a Docker engine so testcontainers can start them.';

export { answers };

/**
 * The images testcontainers starts: the official ones unless TEST_POSTGRES_IMAGE / TEST_RABBITMQ_IMAGE name
 * others that keep their contract (POSTGRES_USER/PASSWORD/DB and pg_isready; RABBITMQ_DEFAULT_USER/PASS, the
 * "Server startup complete" log line and the management API on 15672), e.g. the offline stand-ins that
 * infra/containers/base-images.sh builds.
 */
export function containerImages(): { postgres: string; rabbitmq: string } {
  return {
    postgres: process.env.TEST_POSTGRES_IMAGE || 'postgres:16-alpine',
    rabbitmq: process.env.TEST_RABBITMQ_IMAGE || 'rabbitmq:3.13-management-alpine',
  };
}

/** Docker label on every container the test kit starts, with TEST_RUN_ID's value: what a runner removes after. */
export const TEST_RUN_LABEL = 'payments.test-run';

/** The broker's administrator in a container this process starts (a throwaway broker on a random port). */
const BROKER_ADMIN = { user: 'payments-test', password: randomBytes(12).toString('hex') };

let found: Promise<Infrastructure> | null = null;
let containers: StartedTestContainer[] = [];

export function findInfrastructure(): Promise<Infrastructure> {
  found ??= locate();
  return found;
}

/**
 * Set by the run's global setup once it has started containers and put their URLs in TEST_DATABASE_URL /
 * TEST_AMQP_URL: a worker process, or another instance of this module, uses those instead of starting its own.
 */
export const RUN_CONTAINERS_ENV = 'TEST_RUN_CONTAINERS';

async function locate(): Promise<Infrastructure> {
  const mode = process.env.TEST_INFRASTRUCTURE || 'auto';
  const started = process.env[RUN_CONTAINERS_ENV] === '1';
  if (mode === 'containers' && started && process.env.TEST_DATABASE_URL && process.env.TEST_AMQP_URL) {
    return {
      postgresUrl: process.env.TEST_DATABASE_URL,
      amqpUrl: process.env.TEST_AMQP_URL,
      ...(process.env.TEST_AMQP_MANAGEMENT_URL
        ? { amqpManagementUrl: process.env.TEST_AMQP_MANAGEMENT_URL }
        : {}),
      source: 'environment',
    };
  }
  if (mode === 'containers') {
    if (await dockerAnswers()) return startContainers();
    throw new Error(
      'TEST_INFRASTRUCTURE=containers, but no Docker engine answers (docker info) for testcontainers.',
    );
  }
  if (mode !== 'auto')
    throw new Error(`TEST_INFRASTRUCTURE is "${mode}"; it is "auto" (the default) or "containers".`);
  const fromEnv = { postgres: process.env.TEST_DATABASE_URL, amqp: process.env.TEST_AMQP_URL };
  const management = process.env.TEST_AMQP_MANAGEMENT_URL
    ? { amqpManagementUrl: process.env.TEST_AMQP_MANAGEMENT_URL }
    : {};
  if (fromEnv.postgres && fromEnv.amqp) {
    return { postgresUrl: fromEnv.postgres, amqpUrl: fromEnv.amqp, ...management, source: 'environment' };
  }
  const [pgUp, amqpUp] = await Promise.all([answers('127.0.0.1', 5432), answers('127.0.0.1', 5672)]);
  if ((fromEnv.postgres || pgUp) && (fromEnv.amqp || amqpUp)) {
    return {
      postgresUrl: fromEnv.postgres ?? LOCAL_POSTGRES,
      amqpUrl: fromEnv.amqp ?? LOCAL_AMQP,
      ...management,
      source: 'local',
    };
  }
  if (await dockerAnswers()) return startContainers();
  const missing = [
    !(fromEnv.postgres || pgUp) && 'PostgreSQL (127.0.0.1:5432)',
    !(fromEnv.amqp || amqpUp) && 'RabbitMQ (127.0.0.1:5672)',
  ]
    .filter(Boolean)
    .join(' and ');
  throw new Error(`No ${missing} for the tests, and no Docker engine for testcontainers. ${HOW_TO_START}`);
}

async function dockerAnswers(): Promise<boolean> {
  try {
    await promisify(execFile)('docker', ['info'], { timeout: 5000 });
    return true;
  } catch {
    return false;
  }
}

async function startContainers(): Promise<Infrastructure> {
  const { PostgreSqlContainer } = await import('@testcontainers/postgresql');
  const { RabbitMQContainer } = await import('@testcontainers/rabbitmq');
  const images = containerImages();
  const labels: Record<string, string> = process.env.TEST_RUN_ID
    ? { [TEST_RUN_LABEL]: process.env.TEST_RUN_ID }
    : {};
  const [postgres, rabbit] = await Promise.allSettled([
    new PostgreSqlContainer(images.postgres)
      .withDatabase('postgres')
      // Throwaway data: no need to wait for the disk.
      .withCommand(['postgres', '-c', 'fsync=off', '-c', 'synchronous_commit=off'])
      .withLabels(labels)
      .start(),
    // With management: the tests create a broker user per service through its API. Not guest, whom RabbitMQ
    // admits from loopback only unless the image's configuration says otherwise.
    new RabbitMQContainer(images.rabbitmq)
      .withEnvironment({
        RABBITMQ_DEFAULT_USER: BROKER_ADMIN.user,
        RABBITMQ_DEFAULT_PASS: BROKER_ADMIN.password,
      })
      .withLabels(labels)
      .start(),
  ]);
  containers = [postgres, rabbit].flatMap((result) => (result.status === 'fulfilled' ? [result.value] : []));
  if (postgres.status === 'rejected' || rabbit.status === 'rejected') {
    await Promise.all(containers.map((container) => container.stop()));
    containers = [];
    const failures = [
      postgres.status === 'rejected' && `${images.postgres}: ${(postgres.reason as Error).message}`,
      rabbit.status === 'rejected' && `${images.rabbitmq}: ${(rabbit.reason as Error).message}`,
    ].filter(Boolean);
    throw new Error(
      `testcontainers could not start ${failures.join('; ')}. Without a registry, name local images in ` +
        'TEST_POSTGRES_IMAGE and TEST_RABBITMQ_IMAGE (infra/containers/base-images.sh builds stand-ins).',
    );
  }
  const { value: pg } = postgres;
  const { value: mq } = rabbit;
  // Docker publishes on IPv4; "localhost" may resolve to ::1 first.
  const host = (container: StartedTestContainer) =>
    container.getHost() === 'localhost' ? '127.0.0.1' : container.getHost();
  const postgresUrl = new URL(pg.getConnectionUri());
  postgresUrl.hostname = host(pg);
  return {
    postgresUrl: postgresUrl.toString(),
    amqpUrl: `amqp://${BROKER_ADMIN.user}:${BROKER_ADMIN.password}@${host(mq)}:${mq.getMappedPort(5672)}`,
    amqpManagementUrl: `http://${host(mq)}:${mq.getMappedPort(15672)}`,
    source: 'containers',
  };
}

/**
 * Stops and removes the containers this process started, if any (a root hook runs it after the tests: without
 * Ryuk, nothing else would). The next findInfrastructure() looks again.
 */
export async function stopContainers(): Promise<void> {
  const stopping = containers;
  containers = [];
  if (stopping.length === 0) return;
  found = null;
  await Promise.all(stopping.map((container) => container.stop({ remove: true, removeVolumes: true })));
}
