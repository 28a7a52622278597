import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { cp } from 'node:fs/promises';
import path from 'node:path';
import { expect } from 'chai';
import { answers, defaultPorts } from '@payments/infra';
import {
  eventually,
  freePort,
  freePortBlock,
  pnpmCommand,
  PINNED_PNPM,
  runningPnpm,
} from '@payments/testkit';
import { createPaymentsClient } from '@payments/client';
import { signUp } from '@payments/test-support';

// `pnpm start` driven as a user drives it: in a process group of its own, as root or as another OS user,
// from a copy of the checkout placed where the case needs it.

const repo = path.resolve(import.meta.dirname, '..', '..');

/**
 * pnpm as the tests run it (`pnpmCommand`); another OS user cannot read root's, and runs its own (`installPnpm`), or
 * npx before it has one.
 */
function pnpmOf(user?: OsUser): [string, string[]] {
  if (!user) return pnpmCommand();
  return user.pnpm ? [process.execPath, [user.pnpm]] : ['npx', ['--yes', PINNED_PNPM]];
}

/**
 * A copy of the checkout at `<root>/repo`: sources copied, node_modules hard-linked (same inodes, new paths), so
 * the copy is cheap. With `owner`, everything but node_modules is handed to that user (the hard links stay root's:
 * chowning them would chown the original checkout).
 */
export function privateCheckout(root: string, owner?: string): string {
  const copy = path.join(root, 'repo');
  execFileSync(
    'sh',
    ['-c', `mkdir -p "${copy}" && git ls-files -z | tar --null -cf - -T - | tar -xf - -C "${copy}"`],
    { cwd: repo },
  );
  const packages = execFileSync('git', ['ls-files', '*package.json', 'package.json'], {
    cwd: repo,
    encoding: 'utf8',
  })
    .split('\n')
    .filter(Boolean)
    .map((file) => path.dirname(file));
  for (const dir of packages)
    execFileSync(
      'sh',
      ['-c', `[ ! -d "${dir}/node_modules" ] || cp -al "${dir}/node_modules" "${copy}/${dir}/"`],
      { cwd: repo },
    );
  if (owner)
    execFileSync('find', [
      copy,
      '-name',
      'node_modules',
      '-prune',
      '-o',
      '-exec',
      'chown',
      '-h',
      `${owner}:${owner}`,
      '{}',
      '+',
    ]);
  return copy;
}

/** The ports one start uses, from a free block, and probes pointed at a closed port (no PostgreSQL, no RabbitMQ). */
export async function startPorts(): Promise<Record<string, string>> {
  // The gateway at base, the services at base + 2 … base + 7, PostgreSQL after them.
  const base = await freePortBlock(9);
  const closed = await freePort();
  return {
    PAYMENTS_PROBE_POSTGRES: `127.0.0.1:${closed}`,
    PAYMENTS_PROBE_AMQP: `127.0.0.1:${closed}`,
    GATEWAY_PORT: String(base),
    SERVICES_PORT_BASE: String(base + 1),
    EMBEDDED_POSTGRES_PORT: String(base + 8),
  };
}

/** Every port a start with these variables listens on. */
export const portsOf = (env: Record<string, string>) => [
  ...Object.values(defaultPorts(Number(env.GATEWAY_PORT), Number(env.SERVICES_PORT_BASE))),
  Number(env.EMBEDDED_POSTGRES_PORT),
];

export interface OsUser {
  name: string;
  uid: number;
  gid: number;
  home: string;
  /** The user's own pnpm (`installPnpm`). */
  pnpm?: string;
}

/** The login environment of `user` (PATH, HOME, USER, LANG) rather than root's. */
function loginEnvironment(user: OsUser): Record<string, string> {
  return {
    PATH: '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin',
    HOME: user.home,
    USER: user.name,
    LOGNAME: user.name,
    LANG: 'C.UTF-8',
    // A machine's own certificate authorities, where it has them (an intercepting proxy's).
    ...(process.env.NODE_EXTRA_CA_CERTS ? { NODE_EXTRA_CA_CERTS: process.env.NODE_EXTRA_CA_CERTS } : {}),
  };
}

/**
 * The README's pnpm for another OS user, in a folder of its home that it owns; returns its entry script. A copy of
 * the pnpm running these tests (root's npx cache is closed to others), else installed by npm as that user. Not
 * through `npx`: each start would be npx's child, and npx dies of the Ctrl-C that the start exits 0 on.
 */
export async function installPnpm(user: OsUser): Promise<string> {
  const prefix = path.join(user.home, 'pnpm');
  const running = runningPnpm();
  if (running) {
    const copy = path.join(prefix, 'node_modules', 'pnpm');
    await cp(path.dirname(path.dirname(running)), copy, { recursive: true });
    execFileSync('chown', ['-R', `${user.uid}:${user.gid}`, prefix]);
    return path.join(copy, 'bin', path.basename(running));
  }
  execFileSync('npm', ['install', '--no-save', '--no-audit', '--no-fund', '--prefix', prefix, PINNED_PNPM], {
    uid: user.uid,
    gid: user.gid,
    env: loginEnvironment(user),
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  return path.join(prefix, 'node_modules', 'pnpm', 'bin', 'pnpm.cjs');
}

export interface Start {
  child: ChildProcess;
  output: () => string;
  exit: Promise<number | null>;
  /** When it was spawned (ms), to time the start. */
  began: number;
}

/**
 * `pnpm start` in `cwd`, leading its own process group as in a terminal. As `user`, with the environment a login
 * gives (PATH, HOME, USER, LANG) rather than root's.
 */
export function start(cwd: string, env: Record<string, string>, user?: OsUser): Start {
  let output = '';
  const base = user ? loginEnvironment(user) : process.env;
  const [command, args] = pnpmOf(user);
  const child = spawn(command, [...args, 'start'], {
    cwd,
    detached: true,
    ...(user ? { uid: user.uid, gid: user.gid } : {}),
    env: {
      ...base,
      DATABASE_URL: '',
      AMQP_URL: '',
      PAYMENTS_MODE: 'embedded',
      LOG_LEVEL: 'warn',
      SANDBOX_DELAY_MS: '100',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exit = new Promise<number | null>((resolve) => child.once('close', (code) => resolve(code)));
  return { child, output: () => output, exit, began: Date.now() };
}

/** Waits for the gateway to listen; returns how long the start took (s). */
export async function up(started: Start): Promise<number> {
  await eventually(
    async () => started.output(),
    (text) => text.includes('Gateway listening') || started.child.exitCode !== null,
    // Beyond the launcher's own wait for its slowest service (180 s), so that its message is the one seen.
    { timeoutMs: 200_000, intervalMs: 100 },
  );
  if (!started.output().includes('Gateway listening'))
    throw new Error(`pnpm start did not come up:\n${started.output()}`);
  return (Date.now() - started.began) / 1000;
}

/** Waits until the start has printed `text` (or exited). */
export async function printed(started: Start, text: string): Promise<void> {
  await eventually(
    async () => started.output(),
    (output) => output.includes(text) || started.child.exitCode !== null,
    { timeoutMs: 120_000, intervalMs: 20 },
  );
  if (!started.output().includes(text))
    throw new Error(`pnpm start never printed ${text}:\n${started.output()}`);
}

/** Whether a process with this pid exists (signal 0 checks without signalling). */
export const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

export const databaseDirOf = (started: Start) =>
  /Embedded PostgreSQL data: (\S+)/.exec(started.output())?.[1] ?? '';

/** The launcher itself (node running scripts/start.ts) in the process group pnpm leads. */
export function launcherOf(group: number): number {
  const line = execFileSync('ps', ['-o', 'pid=,args=', '-g', String(group)], { encoding: 'utf8' })
    .split('\n')
    .find((entry) => entry.includes('scripts/start.ts') && entry.includes('node '));
  if (!line) throw new Error('no launcher found');
  return Number(line.trim().split(' ')[0]);
}

/** Processes whose command line names `text` (a data directory: the postmaster runs in a group of its own). */
export const processesNaming = (text: string) =>
  execFileSync('ps', ['-eo', 'pid=,uid=,args='], { encoding: 'utf8' })
    .split('\n')
    .filter((line) => line.includes(text) && !line.includes('ps -eo'))
    .map((line) => {
      const [pid, uid] = line.trim().split(/\s+/);
      return { pid: Number(pid), uid: Number(uid), line: line.trim() };
    });

export const postgresOf = (databaseDir: string) =>
  processesNaming(`-D ${databaseDir} `).map(({ pid }) => pid);

export const groupAlive = (group: number) => {
  try {
    process.kill(-group, 0);
    return true;
  } catch {
    return false;
  }
};

/** Ctrl-C to the start's process group, as a terminal sends it; SIGKILL if it has not gone in 30 s. */
export async function stopGroup(started: Start): Promise<void> {
  const group = started.child.pid as number;
  if (!groupAlive(group)) return;
  process.kill(-group, 'SIGINT');
  await Promise.race([started.exit, new Promise((resolve) => setTimeout(resolve, 30_000))]);
  if (groupAlive(group)) process.kill(-group, 'SIGKILL');
}

/**
 * What a start that has ended must leave: no process of its group, no process naming `directories` (its data
 * directory, its cluster), none of its ports listening.
 */
export async function expectNothingLeft(
  started: Start,
  env: Record<string, string>,
  directories: string[],
): Promise<void> {
  const group = started.child.pid as number;
  // A helper (tsx's esbuild) may take a moment to notice its parent has gone; a service would not leave.
  const groupLeft = await eventually(
    async () => groupAlive(group),
    (value) => !value,
    { timeoutMs: 5_000, intervalMs: 100 },
  );
  expect(groupLeft, 'a process left in the start’s group').to.equal(false);
  for (const directory of directories.filter(Boolean))
    expect(
      processesNaming(directory).map(({ line }) => line),
      directory,
    ).to.deep.equal([]);
  for (const port of portsOf(env)) expect(await answers('127.0.0.1', port), `port ${port}`).to.equal(false);
}

/** A failed start: a non-zero exit, one `pnpm start failed: …` sentence containing `words`, no stack trace. */
export async function expectFailure(started: Start, words: string): Promise<string> {
  expect(await started.exit, started.output()).to.not.equal(0);
  const output = started.output();
  const failures = output.split('\n').filter((line) => line.startsWith('pnpm start failed: '));
  expect(failures, output).to.have.length(1);
  expect(failures[0], output).to.contain(words);
  expect(output, 'no stack trace').not.to.match(/^\s+at |Unhandled|node:internal/m);
  return failures[0] as string;
}

/** Signs up, opens a USD account and deposits 42.10, confirmed by the sandbox; returns what finds them again. */
export async function depositThrough(gatewayPort: string) {
  const { token, client } = await signUp(`http://127.0.0.1:${gatewayPort}`);
  const account = await client.accounts.open({ currency: 'USD' });
  const deposit = await client.money.deposit(account.id, { amount: '42.10', currency: 'USD' });
  expect(deposit.status).to.equal('pending');
  const transaction = await eventually(
    () => client.transactions.get(deposit.id),
    (found) => found.status !== 'pending',
  );
  expect(transaction.status).to.equal('completed');
  return { token, accountId: account.id };
}

/** The balance a deposit left, read again (after a restart: the data was kept). */
export async function expectBalance(gatewayPort: string, token: string, accountId: string) {
  const client = createPaymentsClient({ baseUrl: `http://127.0.0.1:${gatewayPort}`, token });
  const balance = await client.balances.get(accountId);
  expect(balance).to.include({ balance: 42.1, currency: 'USD' });
}

/**
 * The checkout had no console build (git does not hold one): the start says it builds it, once, and the gateway
 * serves it at /console.
 */
export async function expectConsoleBuiltAndServed(started: Start, gatewayPort: string): Promise<void> {
  const building = started.output().match(/^Building the operator console \(it was not built\)…$/gm) ?? [];
  expect(building, started.output()).to.have.length(1);
  const page = await fetch(`http://127.0.0.1:${gatewayPort}/console/users`);
  expect(page.status).to.equal(200);
  expect(await page.text()).to.include('/console/assets/');
}
