import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { chmod, mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { answers, defaultPorts } from '@payments/infra';
import { eventually, freePortBlock, pnpmCommand } from '@payments/testkit';
import { rawApi } from '@payments/test-support';
import { depositThrough, expectBalance } from './support/pnpm-start.js';

/** Whether any process is left in the process group `group`. */
function groupAlive(group: number): boolean {
  try {
    process.kill(-group, 0);
    return true;
  } catch {
    return false;
  }
}

const processesIn = (group: number) =>
  execFileSync('ps', ['-o', 'pid,args', '-g', String(group)], { encoding: 'utf8' });

/** Processes whose command line names `directory`: the embedded PostgreSQL runs in a process group of its own. */
const processesUsing = (directory: string) =>
  execFileSync('ps', ['-eo', 'pid=,args='], { encoding: 'utf8' })
    .split('\n')
    .filter((line) => line.includes(directory))
    .map((line) => ({ pid: Number(line.trim().split(' ')[0]), line: line.trim() }));

describe('pnpm start in embedded mode (no PostgreSQL or RabbitMQ to be found)', function () {
  this.timeout(180_000);
  let child: ChildProcess;
  let output = '';
  let dataDir: string;
  let gatewayUrl: string;
  let ledgerUrl: string;
  let sandboxUrl: string;
  let listeningPorts: number[];
  let exit: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;

  before(async () => {
    dataDir = await mkdtemp(path.join(tmpdir(), 'payments-embedded-'));
    // PostgreSQL runs as its own OS user when we are root, and must be able to reach its data directory.
    await chmod(dataDir, 0o755);
    // The gateway at base, the services at base + 2 … base + 7 (SERVICES_PORT_BASE + 1 …), PostgreSQL after them,
    // and a port of the block that nothing listens on.
    const base = await freePortBlock(10);
    const [gatewayPort, servicesBase, postgresPort, closed] = [base, base + 1, base + 8, base + 9];
    gatewayUrl = `http://127.0.0.1:${gatewayPort}`;
    ledgerUrl = `http://127.0.0.1:${servicesBase + 2}`;
    sandboxUrl = `http://127.0.0.1:${servicesBase + 5}`;
    listeningPorts = [...Object.values(defaultPorts(gatewayPort, servicesBase)), postgresPort];
    const [command, args] = pnpmCommand();
    // As typed in a terminal: pnpm leads its own process group, which is what Ctrl-C signals.
    child = spawn(command, [...args, 'start'], {
      cwd: path.resolve(import.meta.dirname, '..'),
      detached: true,
      env: {
        ...process.env,
        DATABASE_URL: '',
        AMQP_URL: '',
        // Point the probes at a port where nothing listens, as on a machine without the services.
        PAYMENTS_PROBE_POSTGRES: `127.0.0.1:${closed}`,
        PAYMENTS_PROBE_AMQP: `127.0.0.1:${closed}`,
        DATA_DIR: dataDir,
        GATEWAY_PORT: String(gatewayPort),
        SERVICES_PORT_BASE: String(servicesBase),
        EMBEDDED_POSTGRES_PORT: String(postgresPort),
        SANDBOX_DELAY_MS: '100',
        LOG_LEVEL: 'warn',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
    exit = new Promise((resolve) => child.once('close', (code, signal) => resolve({ code, signal })));
    await eventually(
      async () => output,
      (text) => text.includes('Gateway listening') || child.exitCode !== null,
      { timeoutMs: 120_000, intervalMs: 200 },
    );
    if (!output.includes('Gateway listening')) throw new Error(`pnpm start did not come up:\n${output}`);
  });

  let failures = 0;
  afterEach(function () {
    if (this.currentTest?.state === 'failed') failures += 1;
  });

  after(async () => {
    if (failures > 0) console.error(output);
    if (child.pid !== undefined && groupAlive(child.pid)) {
      process.kill(-child.pid, 'SIGINT');
      await Promise.race([exit, new Promise((resolve) => setTimeout(resolve, 30_000))]);
      if (groupAlive(child.pid)) process.kill(-child.pid, 'SIGKILL');
    }
    for (const { pid } of processesUsing(dataDir)) process.kill(pid, 'SIGKILL');
    await rm(dataDir, { recursive: true, force: true });
  });

  it('says it chose embedded mode and where the gateway listens', () => {
    expect(output).to.match(/Starting in embedded mode/);
    expect(output).to.contain(`Gateway listening on ${gatewayUrl} (embedded mode)`);
  });

  it('says loudly that it is a development system, and runs with secrets it generated for this data directory', async () => {
    expect(output).to.contain('DEVELOPMENT SYSTEM: not for real money');
    expect(output).to.contain('PAYS DEPOSITS AND PAYOUTS');
    const file = path.join(dataDir, 'development-secrets.json');
    expect((await stat(file)).mode & 0o777).to.equal(0o600);
    const secrets = JSON.parse(await readFile(file, 'utf8')) as {
      serviceToken: string;
      webhookSecret: string;
      sandboxApiKey: string;
      sandboxApiUrl: string;
    };
    expect(secrets.serviceToken).to.match(/^[0-9a-f]{64}$/);
    // A tool finds the sandbox's API and the key it takes in the one file.
    expect(secrets.sandboxApiUrl).to.equal(sandboxUrl);
    const balance = await fetch(`${secrets.sandboxApiUrl}/v1/balance`, {
      headers: { authorization: `Bearer ${secrets.sandboxApiKey}` },
    });
    expect(balance.status).to.equal(200);
    expect(((await balance.json()) as { object: string }).object).to.equal('balance');
    const ledger = rawApi(ledgerUrl);
    expect((await ledger.get('/internal/audit')).status).to.equal(401);
    const audit = await ledger.get('/internal/audit', secrets.serviceToken);
    expect(audit.status).to.equal(200);
    const unsigned = await rawApi(gatewayUrl).post('/webhook/payment', {
      payment_id: 'x',
      status: 'completed',
    });
    expect(unsigned.status).to.equal(404);
  });

  it('serves the deposit flow, confirmed by the provider sandbox over the in-memory bus', async () => {
    const gatewayPort = new URL(gatewayUrl).port;
    const { token, accountId } = await depositThrough(gatewayPort);
    await expectBalance(gatewayPort, token, accountId);
  });

  it('stops everything cleanly on Ctrl-C in the terminal: exit status 0, no ELIFECYCLE, no process left', async () => {
    const group = child.pid as number;
    process.kill(-group, 'SIGINT');
    expect(await exit).to.deep.equal({ code: 0, signal: null });
    expect(output).to.contain('SIGINT: stopping…');
    expect(output).to.contain('Stopped.');
    expect(output).not.to.contain('ELIFECYCLE');
    expect(output).not.to.match(/Command failed/i);
    for (const port of listeningPorts)
      expect(await answers('127.0.0.1', port), `port ${port}`).to.equal(false);
    expect(processesUsing(dataDir).map(({ line }) => line)).to.deep.equal([]);
    // A helper (tsx's esbuild) may take a moment to notice its parent has gone; a service would not leave.
    const left = await eventually(
      async () => groupAlive(group),
      (alive) => !alive,
      { timeoutMs: 5_000, intervalMs: 100 },
    );
    expect(left, left ? processesIn(group) : '').to.equal(false);
    // Nothing went wrong while stopping: the database outlived the services that use it.
    const stopping = output.slice(output.indexOf('SIGINT: stopping…'));
    expect(stopping).not.to.match(/"level":(40|50|60)/);
  });
});
