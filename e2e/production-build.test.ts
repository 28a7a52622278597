import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { promisify } from 'node:util';
import { expect } from 'chai';
import { SERVICE_NAMES, serviceCommand, serviceDirectory } from '@payments/infra';
import { eventually, startSystem, type TestSystem } from '@payments/testkit';
import { apiClient, type ApiClient } from './api-client.js';
import { expectBooksBalance } from './support/ledger-audit.js';

const run = promisify(execFile);
const ROOT = path.resolve(import.meta.dirname, '..');

describe('the production build: pnpm build, then every service on plain node from dist/', function () {
  // A full `tsc -b` takes ~15 s on two idle cores (an up-to-date tree a few); the system starts in seconds more.
  this.timeout(300_000);
  let system: TestSystem;
  let api: ApiClient;
  let buildOutput: string;

  before(async () => {
    const scripts = JSON.parse(await readFile(path.join(ROOT, 'package.json'), 'utf8')).scripts as Record<
      string,
      string
    >;
    const [tool, ...args] = scripts.build?.split(' ') ?? [];
    expect(tool, 'pnpm build runs tsc').to.equal('tsc');
    const tsc = createRequire(path.join(ROOT, 'package.json')).resolve('typescript/bin/tsc');
    const built = await run(process.execPath, [tsc, ...args], { cwd: ROOT, timeout: 240_000 });
    buildOutput = built.stdout + built.stderr;
    system = await startSystem({
      runtime: 'compiled',
      // Nothing inherited may bring tsx or the sources back (`--import`, `--conditions=development`).
      env: { NODE_OPTIONS: '' },
    });
    api = apiClient(system.gatewayUrl);
  });

  let failures = 0;
  afterEach(function () {
    if (this.currentTest?.state === 'failed') failures += 1;
  });
  after(async () => {
    if (failures > 0 && system) console.error(system.logs());
    await system?.stop();
  });

  it('compiles every package without a diagnostic, into dist/ folders git ignores', async () => {
    expect(buildOutput).to.equal('');
    const { stdout } = await run('git', ['ls-files', '--others', '--exclude-standard'], { cwd: ROOT });
    expect(stdout.split('\n').filter((file) => file.includes('/dist/'))).to.deep.equal([]);
  });

  it('starts each service as `node <package>/dist/main.js`: no tsx, no loader, no development condition', () => {
    for (const service of SERVICE_NAMES) {
      expect(serviceCommand(service, 'compiled')).to.deep.equal([
        path.join(serviceDirectory(service), 'dist/main.js'),
      ]);
    }
    // The contrast: development runs the sources through tsx.
    expect(serviceCommand('ledger', 'sources')).to.include('--conditions=development');
  });

  it('runs a deposit through the gateway to completion, confirmed by the sandbox, with the books balanced', async () => {
    const { token } = await api.signUp();
    const account = await api.post('/account', { currency: 'EUR' }, token);
    expect(account.status, account.text).to.equal(201);
    const accepted = await api.post(
      `/account/${account.body.id}/deposit`,
      { amount: '42.50', currency: 'EUR' },
      token,
    );
    expect(accepted.status, accepted.text).to.equal(202);
    const transaction = await eventually(
      () => api.get(`/transaction/${accepted.body.id}`, token),
      (response) => response.body?.status === 'completed',
      { timeoutMs: 20_000 },
    );
    expect(transaction.body).to.include({ status: 'completed', amount: 42.5, currency: 'EUR' });
    const balance = await api.get(`/account/${account.body.id}/balance`, token);
    expect(balance.body).to.include({ balance: 42.5, currency: 'EUR' });
    await expectBooksBalance(system.urls.ledger);
  });

  it('finds what the code reads besides its own modules: the currency data files and the Swagger UI assets', async () => {
    const chf = await api.get('/api/currencies/chf');
    expect(chf.status, chf.text).to.equal(200);
    expect(chf.body).to.include({ code: 'CHF', name: 'Swiss Franc' });
    const docs = await api.get('/docs/assets/swagger-ui-bundle.js');
    expect(docs.status).to.equal(200);
    expect(docs.text.length).to.be.greaterThan(100_000);
  });
});
