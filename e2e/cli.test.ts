import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { expect } from 'chai';
import { closedPort, runPayments, runPaymentsOnTerminal, useSystem } from '@payments/testkit';
import { createPaymentsClient } from '@payments/client';

describe('the payments CLI against the running system', function () {
  this.timeout(120_000);
  let configHome: string;
  let accountId: string;
  const username = `cli_${randomBytes(4).toString('hex')}`;

  let password: string;
  let secondAccountId: string;
  const environment = () => ({ PAYMENTS_API_URL: system.gatewayUrl, XDG_CONFIG_HOME: configHome });
  const payments = async (...args: string[]) => {
    const run = await runPayments(args, environment());
    return { code: run.code, stdout: run.stdout.trim(), stderr: run.stderr.trim() };
  };

  // The provider sandbox confirms deposits, so the CLI's wait ends with the credited balance.
  const system = useSystem({ serviceEnv: { 'provider-sandbox': { SANDBOX_DELAY_MS: '100' } } });

  before(async () => {
    configHome = await mkdtemp(path.join(tmpdir(), 'payments-cli-'));
  });

  after(async () => {
    await rm(configHome, { recursive: true, force: true });
  });

  it('registers and logs in, keeping the token in a file only the user can read', async () => {
    password = `pw-${randomBytes(6).toString('hex')}`;
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

  it('prints --json output that matches the API', async () => {
    const printed = await payments('balance', accountId, '--json');
    expect(printed.code, printed.stderr).to.equal(0);
    const session = JSON.parse(await readFile(path.join(configHome, 'payments', 'session.json'), 'utf8'));
    const fromApi = await createPaymentsClient({
      baseUrl: system.gatewayUrl,
      token: session.token,
    }).balances.get(accountId);
    expect(JSON.parse(printed.stdout)).to.deep.equal(fromApi);
  });

  it('shows no payout account before one is linked', async () => {
    const none = await payments('payout-account', 'show');
    expect(none.code).to.equal(4);
    expect(none.stderr).to.match(/payout account not found/i);
  });

  it('transfers, withdraws (the development system linking a payout account first) and lists the history', async () => {
    const second = await payments('account', 'create', 'USD');
    secondAccountId = second.stdout;
    const transfer = await payments('transfer', accountId, secondAccountId, '30');
    expect(transfer.code, transfer.stderr).to.equal(0);
    expect(transfer.stdout).to.equal(
      `Transferred 30.00 from account ${accountId} to account ${secondAccountId}. New balance: 70.10`,
    );
    const withdraw = await payments('withdraw', secondAccountId, '5.50');
    expect(withdraw.code, withdraw.stderr).to.equal(0);
    expect(withdraw.stdout).to.equal(`Withdrew 5.50 from account ${secondAccountId}. New balance: 24.50`);
    const history = await payments('transactions', '--account', secondAccountId, '--json');
    const types = (JSON.parse(history.stdout).data as { type: string; status: string }[]).map(
      (t) => `${t.type}:${t.status}`,
    );
    expect(types).to.have.members(['withdrawal:completed', 'transfer:completed']);
  });

  it('links the payout account at the provider once: link keeps the one the withdrawal linked', async () => {
    const shown = await payments('payout-account', 'show', '--json');
    expect(shown.code, shown.stderr).to.equal(0);
    const { account } = JSON.parse(shown.stdout) as { account: string };
    expect(account).to.match(/^acct_/);
    const linked = await payments('payout-account', 'link');
    expect(linked.code, linked.stderr).to.equal(0);
    expect(linked.stdout.split('\n')[0]).to.equal(`Linked payout account ${account} (stripe).`);
  });

  it('prints the statement as a table and writes it as CSV', async () => {
    const printed = await payments('statement', accountId, '--from', '2020-01-01');
    expect(printed.code, printed.stderr).to.equal(0);
    const lines = printed.stdout.split('\n');
    expect(lines[0]).to.match(
      new RegExp(`^Statement of account ${accountId} \\(USD\\) from 2020-01-01T00:00:00.000Z to `),
    );
    expect(lines[1]).to.equal('Opening balance: 0.00');
    const rows = lines
      .filter((line) => /│ \d{4}-/.test(line))
      .map((line) => line.split('│').map((c) => c.trim()));
    expect(rows.map((cells) => cells.slice(2, 5))).to.deep.equal([
      ['deposit', '100.00', '100.00'],
      ['deposit', '0.10', '100.10'],
      ['transfer', '-30.00', '70.10'],
    ]);
    expect(rows[2]?.[6]).to.equal(secondAccountId);
    expect(lines.at(-1)).to.equal('Closing balance: 70.10');

    const file = path.join(configHome, 'statement.csv');
    const written = await payments('statement', accountId, '--from', '2020-01-01', '--csv', file);
    expect(written.code, written.stderr).to.equal(0);
    expect(written.stdout).to.equal(`Wrote 3 entries to ${file}.`);
    const csv = (await readFile(file, 'utf8')).split('\r\n').filter(Boolean);
    expect(csv[0]).to.equal(
      'created_at,entry_id,transaction_id,type,counterparty_account_id,amount,balance,currency',
    );
    expect(csv.slice(1).map((row) => row.split(',').slice(3, 8).join(','))).to.deep.equal([
      'opening_balance,,,0.00,USD',
      'deposit,,100.00,100.00,USD',
      'deposit,,0.10,100.10,USD',
      `transfer,${secondAccountId},-30.00,70.10,USD`,
      'closing_balance,,,70.10,USD',
    ]);

    const past = await payments('balance', accountId, '--at', '2020-01-01');
    expect(past.stdout).to.equal(`Account ${accountId} balance at 2020-01-01T00:00:00.000Z: 0.00 USD`);
  });

  it('exits 5 with the detail when the business rules refuse a withdrawal', async () => {
    const refused = await payments('withdraw', secondAccountId, '1000');
    expect(refused.code).to.equal(5);
    expect(refused.stderr).to.match(/available balance/i);
  });

  it('exits 2 for an amount the currency cannot hold, before sending anything', async () => {
    const refused = await payments('deposit', accountId, '1.001');
    expect(refused.code).to.equal(2);
  });

  it('exits 6 when the API cannot be reached', async () => {
    const closed = await closedPort();
    const run = await runPayments(['balance', accountId], {
      ...environment(),
      PAYMENTS_API_URL: `http://127.0.0.1:${closed}`,
    });
    expect(run.code).to.equal(6);
  });

  it('logs in through the no-echo password prompt on a terminal', async () => {
    const run = await runPaymentsOnTerminal(['login', '--username', username], environment(), [
      { prompt: 'Password', input: password },
    ]);
    expect(run.code, run.stdout).to.equal(0);
    expect(run.stdout).to.not.contain(password);
    expect((await payments('whoami')).stdout).to.contain(username);
  });

  it('prints the problem detail and exits with the not-found code for an unknown account', async () => {
    const missing = await payments('balance', '00000000-0000-4000-8000-000000000000');
    expect(missing.code).to.equal(4);
    expect(missing.stderr).to.match(/not found/i);
  });

  it('exits 3 and says to log in again once logged out', async () => {
    expect((await payments('logout')).code).to.equal(0);
    const after = await payments('balance', accountId);
    expect(after.code).to.equal(3);
    expect(after.stderr).to.match(/log in/i);
  });
});
