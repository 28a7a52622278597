import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { CURRENT_VERSION } from '@payments/contracts/versions';
import { closedPort, PAYMENTS_BIN, runPayments, runPaymentsOnTerminal } from '@payments/testkit';
import { DECLINED_AMOUNT, startFakeGateway, STUCK_AMOUNT, type FakeGateway } from './fake-gateway.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

describe('payments CLI', function () {
  this.timeout(30_000);
  let gateway: FakeGateway;
  let home: string;
  const payments = (...args: string[]) =>
    runPayments(args, { XDG_CONFIG_HOME: home, PAYMENTS_API_URL: gateway.url });
  const depositsTo = (id: string) =>
    gateway.requests.filter((r) => r.method === 'POST' && r.path === `/account/${id}/deposit`);
  let account: string;

  before(async () => {
    gateway = await startFakeGateway();
    home = await mkdtemp(join(tmpdir(), 'payments-cli-'));
    const registered = await payments(
      'register',
      '--username',
      'alice',
      '--email',
      'alice@example.com',
      '--password',
      's3cret-pass',
    );
    expect(registered.code, registered.stderr).to.equal(0);
    const login = await payments('login', '--username', 'alice', '--password', 's3cret-pass');
    expect(login.code, login.stderr).to.equal(0);
    const created = await payments('account', 'create', 'USD');
    account = created.stdout.trim();
  });
  after(async () => {
    await gateway.close();
    await rm(home, { recursive: true, force: true });
  });

  describe('user update', () => {
    it('sends the current password from PAYMENTS_PASSWORD with a new e-mail', async () => {
      const run = await runPayments(['user', 'update', '--email', 'alice.new@example.com'], {
        XDG_CONFIG_HOME: home,
        PAYMENTS_API_URL: gateway.url,
        PAYMENTS_PASSWORD: 's3cret-pass',
      });
      expect(run.code, run.stderr).to.equal(0);
      expect(run.stdout).to.equal('Updated alice <alice.new@example.com>.\n');
      const sent = gateway.requests.filter((r) => r.method === 'PUT').at(-1);
      expect(sent?.body).to.deep.equal({ email: 'alice.new@example.com', current_password: 's3cret-pass' });
      const back = await runPayments(['user', 'update', '--email', 'alice@example.com'], {
        XDG_CONFIG_HOME: home,
        PAYMENTS_API_URL: gateway.url,
        PAYMENTS_PASSWORD: 's3cret-pass',
      });
      expect(back.code, back.stderr).to.equal(0);
    });

    it('does not ask for the current password to change only the username', async () => {
      const run = await payments('user', 'update', '--username', 'alice');
      expect(run.code, run.stderr).to.equal(0);
      expect(gateway.requests.filter((r) => r.method === 'PUT').at(-1)?.body).to.deep.equal({
        username: 'alice',
      });
    });
  });

  describe('sign-up and session', () => {
    it('registers a user and says so', async () => {
      const run = await payments(
        'register',
        '--username',
        'bob',
        '--email',
        'bob@example.com',
        '--password',
        'pw-bob-123',
      );
      expect(run.code).to.equal(0);
      expect(run.stdout).to.match(/^Registered bob \(user id [0-9a-f-]{36}\)\.\n$/);
    });

    it('keeps the token in a file only its owner can read (0600)', async () => {
      const file = join(home, 'payments', 'session.json');
      expect((await stat(file)).mode & 0o777).to.equal(0o600);
      expect((await stat(join(home, 'payments'))).mode & 0o777).to.equal(0o700);
      const session = JSON.parse(await readFile(file, 'utf8')) as { token: string; expires_at: number };
      expect(session.token).to.be.a('string').and.not.equal('');
      expect(session.expires_at).to.be.above(Date.now() / 1000);
    });

    it('logs in with the password from PAYMENTS_PASSWORD and by e-mail', async () => {
      const run = await runPayments(['login', '--email', 'alice@example.com'], {
        XDG_CONFIG_HOME: home,
        PAYMENTS_API_URL: gateway.url,
        PAYMENTS_PASSWORD: 's3cret-pass',
      });
      expect(run.code, run.stderr).to.equal(0);
      expect(run.stdout).to.equal('Logged in as alice@example.com. The session lasts 15 minutes.\n');
      expect(gateway.requests.at(-1)?.body).to.deep.equal({
        email: 'alice@example.com',
        password: 's3cret-pass',
      });
    });

    it('asks for the password on a terminal without echoing it', async () => {
      const run = await runPaymentsOnTerminal(
        ['login', '--username', 'alice'],
        { XDG_CONFIG_HOME: home, PAYMENTS_API_URL: gateway.url },
        [{ prompt: 'Password: ', input: 's3cret-pass' }],
      );
      expect(run.code, run.stdout + run.stderr).to.equal(0);
      expect(run.stdout).to.include('Password: ');
      expect(run.stdout).to.include('Logged in as alice.');
      expect(run.stdout).not.to.include('s3cret-pass');
    });

    it('refreshes a token that is about to expire before using it', async () => {
      const other = await mkdtemp(join(tmpdir(), 'payments-cli-'));
      try {
        const env = {
          XDG_CONFIG_HOME: other,
          PAYMENTS_API_URL: gateway.url,
          PAYMENTS_PASSWORD: 'pw-short-1',
        };
        await runPayments(['register', '--username', 'short-lived', '--email', 'short@example.com'], env);
        await runPayments(['login', '--username', 'short-lived'], env);
        const file = join(other, 'payments', 'session.json');
        const before = JSON.parse(await readFile(file, 'utf8')) as { token: string; expires_at: number };
        const run = await runPayments(['whoami'], env);
        expect(run.code, run.stderr).to.equal(0);
        const after = JSON.parse(await readFile(file, 'utf8')) as { token: string; expires_at: number };
        expect(after.token).not.to.equal(before.token);
        expect(after.expires_at - before.expires_at).to.be.within(800, 900);
        expect((await stat(file)).mode & 0o777).to.equal(0o600);
        expect(gateway.requests.at(-1)?.headers.authorization).to.equal(`Bearer ${after.token}`);
      } finally {
        await rm(other, { recursive: true, force: true });
      }
    });

    it('refuses to guess a password without a terminal (usage, exit 2)', async () => {
      const run = await payments('login', '--username', 'alice');
      expect(run.code).to.equal(2);
      expect(run.stderr).to.include('No password given');
    });

    it('exits 3 with the API detail on wrong credentials', async () => {
      const run = await payments('login', '--username', 'alice', '--password', 'wrong');
      expect(run.code).to.equal(3);
      expect(run.stderr).to.include('Invalid username or password');
    });

    it('shows who is logged in', async () => {
      const run = await payments('whoami');
      expect(run.code, run.stderr).to.equal(0);
      expect(run.stdout).to.match(/^alice <alice@example\.com> \(user id [0-9a-f-]{36}, role user\)\n$/);
    });

    it('answers the same through the installed command, bin/payments.js (the sources, in a checkout)', async () => {
      const env = { XDG_CONFIG_HOME: home, PAYMENTS_API_URL: gateway.url };
      const installed = await runPayments(['whoami'], env, PAYMENTS_BIN);
      expect(installed.code, installed.stderr).to.equal(0);
      expect(installed.stdout).to.equal((await payments('whoami')).stdout);
    });
  });

  describe('accounts and money', () => {
    it('creates an account and prints only its id', async () => {
      expect(account).to.match(UUID);
      const run = await payments(
        'account',
        'create',
        'EUR',
        '--metadata',
        'purpose=savings',
        '--metadata',
        'note=a=b',
      );
      expect(run.stdout).to.match(/^[0-9a-f-]{36}\n$/);
      expect(gateway.requests.at(-1)?.body).to.deep.equal({
        currency: 'EUR',
        metadata: { purpose: 'savings', note: 'a=b' },
      });
    });

    it('deposits, waits for completion and prints the documented line', async () => {
      const run = await payments('deposit', account, '100');
      expect(run.code, run.stderr).to.equal(0);
      expect(run.stdout).to.equal(`Deposited 100.00 to account ${account}. New balance: 100.00\n`);
      const sent = depositsTo(account).at(-1);
      expect(sent?.body).to.deep.equal({ amount: 100, currency: 'USD' });
      expect(sent?.headers['idempotency-key']).to.match(UUID);
    });

    it('prints the documented balance line', async () => {
      const run = await payments('balance', account);
      expect(run.code, run.stderr).to.equal(0);
      expect(run.stdout).to.equal(`Account ${account} balance: 100.00 USD\n`);
    });

    it('keeps decimal amounts exact: 0.1 then 0.2 make 0.30', async () => {
      const id = (await payments('account', 'create', 'USD')).stdout.trim();
      expect((await payments('deposit', id, '0.1')).stdout).to.equal(
        `Deposited 0.10 to account ${id}. New balance: 0.10\n`,
      );
      expect((await payments('deposit', id, '0.2')).stdout).to.equal(
        `Deposited 0.20 to account ${id}. New balance: 0.30\n`,
      );
      expect((await payments('balance', id)).stdout).to.equal(`Account ${id} balance: 0.30 USD\n`);
    });

    it('prints two decimals for a currency without minor units and three for one that has three', async () => {
      const yen = (await payments('account', 'create', 'JPY')).stdout.trim();
      expect((await payments('deposit', yen, '500')).stdout).to.equal(
        `Deposited 500.00 to account ${yen}. New balance: 500.00\n`,
      );
      const dinar = (await payments('account', 'create', 'KWD')).stdout.trim();
      expect((await payments('deposit', dinar, '1.234')).stdout).to.equal(
        `Deposited 1.234 to account ${dinar}. New balance: 1.234\n`,
      );
      expect((await payments('balance', dinar)).stdout).to.equal(`Account ${dinar} balance: 1.234 KWD\n`);
    });

    it('sends the given Idempotency-Key and reuses it on a retry, which credits once', async () => {
      const id = (await payments('account', 'create', 'USD')).stdout.trim();
      const first = await payments('deposit', id, '10', '--idempotency-key', 'retry-key-1');
      const second = await payments('deposit', id, '10', '--idempotency-key', 'retry-key-1');
      expect(first.stdout).to.equal(`Deposited 10.00 to account ${id}. New balance: 10.00\n`);
      expect(second.stdout).to.equal(`Deposited 10.00 to account ${id}. New balance: 10.00\n`);
      expect(depositsTo(id).map((r) => r.headers['idempotency-key'])).to.deep.equal([
        'retry-key-1',
        'retry-key-1',
      ]);
    });

    it('generates a fresh Idempotency-Key for each new command', async () => {
      const id = (await payments('account', 'create', 'USD')).stdout.trim();
      await payments('deposit', id, '1');
      await payments('deposit', id, '1');
      const keys = depositsTo(id).map((r) => r.headers['idempotency-key']);
      expect(keys).to.have.length(2);
      expect(keys[0]).not.to.equal(keys[1]);
    });

    it('returns at once with --no-wait, printing the pending transaction', async () => {
      const run = await payments('deposit', account, '5', '--no-wait');
      expect(run.code, run.stderr).to.equal(0);
      expect(run.stdout).to.match(/^Deposit accepted: transaction [0-9a-f-]{36} is pending\.\n$/);
    });

    it('prints the reason and exits 1 when the transaction fails', async () => {
      const run = await payments('deposit', account, String(DECLINED_AMOUNT));
      expect(run.code).to.equal(1);
      expect(run.stdout).to.equal('');
      expect(run.stderr).to.match(/Deposit [0-9a-f-]{36} failed: the card was declined/);
    });

    it('exits 7 with the transaction id when waiting times out', async () => {
      const run = await payments('deposit', account, String(STUCK_AMOUNT), '--timeout', '1');
      expect(run.code).to.equal(7);
      expect(run.stderr).to.match(/still pending/);
      expect(run.stderr).to.match(/payments transaction [0-9a-f-]{36}/);
    });

    it('withdraws and prints the new balance', async () => {
      const id = (await payments('account', 'create', 'USD')).stdout.trim();
      await payments('deposit', id, '50');
      const run = await payments('withdraw', id, '20.5');
      expect(run.code, run.stderr).to.equal(0);
      expect(run.stdout).to.equal(`Withdrew 20.50 from account ${id}. New balance: 29.50\n`);
    });

    it('rejects an amount the currency cannot hold before sending anything (exit 2)', async () => {
      const before = depositsTo(account).length;
      const run = await payments('deposit', account, '1.005');
      expect(run.code).to.equal(2);
      expect(run.stderr).to.include('at most 2 decimal places');
      expect(depositsTo(account).length).to.equal(before);
    });
  });

  describe('--json', () => {
    it('prints the settled transaction and the balance for deposit', async () => {
      const run = await payments('deposit', account, '1.25', '--json');
      expect(run.code, run.stderr).to.equal(0);
      const out = JSON.parse(run.stdout) as {
        transaction: { status: string; amount: number };
        balance: { account_id: string };
      };
      expect(out.transaction).to.include({ status: 'completed', amount: 1.25 });
      expect(out.balance.account_id).to.equal(account);
    });

    it('prints the API body for balance', async () => {
      const run = await payments('balance', account, '--json');
      const out = JSON.parse(run.stdout) as Record<string, unknown>;
      expect(out).to.have.keys('account_id', 'balance', 'currency', 'available_balance');
      expect(out).to.include({ account_id: account, currency: 'USD' });
    });

    it('prints lists for accounts, transactions and currencies', async () => {
      for (const args of [
        ['account', 'list'],
        ['transactions'],
        ['currencies', 'list'],
        ['account', 'show', account],
      ]) {
        const run = await payments(...args, '--json');
        expect(run.code, `${args.join(' ')}: ${run.stderr}`).to.equal(0);
        expect(() => JSON.parse(run.stdout) as unknown, args.join(' ')).not.to.throw();
      }
    });

    it('puts the problem body on stderr when a command fails', async () => {
      const run = await payments('balance', '7a4c5f8e-0000-4000-8000-000000000000', '--json');
      expect(run.code).to.equal(4);
      expect(JSON.parse(run.stderr)).to.include({ code: 'RESOURCE_NOT_FOUND', status: 404 });
    });
  });

  describe('tables', () => {
    it('lists accounts with formatted balances', async () => {
      const run = await payments('account', 'list');
      expect(run.code, run.stderr).to.equal(0);
      expect(run.stdout).to.include('BALANCE');
      expect(run.stdout).to.include(account);
    });

    it('lists transactions', async () => {
      const run = await payments('transactions');
      expect(run.code, run.stderr).to.equal(0);
      expect(run.stdout).to.match(/deposit\s*│\s*completed/);
    });
  });

  describe('statements', () => {
    let statementAccount: string;
    before(async () => {
      statementAccount = (await payments('account', 'create', 'USD')).stdout.trim();
      for (const amount of ['10', '20.5', '0.25']) {
        const deposited = await payments('deposit', statementAccount, amount);
        expect(deposited.code, deposited.stderr).to.equal(0);
      }
      expect((await payments('withdraw', statementAccount, '5')).code).to.equal(0);
    });
    const statementRequests = () =>
      gateway.requests.filter((r) => r.path.startsWith(`/account/${statementAccount}/statement`));

    it('prints every page as one table between the opening and the closing balance', async () => {
      const before = statementRequests().length;
      const run = await payments('statement', statementAccount, '--from', '2025-01-01', '--to', '2025-02-01');
      expect(run.code, run.stderr).to.equal(0);
      const lines = run.stdout.split('\n');
      expect(lines[0]).to.equal(
        `Statement of account ${statementAccount} (USD) from 2025-01-01T00:00:00Z to 2025-02-01T00:00:00Z`,
      );
      expect(lines[1]).to.equal('Opening balance: 0.00');
      const rows = lines.filter((line) => line.includes('2025-01-01T00:00:00.000Z'));
      expect(
        rows.map((row) =>
          row
            .split('│')
            .map((cell) => cell.trim())
            .slice(2, 5),
        ),
      ).to.deep.equal([
        ['deposit', '10.00', '10.00'],
        ['deposit', '20.50', '30.50'],
        ['deposit', '0.25', '30.75'],
        ['withdrawal', '-5.00', '25.75'],
      ]);
      expect(lines.at(-2)).to.equal('Closing balance: 25.75');
      const sent = statementRequests()
        .slice(before)
        .map((r) => new URL(r.path, 'http://x').searchParams);
      expect(sent).to.have.length(2);
      expect(sent[0]?.get('from')).to.equal('2025-01-01T00:00:00Z');
      expect(sent[0]?.get('limit')).to.equal('1000');
      expect(sent[1]?.get('starting_after')).to.equal('2');
    });

    it('writes the CSV of every page to a file with one header row', async () => {
      const file = join(home, 'statement.csv');
      const run = await payments('statement', statementAccount, '--csv', file);
      expect(run.code, run.stderr).to.equal(0);
      expect(run.stdout).to.equal(`Wrote 4 entries to ${file}.\n`);
      const rows = (await readFile(file, 'utf8')).split('\r\n').filter(Boolean);
      expect(rows[0]).to.match(/^created_at,entry_id,transaction_id,type,/);
      expect(rows.filter((row) => row.startsWith('created_at'))).to.have.length(1);
      expect(rows.slice(1).map((row) => row.split(',').slice(5, 7))).to.deep.equal([
        ['', '0.00'],
        ['10.00', '10.00'],
        ['20.50', '30.50'],
        ['0.25', '30.75'],
        ['-5.00', '25.75'],
        ['', '25.75'],
      ]);
      const csvRequests = statementRequests().filter((r) => r.path.includes('format=csv'));
      expect(csvRequests.at(-1)?.headers.accept).to.equal('text/csv, application/problem+json');
    });

    it('prints the balance at a past moment, a bare date meaning midnight UTC', async () => {
      const run = await payments('balance', statementAccount, '--at', '2025-01-01');
      expect(run.code, run.stderr).to.equal(0);
      expect(run.stdout).to.equal(
        `Account ${statementAccount} balance at 2025-01-01T00:00:00.000Z: 25.75 USD\n`,
      );
      expect(gateway.requests.map((r) => r.path)).to.include(
        `/account/${statementAccount}/balance?at=2025-01-01T00%3A00%3A00Z`,
      );
    });

    it('refuses a moment it cannot read before asking the API (exit 2)', async () => {
      const before = gateway.requests.length;
      const run = await payments('statement', statementAccount, '--from', '1st of May');
      expect(run.code).to.equal(2);
      expect(run.stderr).to.include(
        '--from must be a date (YYYY-MM-DD, midnight UTC) or an RFC 3339 date-time',
      );
      expect(gateway.requests.slice(before).filter((r) => r.path.includes('/statement'))).to.deep.equal([]);
    });
  });

  describe('exit codes', () => {
    it('exits 2 on a usage error', async () => {
      const run = await payments('deposit', account);
      expect(run.code).to.equal(2);
      expect(run.stderr).to.include('Not enough non-option arguments');
    });

    it('exits 2 and lists field errors on a 400 from the API', async () => {
      const run = await payments(
        'register',
        '--username',
        'carol',
        '--email',
        'not-an-email',
        '--password',
        'pw-carol-1',
      );
      expect(run.code).to.equal(2);
      expect(run.stderr).to.include('The request is not valid');
      expect(run.stderr).to.include('email: must match format "email"');
    });

    it('exits 3 and says to log in again when the API refuses the token (401)', async () => {
      const session = JSON.parse(await readFile(join(home, 'payments', 'session.json'), 'utf8')) as {
        token: string;
      };
      gateway.revoke(session.token);
      const run = await payments('balance', account);
      expect(run.code).to.equal(3);
      expect(run.stderr).to.include('Your session has expired or was revoked.');
      expect(run.stderr).to.include('payments login');
      expect((await payments('login', '--username', 'alice', '--password', 's3cret-pass')).code).to.equal(0);
    });

    it('exits 4 on a 404', async () => {
      const run = await payments('balance', '7a4c5f8e-0000-4000-8000-000000000000');
      expect(run.code).to.equal(4);
      expect(run.stderr).to.include('Account not found');
    });

    it('exits 5 on a business rule violation (422)', async () => {
      const created = await payments('account', 'create', 'XXX');
      expect(created.code).to.equal(5);
      expect(created.stderr).to.include('Unsupported currency XXX');
      const withdrawn = await payments('withdraw', account, '1000000');
      expect(withdrawn.code).to.equal(5);
      expect(withdrawn.stderr).to.include('Not enough balance');
    });

    it('exits 5 on a conflict (409)', async () => {
      const run = await payments(
        'register',
        '--username',
        'alice',
        '--email',
        'a2@example.com',
        '--password',
        'pw-pw-pw-1',
      );
      expect(run.code).to.equal(5);
      expect(run.stderr).to.include('already exists');
    });

    it('exits 6 on a server error (500)', async () => {
      const run = await payments('balance', 'explode');
      expect(run.code).to.equal(6);
      expect(run.stderr).to.include('An unexpected error occurred');
    });

    it('exits 6 when the API cannot be reached', async () => {
      const run = await runPayments(
        ['balance', account, '--api-url', `http://127.0.0.1:${await closedPort()}`],
        {
          XDG_CONFIG_HOME: home,
        },
      );
      expect(run.code).to.equal(6);
      expect(run.stderr).to.include('Cannot reach the payments API');
    });

    it('exits 3 after logout, which forgets the token', async () => {
      const logout = await payments('logout');
      expect(logout.stdout).to.equal('Logged out.\n');
      const kept = await stat(join(home, 'payments', 'session.json')).then(
        () => true,
        () => false,
      );
      expect(kept).to.equal(false);
      const run = await payments('balance', account);
      expect(run.code).to.equal(3);
      expect(run.stderr).to.include('You are not logged in.');
    });
  });

  describe('API version', () => {
    it("asks for every answer in the API's current version, by the path's prefix", async () => {
      expect(gateway.requests).not.to.deep.equal([]);
      const others = gateway.requests.filter((r) => r.version !== CURRENT_VERSION);
      expect(others.map((r) => `${r.method} ${r.path} (${r.version})`)).to.deep.equal([]);
    });
  });
});
