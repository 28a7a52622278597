import path from 'node:path';
import {
  answers,
  declareBrokerTopology,
  defaultPorts,
  HOW_TO_ENABLE_BROKER_ADMIN,
  isSuperuser,
  loadDevelopmentSecrets,
  openBrokerAdmin,
  planLogins,
  provisionLogins,
  startProcessSystem,
  type ServiceName,
  type SystemLogins,
} from '@payments/infra';

// `pnpm start`: the whole system with the gateway on http://localhost:8080. Separate processes against
// DATABASE_URL/AMQP_URL or the local services when they answer; otherwise one embedded process.

const env = process.env;
const dataDir = path.resolve(env.DATA_DIR ?? '.data');
const ports = defaultPorts(Number(env.GATEWAY_PORT ?? 8080), Number(env.SERVICES_PORT_BASE ?? 3000));
const probe = {
  postgres: env.PAYMENTS_PROBE_POSTGRES ?? '127.0.0.1:5432',
  amqp: env.PAYMENTS_PROBE_AMQP ?? '127.0.0.1:5672',
};

const reachable = async (address: string) => {
  const [host, port] = address.split(':');
  return answers(host ?? '127.0.0.1', Number(port));
};

async function chooseMode(): Promise<{
  mode: 'processes' | 'embedded';
  postgresUrl?: string;
  amqpUrl?: string;
  why: string;
}> {
  if (env.PAYMENTS_MODE === 'embedded') return { mode: 'embedded', why: 'PAYMENTS_MODE=embedded' };
  if (env.DATABASE_URL && env.AMQP_URL) {
    return {
      mode: 'processes',
      postgresUrl: env.DATABASE_URL,
      amqpUrl: env.AMQP_URL,
      why: 'DATABASE_URL and AMQP_URL are set',
    };
  }
  const [pg, amqp] = await Promise.all([reachable(probe.postgres), reachable(probe.amqp)]);
  if (pg && amqp) {
    return {
      mode: 'processes',
      postgresUrl: `postgres://postgres@${probe.postgres}/postgres`,
      amqpUrl: `amqp://guest:guest@${probe.amqp}`,
      why: `PostgreSQL (${probe.postgres}) and RabbitMQ (${probe.amqp}) answer`,
    };
  }
  const missing = [!pg && `PostgreSQL at ${probe.postgres}`, !amqp && `RabbitMQ at ${probe.amqp}`].filter(
    Boolean,
  );
  return { mode: 'embedded', why: `no ${missing.join(' or ')}` };
}

/**
 * Least privilege where this machine allows it: as the superuser, each service gets its own role owning its
 * database (created or adopted); where RabbitMQ's management API or rabbitmqctl (as root) lets us make users, each
 * service gets its own broker user with exactly its rights. New passwords each start. What cannot be made is
 * shared: the role of DATABASE_URL, the broker user of AMQP_URL (guest locally).
 */
async function provision(postgresUrl: string, amqpUrl: string): Promise<SystemLogins | undefined> {
  // Services only declare a topology that is missing altogether; this also adds what a newer version binds.
  await declareBrokerTopology(amqpUrl).catch((error: unknown) =>
    console.warn(`Could not declare the broker topology now (${String(error)}); the services will.`),
  );
  const database = await isSuperuser(postgresUrl);
  const broker = await openBrokerAdmin({ amqpUrl }).then(
    () => true,
    () => false,
  );
  console.log(
    `PostgreSQL: ${database ? 'a role per service' : "every service uses DATABASE_URL's role (not a superuser)"}; ` +
      `RabbitMQ: ${broker ? 'a user per service' : `every service uses AMQP_URL's user (${HOW_TO_ENABLE_BROKER_ADMIN})`}.`,
  );
  if (!database && !broker) return undefined;
  const logins = planLogins({}, { database, broker });
  await provisionLogins({ postgresUrl, amqpUrl }, logins);
  return logins;
}

const print = (service: ServiceName, line: string) =>
  process.stdout.write(`${service.padEnd(16)} | ${line}\n`);

/** Said before anything starts, and again once the gateway listens, so nobody mistakes this for a real system. */
function developmentBanner(secretsFile: string, sandbox: boolean): string {
  const rule = '!'.repeat(100);
  return [
    rule,
    '!!  DEVELOPMENT SYSTEM: not for real money.',
    sandbox
      ? '!!  The provider sandbox CONFIRMS EVERY DEPOSIT AND PAYOUT by itself (SANDBOX_ENABLED=false turns it off).'
      : '!!  The provider sandbox is off: deposits wait for signed provider webhooks.',
    `!!  Generated secrets (SERVICE_TOKEN, webhook secret): ${secretsFile}`,
    '!!  Everything listens on 127.0.0.1; services refuse development secrets on any other address.',
    rule,
  ].join('\n');
}

/** The variable that moves each port, for the sentence that says it is taken. */
function portVariables(postgresPort?: number): Map<number, string> {
  const variables = new Map<number, string>();
  if (postgresPort !== undefined) variables.set(postgresPort, 'EMBEDDED_POSTGRES_PORT');
  for (const [service, port] of Object.entries(ports))
    variables.set(port, service === 'gateway' ? 'GATEWAY_PORT' : 'SERVICES_PORT_BASE');
  return variables;
}

const takenPort = (port: number, variable: string) =>
  `Port ${port} is taken by another program; set ${variable} to move it (gateway GATEWAY_PORT, services SERVICES_PORT_BASE + 1 … + 6, embedded PostgreSQL EMBEDDED_POSTGRES_PORT).`;

/** Refuses, in one sentence, a port something else already listens on, before anything starts. */
async function checkPorts(postgresPort?: number): Promise<void> {
  for (const [port, variable] of portVariables(postgresPort)) {
    if (port === postgresPort) continue; // an orphan of our own may hold it: the embedded start looks first
    if (await answers('127.0.0.1', port)) throw new Error(takenPort(port, variable));
  }
}

/** One sentence for any failure: a listen that lost a race for its port is named with its variable too. */
function sentence(error: unknown, postgresPort?: number): string {
  const failure = error as { code?: string; port?: number; message?: string } | undefined;
  if (failure?.code === 'EADDRINUSE' && failure.port !== undefined)
    return takenPort(
      failure.port,
      portVariables(postgresPort).get(failure.port) ?? 'the matching port variable',
    );
  const message = error instanceof Error ? error.message : String(error);
  return message.split('\n')[0] ?? 'pnpm start failed.';
}

const embeddedPostgresPort = Number(env.EMBEDDED_POSTGRES_PORT ?? 54329);

async function main() {
  const choice = await chooseMode();
  await checkPorts(choice.mode === 'embedded' ? embeddedPostgresPort : undefined);
  const { secrets, file: secretsFile } = await loadDevelopmentSecrets(dataDir);
  const sandbox = (env.SANDBOX_ENABLED ?? 'true') === 'true';
  const common = {
    ports,
    dataDir,
    nodeEnv: (env.NODE_ENV as 'development' | 'production' | undefined) ?? 'development',
    logLevel: env.LOG_LEVEL ?? 'info',
    serviceToken: secrets.serviceToken,
    webhookSecret: secrets.webhookSecret,
    env: { SANDBOX_ENABLED: String(sandbox) },
  };
  const banner = developmentBanner(secretsFile, sandbox);
  console.log(banner);
  console.log(`Starting in ${choice.mode} mode (${choice.why})…`);
  const system =
    choice.mode === 'processes'
      ? await startProcessSystem({
          ...common,
          postgresUrl: choice.postgresUrl as string,
          amqpUrl: choice.amqpUrl as string,
          logins: await provision(choice.postgresUrl as string, choice.amqpUrl as string),
          onOutput: print,
        })
      : await (
          await import('./embedded-system.js')
        ).startEmbeddedSystem({ ...common, postgresPort: embeddedPostgresPort });
  if ('databaseDir' in system) console.log(`Embedded PostgreSQL data: ${system.databaseDir}`);
  console.log(`\n${banner}`);
  console.log(`\nGateway listening on ${system.gatewayUrl} (${choice.mode} mode). Press Ctrl-C to stop.\n`);

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    console.log(`\n${signal}: stopping…`);
    await system.stop();
    console.log('Stopped.');
    process.exit(0);
  };
  // Once up, the launcher alone answers these, so the database is stopped after the services, never under them.
  process.removeAllListeners('SIGINT').removeAllListeners('SIGTERM');
  process.on('SIGINT', () => void stop('SIGINT'));
  process.on('SIGTERM', () => void stop('SIGTERM'));
}

main().catch((error: unknown) => {
  console.error(`pnpm start failed: ${sentence(error, embeddedPostgresPort)}`);
  process.exit(1);
});
