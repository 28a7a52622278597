import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import {
  provisionLogins,
  removeLogins,
  SERVICE_NAMES,
  serviceEnvironment,
  type ServiceName,
} from '@payments/infra';
import { eventually, reserveSystemResources } from '@payments/testkit';

// `pnpm images:rehearse` (as root, Linux): what each production image does, without a container engine. Makes
// the deploy folders the Dockerfile copies in (infra/deploy-folders.sh), then starts every service from its own
// folder as the image would: `node dist/main.js`, production settings, an unprivileged user (uid 10001) that owns
// none of the files, and a read-only root filesystem (a private mount namespace; like compose's read_only).
// Reports each folder's size and each service's start-to-ready time, runs a deposit through the gateway, and
// removes everything it made (databases and roles, broker users and queues: uniquely named for this run).

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const UNPRIVILEGED = '10001';
const run = promisify(execFile);

if (process.getuid?.() !== 0) {
  console.error('pnpm images:rehearse needs root (a mount namespace with a read-only root, then uid 10001)');
  process.exit(1);
}

const folders = await mkdtemp(path.join(tmpdir(), 'payments-images-'));
// Like /app in the image: root's, readable by everyone.
await chmod(folders, 0o755);
// Every image, the sandbox's too (as `docker compose --profile sandbox` runs it).
const deployment = { sandbox: true };
const {
  postgresUrl,
  broker,
  suffix,
  provisioning: target,
  logins,
  ports,
} = await reserveSystemResources(deployment);
const running = new Map<ServiceName, ChildProcess>();

const stop = async (service: ServiceName) => {
  const child = running.get(service);
  if (!child || child.exitCode !== null || child.signalCode !== null) return;
  child.kill('SIGTERM');
  await new Promise((resolve) => child.once('exit', resolve));
};

try {
  await run('bash', ['infra/deploy-folders.sh', folders], { cwd: ROOT });
  await provisionLogins(target, logins, deployment);
  const serviceToken = randomBytes(32).toString('hex');
  const settings = {
    postgresUrl,
    amqpUrl: broker.url,
    amqpNamespace: broker.namespace,
    databaseSuffix: suffix,
    ports,
    // Nothing may be written: a data directory that cannot exist.
    dataDir: '/nonexistent/payments',
    nodeEnv: 'production' as const,
    logLevel: 'warn',
    webhookSecret: `whsec_${randomBytes(24).toString('hex')}`,
    serviceToken,
    logins,
    serviceEnv: {
      identity: {
        JWT_PRIVATE_KEY: generateKeyPairSync('ec', {
          namedCurve: 'P-256',
          publicKeyEncoding: { type: 'spki', format: 'pem' },
          privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
        }).privateKey,
      },
      // As in docker-compose.yml: the sandbox is the one development-mode container.
      'provider-sandbox': { NODE_ENV: 'development', SANDBOX_ENABLED: 'true' },
    },
  };

  /** Starts a service as its image would and resolves with the seconds until its /ready answered 200. */
  const launch = async (service: ServiceName): Promise<number> => {
    const env = { PATH: process.env.PATH ?? '', ...serviceEnvironment(service, settings) };
    const started = Date.now();
    const child = spawn(
      'unshare',
      [
        '--mount',
        'sh',
        '-c',
        'mount --make-rprivate / && mount -o remount,bind,ro / && ' +
          `exec setpriv --reuid=${UNPRIVILEGED} --regid=${UNPRIVILEGED} --clear-groups "$NODE" dist/main.js`,
      ],
      { cwd: path.join(folders, service), env: { ...env, NODE: process.execPath }, stdio: 'inherit' },
    );
    running.set(service, child);
    const status = await eventually(
      () =>
        fetch(`http://127.0.0.1:${ports[service]}/ready`, {
          headers: { authorization: `Bearer ${serviceToken}` },
          signal: AbortSignal.timeout(1000),
        })
          .then((response) => response.status)
          .catch(() => 0),
      (answer) => answer === 200 || child.exitCode !== null,
      { timeoutMs: 30_000, intervalMs: 20 },
    );
    if (status !== 200) throw new Error(`${service} did not become ready (exit code ${child.exitCode})`);
    return (Date.now() - started) / 1000;
  };

  // First start (an empty database: migrations run), then a restart of each alone, as a redeployment does.
  const lines: string[] = [];
  for (const service of SERVICE_NAMES) {
    const { stdout } = await run('du', ['-sk', path.join(folders, service)]);
    const megabytes = Math.round(Number(stdout.split('\t')[0]) / 1024);
    const first = await launch(service);
    lines.push(`${service}: ${megabytes} MB; start to ready: first ${first.toFixed(2)} s`);
  }
  for (const [index, service] of SERVICE_NAMES.entries()) {
    await stop(service);
    lines[index] += `, restart ${(await launch(service)).toFixed(2)} s`;
  }
  console.log(lines.join('\n'));

  // A deposit through the gateway, confirmed by the sandbox's signed webhook.
  const gateway = `http://127.0.0.1:${ports.gateway}`;
  const call = async (method: string, url: string, body?: unknown, token?: string) => {
    const response = await fetch(gateway + url, {
      method,
      headers: {
        'content-type': 'application/json',
        ...(token ? { authorization: `Bearer ${token}` } : {}),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return {
      status: response.status,
      body: (await response.json().catch(() => null)) as Record<string, unknown>,
    };
  };
  const username = `rehearsal_${randomBytes(4).toString('hex')}`;
  const password = randomBytes(12).toString('hex');
  await call('POST', '/user', { username, email: `${username}@example.com`, password });
  const token = String((await call('POST', '/auth/login', { username, password })).body.token);
  const account = String((await call('POST', '/account', { currency: 'USD' }, token)).body.id);
  const deposit = await call(
    'POST',
    `/account/${account}/deposit`,
    { amount: 12.34, currency: 'USD' },
    token,
  );
  const done = await eventually(
    () => call('GET', `/transaction/${String(deposit.body.id)}`, undefined, token),
    (answer) => answer.body?.status === 'completed',
    { timeoutMs: 20_000, what: 'the deposit completing' },
  );
  const balance = await call('GET', `/account/${account}/balance`, undefined, token);
  console.log(`deposit ${String(done.body.status)}, balance ${String(balance.body.balance)} USD`);
  if (done.body.status !== 'completed' || balance.body.balance !== 12.34) process.exitCode = 1;
} finally {
  for (const service of [...running.keys()].reverse()) await stop(service);
  await removeLogins(target, logins).catch(() => undefined);
  await broker.cleanup().catch(() => undefined);
  await rm(folders, { recursive: true, force: true });
}
