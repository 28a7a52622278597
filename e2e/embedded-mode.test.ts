import { spawn, type ChildProcess } from 'node:child_process';
import { chmod, mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { eventually, freePort, freePortBlock } from '@payments/testkit';
import { apiClient } from './api-client.js';

describe('pnpm start in embedded mode (no PostgreSQL or RabbitMQ to be found)', function () {
  this.timeout(180_000);
  let child: ChildProcess;
  let output = '';
  let dataDir: string;
  let gatewayUrl: string;
  let ledgerUrl: string;

  before(async () => {
    dataDir = await mkdtemp(path.join(tmpdir(), 'payments-embedded-'));
    // PostgreSQL runs as its own OS user when we are root, and must be able to reach its data directory.
    await chmod(dataDir, 0o755);
    // The gateway at base, the services at base + 2 … base + 6 (SERVICES_PORT_BASE + 1 …), PostgreSQL after them.
    const base = await freePortBlock(8);
    const [gatewayPort, servicesBase, postgresPort] = [base, base + 1, base + 7];
    const closed = await freePort();
    gatewayUrl = `http://127.0.0.1:${gatewayPort}`;
    ledgerUrl = `http://127.0.0.1:${servicesBase + 2}`;
    child = spawn(process.execPath, ['--conditions=development', '--import', 'tsx', 'scripts/start.ts'], {
      cwd: path.resolve(import.meta.dirname, '..'),
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
    if (child.exitCode === null) child.kill('SIGKILL');
    await rm(dataDir, { recursive: true, force: true });
  });

  it('says it chose embedded mode and where the gateway listens', () => {
    expect(output).to.match(/Starting in embedded mode/);
    expect(output).to.contain(`Gateway listening on ${gatewayUrl} (embedded mode)`);
  });

  it('says loudly that it is a development system, and runs with secrets it generated for this data directory', async () => {
    expect(output).to.contain('DEVELOPMENT SYSTEM: not for real money');
    expect(output).to.contain('CONFIRMS EVERY DEPOSIT AND PAYOUT');
    const file = path.join(dataDir, 'development-secrets.json');
    expect((await stat(file)).mode & 0o777).to.equal(0o600);
    const secrets = JSON.parse(await readFile(file, 'utf8')) as {
      serviceToken: string;
      webhookSecret: string;
    };
    expect(secrets.serviceToken).to.match(/^[0-9a-f]{64}$/);
    expect((await fetch(`${ledgerUrl}/internal/audit`)).status).to.equal(401);
    const audit = await fetch(`${ledgerUrl}/internal/audit`, {
      headers: { authorization: `Bearer ${secrets.serviceToken}` },
    });
    expect(audit.status).to.equal(200);
    const unsigned = await apiClient(gatewayUrl).post('/webhook/payment', {
      payment_id: 'x',
      status: 'completed',
    });
    expect(unsigned.status).to.equal(404);
  });

  it('serves the deposit flow, confirmed by the provider sandbox over the in-memory bus', async () => {
    const api = apiClient(gatewayUrl);
    const { token } = await api.signUp();
    const account = await api.post('/account', { currency: 'USD' }, token);
    expect(account.status, account.text).to.equal(201);
    const deposit = await api.post(
      `/account/${account.body.id}/deposit`,
      { amount: '42.10', currency: 'USD' },
      token,
    );
    expect(deposit.status, deposit.text).to.equal(202);
    const transaction = await eventually(
      async () => (await api.get(`/transaction/${deposit.body.id}`, token)).body,
      (body) => body.status !== 'pending',
    );
    expect(transaction.status).to.equal('completed');
    const balance = await api.get(`/account/${account.body.id}/balance`, token);
    expect(balance.body).to.include({ balance: 42.1, currency: 'USD' });
  });

  it('stops everything cleanly on Ctrl-C', async () => {
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    child.kill('SIGINT');
    expect(await exited).to.equal(0);
    expect(output).to.contain('Stopped.');
    const stillUp = await fetch(`${gatewayUrl}/health`).then(
      () => true,
      () => false,
    );
    expect(stillUp).to.equal(false);
  });
});
