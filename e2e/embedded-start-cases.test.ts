import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { appendFile, chmod, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { answers, defaultPorts } from '@payments/infra';
import { eventually } from '@payments/testkit';
import {
  alive,
  databaseDirOf,
  depositThrough,
  expectConsoleBuiltAndServed,
  expectBalance,
  expectFailure,
  expectNothingLeft,
  groupAlive,
  launcherOf,
  postgresOf,
  printed,
  privateCheckout,
  processesNaming,
  start,
  startPorts,
  stopGroup,
  up,
  type Start,
} from './support/pnpm-start.js';

// `pnpm start` from where users start it, as root: a checkout only its owner can enter, a `.data` left by
// processes mode, a second start after the first was killed with SIGKILL, a stale postmaster.pid, ports held by
// other programs, Ctrl-C while starting, and each failure that is cheap to provoke. One cluster serves the cases
// that need one; the ordinary user's cases are in embedded-ordinary-user.test.ts.

describe('pnpm start from anywhere', function () {
  this.timeout(300_000);
  let root: string;
  let scratch: string;
  let checkout: string;
  let env: Record<string, string>;
  let databaseDir = '';
  let deposit: { token: string; accountId: string } | undefined;
  const starts: Start[] = [];
  const run = (cwd: string, variables: Record<string, string>) => {
    const started = start(cwd, variables);
    starts.push(started);
    return started;
  };

  before(async () => {
    root = await mkdtemp(path.join(tmpdir(), 'payments-private-'));
    await chmod(root, 0o700);
    checkout = privateCheckout(root);
    // What processes mode leaves: a .data only its owner may enter.
    await mkdir(path.join(checkout, '.data'), { mode: 0o700 });
    // Data directories the postgres user can reach (their clusters live inside them), for the cases of their own.
    scratch = await mkdtemp(path.join(tmpdir(), 'payments-start-cases-'));
    await chmod(scratch, 0o755);
    env = await startPorts();
  });

  after(async () => {
    for (const started of starts) await stopGroup(started);
    for (const directory of [databaseDir, scratch].filter(Boolean))
      for (const { pid } of processesNaming(directory)) process.kill(pid, 'SIGKILL');
    await rm(root, { recursive: true, force: true });
    await rm(scratch, { recursive: true, force: true });
    if (databaseDir.startsWith('/var/tmp/payments-embedded-'))
      await rm(databaseDir, { recursive: true, force: true });
  });

  it('comes up from a private checkout with a 0700 .data, serves deposits, and after SIGKILL of the launcher starts again with the data kept', async () => {
    const first = run(checkout, env);
    const firstSeconds = await up(first);
    databaseDir = databaseDirOf(first);
    deposit = await depositThrough(env.GATEWAY_PORT as string);
    await expectConsoleBuiltAndServed(first, env.GATEWAY_PORT as string);

    process.kill(launcherOf(first.child.pid as number), 'SIGKILL');
    await first.exit;
    expect(postgresOf(databaseDir), 'the orphaned PostgreSQL').to.have.length(1);

    const second = run(checkout, env);
    const laterSeconds = await up(second);
    await expectBalance(env.GATEWAY_PORT as string, deposit.token, deposit.accountId);
    await stopGroup(second);
    expect(await second.exit).to.equal(0);
    await expectNothingLeft(second, env, [databaseDir]);
    console.log(
      `      root, cluster in ${databaseDir}: first start ${firstSeconds.toFixed(1)} s, after SIGKILL ${laterSeconds.toFixed(1)} s`,
    );
  });

  it('with SANDBOX_ENABLED=false, starts no sandbox at all: the rest comes up and the sandbox port stays closed', async () => {
    const started = run(checkout, { ...env, SANDBOX_ENABLED: 'false' });
    await up(started);
    databaseDir ||= databaseDirOf(started);
    expect(started.output()).to.contain('The provider sandbox is off');
    const sandboxPort = defaultPorts(Number(env.GATEWAY_PORT), Number(env.SERVICES_PORT_BASE))[
      'provider-sandbox'
    ];
    expect(await answers('127.0.0.1', sandboxPort), `the sandbox's port ${sandboxPort}`).to.equal(false);
    // The URL an earlier start with the sandbox recorded is gone with it; its key is kept for the next one.
    const secrets = JSON.parse(
      await readFile(path.join(checkout, '.data', 'development-secrets.json'), 'utf8'),
    ) as Record<string, unknown>;
    expect(secrets).not.to.have.property('sandboxApiUrl');
    expect(secrets.sandboxApiKey).to.match(/^sk_test_/);
    await stopGroup(started);
    expect(await started.exit).to.equal(0);
    await expectNothingLeft(started, env, [databaseDirOf(started)]);
  });

  it('leaves alone the process a stale postmaster.pid names (its PID given to another program) and starts', async () => {
    expect(databaseDir, 'the cluster of the first case').to.not.equal('');
    // Named like a postmaster, holding the PID the file names: only its data directory and port tell it apart.
    const foreign = spawn('sleep', ['600'], { argv0: 'postgres', stdio: 'ignore', detached: true });
    try {
      await writeFile(
        path.join(databaseDir, 'postmaster.pid'),
        `${foreign.pid}\n${databaseDir}\n1795600000\n${env.EMBEDDED_POSTGRES_PORT}\n/tmp\n127.0.0.1\n  5432001         0\nready   \n`,
      );
      const again = run(checkout, env);
      const seconds = await up(again);
      console.log(`      root: a later start (after a clean stop) ${seconds.toFixed(1)} s`);
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

  it('in processes mode, takes its services down with it when the launcher is killed (SIGKILL), so the next start comes up', async function () {
    // Two starts of seven processes each, on a machine the other test files keep busy.
    this.timeout(600_000);
    // What a user of this machine gets: its PostgreSQL and RabbitMQ answer, so each service runs as a child process.
    const processes = {
      ...env,
      PAYMENTS_MODE: 'auto',
      PAYMENTS_PROBE_POSTGRES: '127.0.0.1:5432',
      PAYMENTS_PROBE_AMQP: '127.0.0.1:5672',
    };
    const first = run(checkout, processes);
    await up(first);
    expect(first.output()).to.contain('(processes mode)');
    const group = first.child.pid as number;
    process.kill(launcherOf(group), 'SIGKILL');
    await first.exit;
    const gone = await eventually(
      async () => !groupAlive(group),
      (value) => value,
      { timeoutMs: 30_000, intervalMs: 100 },
    );
    expect(gone, 'services left running by the killed launcher').to.equal(true);
    const second = run(checkout, processes);
    await up(second);
    await stopGroup(second);
    expect(await second.exit).to.equal(0);
    await expectNothingLeft(second, env, []);
  });

  it('stops its PostgreSQL when the terminal closes (SIGHUP to the foreground group), leaving nothing running', async () => {
    expect(databaseDir, 'the cluster of the first case').to.not.equal('');
    const again = run(checkout, env);
    await up(again);
    const launcher = launcherOf(again.child.pid as number);
    // What a closed terminal does: SIGHUP to its foreground process group (pnpm, the launcher, the services).
    process.kill(-(again.child.pid as number), 'SIGHUP');
    const gone = await eventually(
      async () => !alive(launcher),
      (value) => value,
      { timeoutMs: 30_000, intervalMs: 100 },
    );
    expect(gone, 'the launcher after SIGHUP').to.equal(true);
    await again.exit;
    await expectNothingLeft(again, env, [databaseDir]);
  });

  for (const variable of ['GATEWAY_PORT', 'SERVICES_PORT_BASE', 'EMBEDDED_POSTGRES_PORT'] as const) {
    it(`names a port held by another program with ${variable}, exits non-zero and leaves nothing running`, async () => {
      const holder: Server = createServer();
      // For the services, one inside their range (the currency service's, SERVICES_PORT_BASE + 3).
      const port = Number(env[variable]) + (variable === 'SERVICES_PORT_BASE' ? 3 : 0);
      await new Promise<void>((resolve) => holder.listen(port, '127.0.0.1', resolve));
      try {
        const failed = run(checkout, env);
        await expectFailure(failed, `Port ${port} is taken by another program; set ${variable}`);
        // The holder still listens there: every other port is free and nothing is left.
        await new Promise((resolve) => holder.close(resolve));
        await expectNothingLeft(failed, env, [databaseDir]);
      } finally {
        if (holder.listening) await new Promise((resolve) => holder.close(resolve));
      }
    });
  }

  describe('Ctrl-C while starting', () => {
    const interrupt = async (dataDir: string, marker: string) => {
      const started = run(checkout, { ...env, DATA_DIR: dataDir, LOG_LEVEL: 'info' });
      await printed(started, marker);
      process.kill(-(started.child.pid as number), 'SIGINT');
      expect(await started.exit, started.output()).to.equal(0);
      expect(started.output()).to.contain('SIGINT: stopping…');
      expect(started.output()).to.contain('Stopped.');
      expect(started.output()).not.to.contain('pnpm start failed');
      expect(started.output()).not.to.match(/^\s+at |Unhandled/m);
      await expectNothingLeft(started, env, [dataDir]);
      return started;
    };

    it('while PostgreSQL is being initialised: stops, leaves nothing running and no half-made cluster (the next start comes up)', async () => {
      const dataDir = path.join(scratch, 'interrupted-initdb');
      await interrupt(dataDir, 'initialising the embedded PostgreSQL cluster');
      // Interrupted inside initdb (it takes seconds; the stop, a fraction of one): no cluster, whole or half-made.
      expect(existsSync(path.join(dataDir, 'postgres.partial')), 'the half-made cluster').to.equal(false);
      expect(existsSync(path.join(dataDir, 'postgres')), 'a cluster').to.equal(false);
      const next = run(checkout, { ...env, DATA_DIR: dataDir });
      await up(next);
      await stopGroup(next);
      expect(await next.exit).to.equal(0);
      await expectNothingLeft(next, env, [dataDir]);
    });

    it('while the services start and migrate: stops them and PostgreSQL, leaves nothing running', async () => {
      // Identity warns about its development key as it starts; the ledger and the rest migrate after it.
      await interrupt(path.join(scratch, 'interrupted-services'), 'DEVELOPMENT token signing key');
    });
  });

  describe('each failure ends in one sentence, a non-zero exit and nothing running', () => {
    const invalid: [string, string, string][] = [
      ['GATEWAY_PORT', 'abc', 'GATEWAY_PORT must be a port number from 1 to 65535, not "abc"'],
      ['SERVICES_PORT_BASE', '65533', 'SERVICES_PORT_BASE must be a port number from 1 to 65529'],
      ['EMBEDDED_POSTGRES_PORT', '0', 'EMBEDDED_POSTGRES_PORT must be a port number'],
      ['PAYMENTS_MODE', 'embeded', 'PAYMENTS_MODE must be one of auto, embedded, not "embeded"'],
      ['LOG_LEVEL', 'loud', 'LOG_LEVEL must be one of'],
      ['SANDBOX_ENABLED', 'yes', 'SANDBOX_ENABLED must be one of true, false'],
    ];
    for (const [variable, value, words] of invalid) {
      it(`${variable}=${value}`, async () => {
        const failed = run(checkout, { ...env, [variable]: value });
        await expectFailure(failed, words);
        await expectNothingLeft(failed, env, [databaseDir]);
      });
    }

    it('a DATA_DIR that cannot be written (a file)', async () => {
      const file = path.join(scratch, 'not-a-directory');
      await writeFile(file, '');
      const failed = run(checkout, { ...env, DATA_DIR: path.join(file, 'data') });
      await expectFailure(failed, 'cannot be written by this user (ENOTDIR); set DATA_DIR');
      await expectNothingLeft(failed, env, [file]);
    });

    it('development secrets that are not JSON', async () => {
      const dataDir = path.join(scratch, 'bad-secrets');
      await mkdir(dataDir, { recursive: true });
      await writeFile(path.join(dataDir, 'development-secrets.json'), '{ "serviceToken": ', { mode: 0o600 });
      const failed = run(checkout, { ...env, DATA_DIR: dataDir });
      await expectFailure(failed, 'development-secrets.json is not valid JSON; delete it');
      await expectNothingLeft(failed, env, [dataDir]);
    });

    it('a cluster directory that holds something else: PostgreSQL cannot be initialised there', async () => {
      const dataDir = path.join(scratch, 'not-a-cluster');
      await mkdir(path.join(dataDir, 'postgres'), { recursive: true });
      await writeFile(path.join(dataDir, 'postgres', 'notes.txt'), 'mine\n');
      const failed = run(checkout, { ...env, DATA_DIR: dataDir });
      await expectFailure(failed, 'is not empty but holds no PostgreSQL cluster');
      await expectNothingLeft(failed, env, [dataDir]);
    });

    it('PostgreSQL failing to start (a broken postgresql.conf)', async () => {
      // The cluster the Ctrl-C case made and the start after it completed.
      const dataDir = path.join(scratch, 'interrupted-initdb');
      await appendFile(path.join(dataDir, 'postgres', 'postgresql.conf'), '\nnot_a_setting = on\n');
      const failed = run(checkout, { ...env, DATA_DIR: dataDir });
      await expectFailure(failed, 'The embedded PostgreSQL stopped while starting');
      await expectNothingLeft(failed, env, [dataDir]);
    });

    it('a service refusing its configuration after PostgreSQL started (SANDBOX_DELAY_MS)', async () => {
      const dataDir = path.join(scratch, 'interrupted-services');
      const failed = run(checkout, { ...env, DATA_DIR: dataDir, SANDBOX_DELAY_MS: 'soon' });
      await expectFailure(failed, 'SANDBOX_DELAY_MS');
      await expectNothingLeft(failed, env, [dataDir]);
    });
  });
});
