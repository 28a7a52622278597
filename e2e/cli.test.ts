import { execFile } from 'node:child_process';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { randomBytes } from 'node:crypto';
import { expect } from 'chai';
import { startSystem, type TestSystem } from '@payments/testkit';

const CLI = path.resolve(import.meta.dirname, '../cli/bin/payments.js');

describe('the payments CLI against the running system', function () {
  this.timeout(120_000);
  let system: TestSystem;
  let configHome: string;
  let accountId: string;
  const username = `cli_${randomBytes(4).toString('hex')}`;

  const payments = async (...args: string[]) => {
    try {
      const { stdout, stderr } = await promisify(execFile)(process.execPath, [CLI, ...args], {
        env: {
          ...process.env,
          PAYMENTS_API_URL: system.gatewayUrl,
          XDG_CONFIG_HOME: configHome,
          NO_COLOR: '1',
        },
        timeout: 60_000,
      });
      return { code: 0, stdout: stdout.trim(), stderr: stderr.trim() };
    } catch (error) {
      const failure = error as { code: number; stdout: string; stderr: string };
      return { code: failure.code, stdout: failure.stdout.trim(), stderr: failure.stderr.trim() };
    }
  };

  before(async () => {
    // The provider sandbox confirms deposits, so the CLI's wait ends with the credited balance.
    system = await startSystem({ serviceEnv: { 'provider-sandbox': { SANDBOX_DELAY_MS: '100' } } });
    configHome = await mkdtemp(path.join(tmpdir(), 'payments-cli-'));
  });

  let failures = 0;
  afterEach(function () {
    if (this.currentTest?.state === 'failed') failures += 1;
  });

  after(async () => {
    if (failures > 0) console.error(system?.logs());
    await system?.stop();
    await rm(configHome, { recursive: true, force: true });
  });

  it('registers and logs in, keeping the token in a file only the user can read', async () => {
    const password = `pw-${randomBytes(6).toString('hex')}`;
    const registered = await payments(
      'register',
      '--username',
      username,
      '--email',
      `${username}@example.com`,
      '--password',
      password,
    );
    expect(registered.code, registered.stderr).to.equal(0);
    const login = await payments('login', '--username', username, '--password', password);
    expect(login.code, login.stderr).to.equal(0);
    const session = await stat(path.join(configHome, 'payments', 'session.json'));
    expect(session.mode & 0o777).to.equal(0o600);
  });

  it('creates an account and prints its id', async () => {
    const created = await payments('account', 'create', 'USD');
    expect(created.code, created.stderr).to.equal(0);
    expect(created.stdout).to.match(/^[0-9a-f-]{36}$/);
    accountId = created.stdout;
  });

  it('deposits, waits for the confirmation and prints the documented line', async () => {
    const deposit = await payments('deposit', accountId, '100');
    expect(deposit.code, deposit.stderr).to.equal(0);
    expect(deposit.stdout).to.equal(`Deposited 100.00 to account ${accountId}. New balance: 100.00`);
  });

  it('prints the balance line', async () => {
    const balance = await payments('balance', accountId);
    expect(balance.code, balance.stderr).to.equal(0);
    expect(balance.stdout).to.equal(`Account ${accountId} balance: 100.00 USD`);
  });

  it('credits once when a deposit is retried with the same idempotency key', async () => {
    const key = `retry-${randomBytes(6).toString('hex')}`;
    const first = await payments('deposit', accountId, '0.10', '--idempotency-key', key);
    const second = await payments('deposit', accountId, '0.10', '--idempotency-key', key);
    expect(first.stdout).to.equal(`Deposited 0.10 to account ${accountId}. New balance: 100.10`);
    expect(second.code, second.stderr).to.equal(0);
    const balance = await payments('balance', accountId);
    expect(balance.stdout).to.equal(`Account ${accountId} balance: 100.10 USD`);
  });

  it('prints the problem detail and exits with the not-found code for an unknown account', async () => {
    const missing = await payments('balance', '00000000-0000-4000-8000-000000000000');
    expect(missing.code).to.equal(4);
    expect(missing.stderr).to.match(/not found/i);
  });
});
