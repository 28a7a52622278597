import { answers } from '@payments/infra';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

/**
 * Where the tests find PostgreSQL and RabbitMQ, in order: TEST_DATABASE_URL / TEST_AMQP_URL, the local services
 * on 127.0.0.1, then containers where a Docker engine answers. Nothing found is an error that says what to start;
 * a test never skips because infrastructure is missing.
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

let found: Promise<Infrastructure> | null = null;

export function findInfrastructure(): Promise<Infrastructure> {
  found ??= locate();
  return found;
}

async function locate(): Promise<Infrastructure> {
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
  const [postgres, rabbit] = await Promise.all([
    new PostgreSqlContainer('postgres:16-alpine').withDatabase('postgres').start(),
    // With management: the tests create a broker user per service through its API.
    new RabbitMQContainer('rabbitmq:3.13-management-alpine').start(),
  ]);
  return {
    postgresUrl: postgres.getConnectionUri(),
    amqpUrl: rabbit.getAmqpUrl(),
    amqpManagementUrl: `http://${rabbit.getHost()}:${rabbit.getMappedPort(15672)}`,
    source: 'containers',
  };
}
