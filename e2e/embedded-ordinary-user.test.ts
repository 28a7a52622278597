import { execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmod, chown, mkdir, mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import {
  alive,
  databaseDirOf,
  depositThrough,
  expectConsoleBuiltAndServed,
  expectBalance,
  expectFailure,
  expectNothingLeft,
  installPnpm,
  launcherOf,
  postgresOf,
  privateCheckout,
  processesNaming,
  start,
  startPorts,
  stopGroup,
  up,
  type OsUser,
  type Start,
} from './support/pnpm-start.js';

// `pnpm start` as an ordinary OS user: a throwaway system user made for the run, its checkout under a
// 0700 directory it owns, the 0700 .data processes mode leaves, a second start after SIGKILL with the data kept, a
// stale postmaster.pid naming another of its processes, and a .data it cannot write. PostgreSQL runs as that user.

/** Makes a throwaway system user; the suite runs as root in CI, and refuses loudly rather than skipping elsewhere. */
function makeUser(home: string): OsUser {
  if (process.getuid?.() !== 0)
    throw new Error(
      'The ordinary-user cases of pnpm start make a throwaway OS user and so must run as root (as CI does); run them as root.',
    );
  const name = `payments-t${randomBytes(4).toString('hex')}`;
  try {
    execFileSync(
      'useradd',
      ['--system', '--user-group', '--no-create-home', '--shell', '/usr/sbin/nologin', name],
      {
        stdio: ['ignore', 'ignore', 'pipe'],
      },
    );
  } catch (error) {
    throw new Error(`Could not make the throwaway user ${name} with useradd: ${String(error)}`, {
      cause: error,
    });
  }
  const id = (flag: string) => Number(execFileSync('id', [flag, name], { encoding: 'utf8' }).trim());
  return { name, uid: id('-u'), gid: id('-g'), home };
}

/** Ends every process of the throwaway user (by PID) and removes it with its group. */
function removeUser(user: OsUser) {
  const pids = execFileSync('ps', ['-eo', 'pid=,uid='], { encoding: 'utf8' })
    .split('\n')
    .map((line) => line.trim().split(/\s+/).map(Number))
    .filter(([pid, uid]) => uid === user.uid && (pid ?? 0) > 0)
    .map(([pid]) => pid as number);
  for (const pid of pids) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
  execFileSync('userdel', [user.name], { stdio: 'ignore' });
  try {
    execFileSync('groupdel', [user.name], { stdio: 'ignore' });
  } catch {
    // userdel removed it with the user
  }
}

describe('pnpm start as an ordinary user', function () {
  this.timeout(300_000);
  let root = '';
  let checkout: string;
  let user: OsUser | undefined;
  let env: Record<string, string>;
  let databaseDir = '';
  let deposit: { token: string; accountId: string } | undefined;
  const starts: Start[] = [];
  const run = (variables: Record<string, string>) => {
    const started = start(checkout, variables, user);
    starts.push(started);
    return started;
  };
  const own = async (target: string) => chown(target, user?.uid ?? 0, user?.gid ?? 0);

  before(async () => {
    root = await mkdtemp(path.join(tmpdir(), 'payments-user-'));
    user = makeUser(path.join(root, 'home'));
    await own(root);
    await chmod(root, 0o700);
    await mkdir(user.home, { mode: 0o700 });
    await own(user.home);
    user.pnpm = await installPnpm(user);
    checkout = privateCheckout(root, user.name);
    // What processes mode leaves: a .data only its owner may enter, with the development secrets in it.
    const data = path.join(checkout, '.data');
    await mkdir(data, { mode: 0o700 });
    const secrets = path.join(data, 'development-secrets.json');
    await writeFile(
      secrets,
      `${JSON.stringify({ serviceToken: randomBytes(32).toString('hex'), webhookSecret: randomBytes(32).toString('hex') })}\n`,
      { mode: 0o600 },
    );
    for (const target of [data, secrets]) await own(target);
    env = await startPorts();
  });

  after(async () => {
    for (const started of starts) await stopGroup(started);
    if (databaseDir) for (const { pid } of processesNaming(databaseDir)) process.kill(pid, 'SIGKILL');
    if (user) removeUser(user);
    if (root) await rm(root, { recursive: true, force: true });
  });

  it('comes up from its 0700 checkout with the 0700 .data processes mode left, serves deposits, and after SIGKILL of the launcher starts again with the data kept', async () => {
    const first = run(env);
    const firstSeconds = await up(first);
    databaseDir = databaseDirOf(first);
    // No user switch: the cluster is in its own .data, run by the user.
    expect(databaseDir).to.equal(path.join(checkout, '.data', 'postgres'));
    const postmaster = processesNaming(`-D ${databaseDir} `);
    expect(postmaster.map(({ uid }) => uid)).to.deep.equal([user?.uid]);
    deposit = await depositThrough(env.GATEWAY_PORT as string);
    await expectConsoleBuiltAndServed(first, env.GATEWAY_PORT as string);

    process.kill(launcherOf(first.child.pid as number), 'SIGKILL');
    await first.exit;
    expect(postgresOf(databaseDir), 'the orphaned PostgreSQL').to.have.length(1);

    const second = run(env);
    const laterSeconds = await up(second);
    await expectBalance(env.GATEWAY_PORT as string, deposit.token, deposit.accountId);
    await stopGroup(second);
    expect(await second.exit).to.equal(0);
    await expectNothingLeft(second, env, [databaseDir]);
    // The secrets stay the user's alone.
    const secrets = await stat(path.join(checkout, '.data', 'development-secrets.json'));
    expect([secrets.uid, secrets.mode & 0o777]).to.deep.equal([user?.uid, 0o600]);
    console.log(
      `      ordinary user, cluster in .data: first start ${firstSeconds.toFixed(1)} s, after SIGKILL ${laterSeconds.toFixed(1)} s`,
    );
  });

  it('leaves alone its own process that a stale postmaster.pid names, and starts', async () => {
    expect(databaseDir, 'the cluster of the first case').to.not.equal('');
    // The same user's process, named like a postmaster: the launcher could signal it, and must not.
    const foreign = spawn('sleep', ['600'], {
      argv0: 'postgres',
      stdio: 'ignore',
      detached: true,
      uid: user?.uid,
      gid: user?.gid,
    });
    try {
      const pidFile = path.join(databaseDir, 'postmaster.pid');
      await writeFile(
        pidFile,
        `${foreign.pid}\n${databaseDir}\n1795600000\n${env.EMBEDDED_POSTGRES_PORT}\n/tmp\n127.0.0.1\n  5432001         0\nready   \n`,
      );
      await own(pidFile);
      const again = run(env);
      const seconds = await up(again);
      console.log(`      ordinary user: a later start (after a clean stop) ${seconds.toFixed(1)} s`);
      expect(alive(foreign.pid as number), 'the foreign process').to.equal(true);
      await expectBalance(env.GATEWAY_PORT as string, deposit?.token ?? '', deposit?.accountId ?? '');
      await stopGroup(again);
      expect(await again.exit).to.equal(0);
      await expectNothingLeft(again, env, [databaseDir]);
      expect(alive(foreign.pid as number), 'the foreign process').to.equal(true);
    } finally {
      foreign.kill('SIGKILL');
    }
  });

  it('refuses a DATA_DIR it cannot write in one sentence, non-zero, nothing running', async () => {
    const locked = path.join(root, 'locked');
    await mkdir(locked, { mode: 0o500 });
    await own(locked);
    const failed = run({ ...env, DATA_DIR: locked });
    await expectFailure(
      failed,
      `The data directory ${locked} cannot be written by this user (EACCES); set DATA_DIR`,
    );
    await expectNothingLeft(failed, env, [locked]);
  });
});
