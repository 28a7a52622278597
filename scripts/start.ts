import { constants } from 'node:fs';
import { access, mkdir } from 'node:fs/promises';
import path from 'node:path';
import {
  answers,
  declareBrokerTopology,
  deployedServices,
  HOW_TO_ENABLE_BROKER_ADMIN,
  isSuperuser,
  loadDevelopmentSecrets,
  recordSandboxApiUrl,
  openBrokerAdmin,
  planLogins,
  provisionLogins,
  startProcessSystem,
  type ServiceName,
  type SystemLogins,
} from '@payments/infra';
import type { Deployment } from '@payments/contracts';
import { ensureConsoleBuilt } from '@payments/console/build';
import { readLauncherSettings, type LauncherSettings } from './launcher-config.js';

// `pnpm start`: the whole system with the gateway on http://localhost:8080. Separate processes against
// DATABASE_URL/AMQP_URL or the local services when they answer; otherwise one embedded process.

const reachable = async (address: string) => {
  const [host, port] = address.split(':');
  return answers(host ?? '127.0.0.1', Number(port));
};

async function chooseMode(settings: LauncherSettings): Promise<{
  mode: 'processes' | 'embedded';
  postgresUrl?: string;
  amqpUrl?: string;
  why: string;
}> {
  if (settings.mode === 'embedded') return { mode: 'embedded', why: 'PAYMENTS_MODE=embedded' };
  if (settings.databaseUrl && settings.amqpUrl) {
    return {
      mode: 'processes',
      postgresUrl: settings.databaseUrl,
      amqpUrl: settings.amqpUrl,
      why: 'DATABASE_URL and AMQP_URL are set',
    };
  }
  const { probe } = settings;
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
async function provision(
  postgresUrl: string,
  amqpUrl: string,
  deployment: Deployment,
): Promise<SystemLogins | undefined> {
  // Services only declare a topology that is missing altogether; this also adds what a newer version binds, and
  // without the sandbox removes the queue an earlier start with it left (requests nobody here will answer).
  const changes = await declareBrokerTopology(amqpUrl, '', deployment).catch((error: unknown) => {
    console.warn(`Could not declare the broker topology now (${String(error)}); the services will.`);
    return undefined;
  });
  for (const { queue, messages } of changes?.removed ?? [])
    console.log(`Removed ${queue}: the sandbox is off (${messages} unanswered request(s) dropped).`);
  for (const { queue, consumers } of changes?.kept ?? [])
    console.warn(`Kept ${queue}: the sandbox is off here, yet ${consumers} consumer(s) still read it.`);
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
  const logins = planLogins({}, { database, broker, deployment });
  await provisionLogins({ postgresUrl, amqpUrl }, logins, deployment);
  return logins;
}

const print = (service: ServiceName, line: string) =>
  process.stdout.write(`${service.padEnd(16)} | ${line}\n`);

/** Said before anything starts, and again once the gateway listens, so nobody mistakes this for a real system. */
function developmentBanner(
  secretsFile: string,
  sandbox: false | { url: string; key: string; publicUrl: string },
): string {
  const rule = '!'.repeat(100);
  return [
    rule,
    '!!  DEVELOPMENT SYSTEM: not for real money.',
    ...(sandbox
      ? [
          '!!  The provider sandbox PAYS DEPOSITS AND PAYOUTS by itself (SANDBOX_ENABLED=false turns it off).',
          `!!  Its Stripe-compatible API: ${sandbox.url} (stripe-node: host 127.0.0.1, protocol http), test key ${sandbox.key}`,
          '!!  A payer confirms with the publishable key pk_test_sandbox_development_only and the client secret,',
          '!!  or names a card with the deposit (payments deposit ACCOUNT AMOUNT --pay-with pm_card_visa),',
          `!!  or pays in a browser at the deposit's payment_url (${sandbox.publicUrl}/pay/ID), with Stripe's test`,
          '!!  cards (4242 4242 4242 4242 pays, 4000 0000 0000 0002 is declined).',
          '!!  SANDBOX_AUTO_CONFIRM=false stops the sandbox paying (then only the payer pays).',
        ]
      : ['!!  The provider sandbox is off: deposits wait for signed provider webhooks.']),
    `!!  Generated secrets (SERVICE_TOKEN, webhook secret, sandbox key with its API's URL): ${secretsFile}`,
    '!!  Everything listens on 127.0.0.1; services refuse development secrets on any other address.',
    rule,
  ].join('\n');
}

/** The variable that moves each port, for the sentence that says it is taken. */
function portVariables(
  ports: Partial<LauncherSettings['ports']>,
  postgresPort?: number,
): Map<number, string> {
  const variables = new Map<number, string>();
  if (postgresPort !== undefined) variables.set(postgresPort, 'EMBEDDED_POSTGRES_PORT');
  for (const [service, port] of Object.entries(ports))
    variables.set(port, service === 'gateway' ? 'GATEWAY_PORT' : 'SERVICES_PORT_BASE');
  return variables;
}

const takenPort = (port: number, variable: string) =>
  `Port ${port} is taken by another program; set ${variable} to move it (gateway GATEWAY_PORT, services SERVICES_PORT_BASE + 1 … + 6, embedded PostgreSQL EMBEDDED_POSTGRES_PORT).`;

/** Refuses, in one sentence, a port something else already listens on, before anything starts. */
async function checkPorts(ports: Partial<LauncherSettings['ports']>, postgresPort?: number): Promise<void> {
  for (const [port, variable] of portVariables(ports, postgresPort)) {
    if (port === postgresPort) continue; // an orphan of our own may hold it: the embedded start looks first
    if (await answers('127.0.0.1', port)) throw new Error(takenPort(port, variable));
  }
}

/** One sentence for any failure: a listen that lost a race for its port is named with its variable too. */
function sentence(error: unknown, settings?: LauncherSettings): string {
  const failure = error as { code?: string; port?: number; message?: string } | undefined;
  if (failure?.code === 'EADDRINUSE' && failure.port !== undefined && settings)
    return takenPort(
      failure.port,
      portVariables(settings.ports, settings.postgresPort).get(failure.port) ?? 'the matching port variable',
    );
  const message = error instanceof Error ? error.message : String(error);
  const first = message.split('\n')[0] || 'an error without a message.';
  // A service that exited while starting: what it said is printed above, each line marked with its name.
  return first.endsWith(':') ? `${first.slice(0, -1)} (its output is above).` : first;
}

/** DATA_DIR made if missing, and refused in one sentence when this user cannot write to it. */
async function prepareDataDir(dataDir: string): Promise<void> {
  try {
    await mkdir(dataDir, { recursive: true });
    await access(dataDir, constants.W_OK | constants.X_OK);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? String(error);
    throw new Error(
      `The data directory ${dataDir} cannot be written by this user (${code}); set DATA_DIR to one it can write.`,
      { cause: error },
    );
  }
}

async function developmentSecrets(dataDir: string) {
  try {
    return await loadDevelopmentSecrets(dataDir);
  } catch (error) {
    if (error instanceof SyntaxError)
      throw new Error(
        `${path.join(dataDir, 'development-secrets.json')} is not valid JSON; delete it to make new ones.`,
        { cause: error },
      );
    throw error;
  }
}

/** Ctrl-C (or SIGTERM, or a closed terminal's SIGHUP) before the system is up: what has started is stopped, and the start ends with status 0. */
class Interrupted extends Error {}

const abort = new AbortController();
let settings: LauncherSettings | undefined;
let system: { stop(): Promise<void> } | undefined;
let stopping = false;
let failed = false;

async function stopAndExit(code: number): Promise<never> {
  await system?.stop();
  console.log('Stopped.');
  process.exit(code);
}

/** Reports the first failure in one sentence, stops whatever is running, exits 1. */
async function fail(error: unknown, startup?: Promise<void>): Promise<void> {
  if (failed) return;
  failed = true;
  console.error(`pnpm start failed: ${sentence(error, settings)}`);
  setTimeout(() => process.exit(1), 30_000).unref();
  if (system) await system.stop().catch(() => undefined);
  else if (startup) {
    // A failure outside the start's own path (an unhandled error event): stop the start, which stops what it began.
    abort.abort(error);
    await startup.catch(() => undefined);
  }
  process.exit(1);
}

function onSignal(signal: NodeJS.Signals): void {
  if (stopping) return;
  stopping = true;
  // SIGHUP: the terminal has gone, and writing to it could fail; the database must still be stopped, not orphaned.
  if (signal !== 'SIGHUP') console.log(`\n${signal}: stopping…`);
  // Once up, the launcher alone answers these, so the database is stopped after the services, never under them.
  if (system) void stopAndExit(0);
  else abort.abort(new Interrupted(signal));
}

async function main() {
  settings = readLauncherSettings();
  const { dataDir, ports, postgresPort, sandbox } = settings;
  process.removeAllListeners('SIGINT').removeAllListeners('SIGTERM').removeAllListeners('SIGHUP');
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  process.on('SIGHUP', onSignal);
  // With the terminal gone a write fails (EIO); the output is lost, the stop must go on.
  for (const stream of [process.stdout, process.stderr]) stream.on('error', () => undefined);
  const choice = await chooseMode(settings);
  // SANDBOX_ENABLED=false: no sandbox process at all (so no port of its own), and no queue for one.
  const deployment: Deployment = { sandbox };
  const listening = Object.fromEntries(
    deployedServices(deployment).map((service) => [service, ports[service]]),
  );
  await checkPorts(listening, choice.mode === 'embedded' ? postgresPort : undefined);
  await prepareDataDir(dataDir);
  // The gateway serves the operator console from its build: made here on a fresh checkout, again after an edit.
  await ensureConsoleBuilt({
    onBuild: (reason) => console.log(`Building the operator console (${reason})…`),
  });
  const { secrets, file: secretsFile } = await developmentSecrets(dataDir);
  const sandboxApiUrl = sandbox ? `http://127.0.0.1:${ports['provider-sandbox']}` : null;
  await recordSandboxApiUrl(secretsFile, sandboxApiUrl);
  const common = {
    ports,
    dataDir,
    nodeEnv: settings.nodeEnv,
    logLevel: settings.logLevel,
    serviceToken: secrets.serviceToken,
    webhookSecret: secrets.webhookSecret,
    sandboxApiKey: secrets.sandboxApiKey,
    // With the sandbox, the ledger asks it for each payment, exactly as it would ask Stripe.
    paysThroughSandbox: sandbox,
    env: {
      SANDBOX_ENABLED: String(sandbox),
      // The launcher links deposits to the payment page at its own gateway address, unless told another.
      ...(process.env.PUBLIC_URL ? { PUBLIC_URL: process.env.PUBLIC_URL } : {}),
    },
  };
  const publicUrl = process.env.PUBLIC_URL ?? `http://127.0.0.1:${ports.gateway}`;
  const banner = developmentBanner(
    secretsFile,
    sandboxApiUrl !== null && { url: sandboxApiUrl, key: secrets.sandboxApiKey, publicUrl },
  );
  console.log(banner);
  console.log(`Starting in ${choice.mode} mode (${choice.why})…`);
  abort.signal.throwIfAborted();
  let started: { stop(): Promise<void>; gatewayUrl: string; databaseDir?: string };
  if (choice.mode === 'processes') {
    const logins = await provision(choice.postgresUrl as string, choice.amqpUrl as string, deployment);
    abort.signal.throwIfAborted();
    started = await startProcessSystem({
      ...common,
      services: deployedServices(deployment),
      postgresUrl: choice.postgresUrl as string,
      amqpUrl: choice.amqpUrl as string,
      logins,
      onOutput: print,
      // Seven Node processes start at once, each migrating its database first: on a busy two-core machine that
      // took over a minute. A service that exits is reported at once; only a slow one is waited for this long.
      startTimeoutMs: 180_000,
    });
  } else {
    const { startEmbeddedSystem } = await import('./embedded-system.js');
    started = await startEmbeddedSystem({ ...common, deployment, postgresPort, signal: abort.signal });
  }
  system = started;
  // Processes mode does not watch the signal: a Ctrl-C its services outlived stops them now.
  if (abort.signal.aborted) {
    await started.stop();
    throw abort.signal.reason;
  }
  if (started.databaseDir) console.log(`Embedded PostgreSQL data: ${started.databaseDir}`);
  console.log(`\n${banner}`);
  console.log(`\nGateway listening on ${started.gatewayUrl} (${choice.mode} mode). Press Ctrl-C to stop.\n`);
}

const startup = main();
process.on('uncaughtException', (error) => void fail(error, startup));
process.on('unhandledRejection', (error) => void fail(error, startup));
startup.catch((error: unknown) => {
  if (abort.signal.reason instanceof Interrupted && !failed) {
    console.log('Stopped.');
    process.exit(0);
  }
  return fail(error);
});
