import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { chmod, mkdir, mkdtemp, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { eventually, freePort, freePortBlock } from '@payments/testkit';
import { apiClient } from './api-client.js';

// `pnpm start` from where users start it (issue 18): a checkout only its owner can enter, a `.data` left by
// processes mode, a second start after the first was killed with SIGKILL, and ports held by other programs.

const repo = path.resolve(import.meta.dirname, '..');

/** A copy of the checkout under a 0700 directory: sources copied, node_modules hard-linked (same inodes, new paths). */
function privateCheckout(root: string): string {
  const copy = path.join(root, 'repo');
  execFileSync(
    'sh',
    ['-c', `mkdir -p "${copy}" && git ls-files -z | tar --null -cf - -T - | tar -xf - -C "${copy}"`],
    {
      cwd: repo,
    },
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
      {
        cwd: repo,
      },
    );
  return copy;
}

interface Start {
  child: ChildProcess;
  output: () => string;
  exit: Promise<number | null>;
}

function start(cwd: string, env: Record<string, string>): Start {
  let output = '';
  const child = spawn('pnpm', ['start'], {
    cwd,
    detached: true,
    env: {
      ...process.env,
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
  return { child, output: () => output, exit };
}

async function up(started: Start): Promise<void> {
  await eventually(
    async () => started.output(),
    (text) => text.includes('Gateway listening') || started.child.exitCode !== null,
    { timeoutMs: 120_000, intervalMs: 200 },
  );
  if (!started.output().includes('Gateway listening'))
    throw new Error(`pnpm start did not come up:\n${started.output()}`);
}

/** The launcher itself (node running scripts/start.ts) in the process group pnpm leads. */
function launcherOf(group: number): number {
  const line = execFileSync('ps', ['-o', 'pid=,args=', '-g', String(group)], { encoding: 'utf8' })
    .split('\n')
    .find((entry) => entry.includes('scripts/start.ts') && entry.includes('node '));
  if (!line) throw new Error('no launcher found');
  return Number(line.trim().split(' ')[0]);
}

const postgresOf = (databaseDir: string) =>
  execFileSync('ps', ['-eo', 'pid=,args='], { encoding: 'utf8' })
    .split('\n')
    .filter((line) => line.includes(`-D ${databaseDir} `))
    .map((line) => Number(line.trim().split(' ')[0]));

async function stopGroup(started: Start) {
  const group = started.child.pid as number;
  try {
    process.kill(-group, 'SIGINT');
  } catch {
    return;
  }
  await Promise.race([started.exit, new Promise((resolve) => setTimeout(resolve, 30_000))]);
}

describe('pnpm start from anywhere (issue 18)', function () {
  this.timeout(300_000);
  let root: string;
  let checkout: string;
  let env: Record<string, string>;
  let databaseDir = '';
  const starts: Start[] = [];

  before(async () => {
    root = await mkdtemp(path.join(tmpdir(), 'payments-private-'));
    await chmod(root, 0o700);
    checkout = privateCheckout(root);
    // What processes mode leaves: a .data only its owner may enter.
    await mkdir(path.join(checkout, '.data'), { mode: 0o700 });
    const base = await freePortBlock(9);
    const closed = await freePort();
    env = {
      PAYMENTS_PROBE_POSTGRES: `127.0.0.1:${closed}`,
      PAYMENTS_PROBE_AMQP: `127.0.0.1:${closed}`,
      GATEWAY_PORT: String(base),
      SERVICES_PORT_BASE: String(base + 1),
      EMBEDDED_POSTGRES_PORT: String(base + 8),
    };
  });

  after(async () => {
    for (const started of starts) await stopGroup(started);
    if (databaseDir) for (const pid of postgresOf(databaseDir)) process.kill(pid, 'SIGKILL');
    await rm(root, { recursive: true, force: true });
    if (databaseDir.startsWith('/var/tmp/payments-embedded-'))
      await rm(databaseDir, { recursive: true, force: true });
  });

  it('comes up from a private checkout with a 0700 .data, serves deposits, and after SIGKILL of the launcher starts again with the data kept', async () => {
    const first = start(checkout, env);
    starts.push(first);
    await up(first);
    databaseDir = /Embedded PostgreSQL data: (\S+)/.exec(first.output())?.[1] ?? '';
    const api = apiClient(`http://127.0.0.1:${env.GATEWAY_PORT}`);
    const { token } = await api.signUp();
    const account = await api.post('/account', { currency: 'USD' }, token);
    expect(account.status, account.text).to.equal(201);
    const deposit = await api.post(
      `/account/${account.body.id}/deposit`,
      { amount: '42.10', currency: 'USD' },
      token,
    );
    expect(deposit.status, deposit.text).to.equal(202);
    await eventually(
      async () => (await api.get(`/transaction/${deposit.body.id}`, token)).body,
      (body) => body.status === 'completed',
    );

    process.kill(launcherOf(first.child.pid as number), 'SIGKILL');
    await first.exit;
    expect(postgresOf(databaseDir), 'the orphaned PostgreSQL').to.have.length(1);

    const second = start(checkout, env);
    starts.push(second);
    await up(second);
    const balance = await api.get(`/account/${account.body.id}/balance`, token);
    expect(balance.body).to.include({ balance: 42.1, currency: 'USD' });
    await stopGroup(second);
    expect(await second.exit).to.equal(0);
    expect(postgresOf(databaseDir)).to.deep.equal([]);
  });

  for (const variable of ['GATEWAY_PORT', 'EMBEDDED_POSTGRES_PORT'] as const) {
    it(`names a port held by another program with ${variable}, exits non-zero and leaves nothing running`, async () => {
      const holder: Server = createServer();
      const port =
        variable === 'GATEWAY_PORT' ? Number(env.GATEWAY_PORT) : Number(env.EMBEDDED_POSTGRES_PORT);
      await new Promise<void>((resolve) => holder.listen(port, '127.0.0.1', resolve));
      try {
        const failed = start(checkout, env);
        starts.push(failed);
        expect(await failed.exit).to.not.equal(0);
        expect(failed.output()).to.contain(`Port ${port} is taken by another program; set ${variable}`);
        expect(failed.output()).not.to.match(/Unhandled| {4}at /);
        if (databaseDir) expect(postgresOf(databaseDir)).to.deep.equal([]);
      } finally {
        await new Promise((resolve) => holder.close(resolve));
      }
    });
  }
});
