import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { createPaymentsClient } from '@payments/client';
import { CURRENT_VERSION } from '@payments/contracts/versions';
import {
  closedPort,
  eventually,
  PAYMENTS_BIN,
  problemReply,
  runPayments,
  runPaymentsOnTerminal,
  startStandInProxy,
  useSystem,
  type SeenRequest,
  useStarted,
} from '@payments/testkit';
import { rawApi } from '@payments/test-support';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const ALICE = { username: 'alice', email: 'alice@example.com', password: 's3cret-pass' };

/** The path below the version prefix, with the query, and the version the prefix named (null without one). */
const pathOf = (request: SeenRequest) => request.url.replace(/^\/v\d+\.\d+(?=\/|$)/, '');
const versionOf = (request: SeenRequest) => /^\/v(\d+\.\d+)(?=\/|$)/.exec(request.url)?.[1] ?? null;
const bodyOf = (request: SeenRequest | undefined) => JSON.parse(request?.body || 'null') as unknown;

/** The cells of a table's body rows (`│`-separated), trimmed. */
const cellsOf = (line: string) => line.split('│').map((cell) => cell.trim());

/**
 * The `payments` command against the whole system, as a user runs it: the sandbox pays each deposit 300 ms after
 * it is asked to (an amount whose cents end in 13 with a declined card). A stand-in between the CLI and the gateway
 * shows what the CLI sent, and answers the one server error the system cannot be made to give.
 */
describe('payments CLI against the running system', function () {
  this.timeout(120_000);
  let home: string;
  let account: string;
  const system = useSystem({
    serviceEnv: {
      'provider-sandbox': { SANDBOX_DELAY_MS: '300' },
      // Alice opens an account for each case of her own.
      ledger: { MAX_ACCOUNTS_PER_USER: '20' },
    },
  });
  // Between the CLI and the gateway: what the CLI sent, and the answers the system cannot be made to give.
  const gateway = useStarted(() => startStandInProxy(system.gatewayUrl));

  /** Runs `payments` as a user would: the words of `command`, then `more` as they are. */
  const payments = (command: string, ...more: string[]) =>
    runPayments([...command.split(' '), ...more], { XDG_CONFIG_HOME: home, PAYMENTS_API_URL: gateway.url });
  const withPassword = (args: string[], password: string, configHome = home) =>
    runPayments(args, {
      XDG_CONFIG_HOME: configHome,
      PAYMENTS_API_URL: gateway.url,
      PAYMENTS_PASSWORD: password,
    });
  const sent = (filter: (request: SeenRequest) => boolean = () => true) => gateway.seen(filter);
  const depositsTo = (id: string) =>
    sent((r) => r.method === 'POST' && pathOf(r) === `/account/${id}/deposit`);
  const sessionOf = async (configHome = home) =>
    JSON.parse(await readFile(join(configHome, 'payments', 'session.json'), 'utf8')) as {
      token: string;
      expires_at: number;
    };
  const newAccount = async (currency = 'USD') => (await payments(`account create ${currency}`)).stdout.trim();

  before(async () => {
    home = await mkdtemp(join(tmpdir(), 'payments-cli-'));
    const registered = await payments(
      `register --username ${ALICE.username} --email ${ALICE.email} --password ${ALICE.password}`,
    );
    expect(registered.code, registered.stderr).to.equal(0);
    const login = await payments(`login --username ${ALICE.username} --password ${ALICE.password}`);
    expect(login.code, login.stderr).to.equal(0);
    account = await newAccount();
  });
  afterEach(() => gateway.use(() => undefined));
  after(async () => {
    if (home) await rm(home, { recursive: true, force: true });
  });

  describe('user update', () => {
    it('sends the current password from PAYMENTS_PASSWORD with a new e-mail', async () => {
      const run = await withPassword(['user', 'update', '--email', 'alice.new@example.com'], ALICE.password);
      expect(run.code, run.stderr).to.equal(0);
      expect(run.stdout).to.equal('Updated alice <alice.new@example.com>.\n');
      expect(bodyOf(sent((r) => r.method === 'PUT').at(-1))).to.deep.equal({
        email: 'alice.new@example.com',
        current_password: ALICE.password,
      });
      const back = await withPassword(['user', 'update', '--email', ALICE.email], ALICE.password);
      expect(back.code, back.stderr).to.equal(0);
    });

    it('does not ask for the current password to change only the username', async () => {
      const run = await payments('user update --username alice');
      expect(run.code, run.stderr).to.equal(0);
      expect(bodyOf(sent((r) => r.method === 'PUT').at(-1))).to.deep.equal({ username: 'alice' });
    });
  });

  describe('sign-up and session', () => {
    it('registers a user and says so', async () => {
      const run = await payments('register --username bob --email bob@example.com --password pw-bob-123');
      expect(run.code, run.stderr).to.equal(0);
      expect(run.stdout).to.match(/^Registered bob \(user id [0-9a-f-]{36}\)\.\n$/);
    });

    it('keeps the token in a file only its owner can read (0600)', async () => {
      const file = join(home, 'payments', 'session.json');
      expect((await stat(file)).mode & 0o777).to.equal(0o600);
      expect((await stat(join(home, 'payments'))).mode & 0o777).to.equal(0o700);
      const session = await sessionOf();
      expect(session.token).to.be.a('string').and.not.equal('');
      expect(session.expires_at).to.be.above(Date.now() / 1000);
    });

    it('logs in with the password from PAYMENTS_PASSWORD and by e-mail', async () => {
      const run = await withPassword(['login', '--email', ALICE.email], ALICE.password);
      expect(run.code, run.stderr).to.equal(0);
      expect(run.stdout).to.equal('Logged in as alice@example.com. The session lasts 15 minutes.\n');
      expect(bodyOf(sent((r) => pathOf(r) === '/auth/login').at(-1))).to.deep.equal({
        email: ALICE.email,
        password: ALICE.password,
      });
    });

    it('asks for the password on a terminal without echoing it', async () => {
      const run = await runPaymentsOnTerminal(
        ['login', '--username', ALICE.username],
        { XDG_CONFIG_HOME: home, PAYMENTS_API_URL: gateway.url },
        [{ prompt: 'Password: ', input: ALICE.password }],
      );
      expect(run.code, run.stdout + run.stderr).to.equal(0);
      expect(run.stdout).to.include('Password: ');
      expect(run.stdout).to.include('Logged in as alice.');
      expect(run.stdout).not.to.include(ALICE.password);
    });

    it('refreshes a token that is about to expire before using it', async () => {
      const other = await mkdtemp(join(tmpdir(), 'payments-cli-'));
      try {
        const env = ['--username', 'short-lived'];
        await withPassword(['register', ...env, '--email', 'short@example.com'], 'pw-short-1', other);
        await withPassword(['login', ...env], 'pw-short-1', other);
        // A minute left: within the two minutes before expiry when the CLI swaps its token.
        const file = join(other, 'payments', 'session.json');
        const before = { ...(await sessionOf(other)), expires_at: Math.floor(Date.now() / 1000) + 60 };
        await writeFile(file, JSON.stringify(before), { mode: 0o600 });
        const run = await withPassword(['whoami'], 'pw-short-1', other);
        expect(run.code, run.stderr).to.equal(0);
        const after = await sessionOf(other);
        expect(after.token).not.to.equal(before.token);
        expect(after.expires_at - before.expires_at).to.be.within(800, 900);
        expect((await stat(file)).mode & 0o777).to.equal(0o600);
        expect(sent((r) => pathOf(r) === '/auth/refresh').at(-1)?.headers.authorization).to.equal(
          `Bearer ${before.token}`,
        );
        expect(sent().at(-1)?.headers.authorization).to.equal(`Bearer ${after.token}`);
      } finally {
        await rm(other, { recursive: true, force: true });
      }
    });

    it('refuses to guess a password without a terminal (usage, exit 2)', async () => {
      const run = await payments(`login --username ${ALICE.username}`);
      expect(run.code).to.equal(2);
      expect(run.stderr).to.include('No password given');
    });

    it('exits 3 with the API detail on wrong credentials', async () => {
      const run = await payments(`login --username ${ALICE.username} --password wrong-password`);
      expect(run.code).to.equal(3);
      expect(run.stderr).to.include('The username, e-mail or password is not correct');
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
      const run = await payments('account create EUR --metadata purpose=savings --metadata note=a=b');
      expect(run.stdout).to.match(/^[0-9a-f-]{36}\n$/);
      expect(bodyOf(sent((r) => pathOf(r) === '/account').at(-1))).to.deep.equal({
        currency: 'EUR',
        metadata: { purpose: 'savings', note: 'a=b' },
      });
    });

    it('deposits, waits for completion and prints the documented line', async () => {
      const run = await payments(`deposit ${account} 100`);
      expect(run.code, run.stderr).to.equal(0);
      expect(run.stdout).to.equal(`Deposited 100.00 to account ${account}. New balance: 100.00\n`);
      const request = depositsTo(account).at(-1);
      expect(bodyOf(request)).to.deep.equal({ amount: 100, currency: 'USD' });
      expect(request?.headers['idempotency-key']).to.match(UUID);
    });

    it('prints the documented balance line', async () => {
      const run = await payments(`balance ${account}`);
      expect(run.code, run.stderr).to.equal(0);
      expect(run.stdout).to.equal(`Account ${account} balance: 100.00 USD\n`);
    });

    it('keeps decimal amounts exact: 0.1 then 0.2 make 0.30', async () => {
      const id = await newAccount();
      expect((await payments(`deposit ${id} 0.1`)).stdout).to.equal(
        `Deposited 0.10 to account ${id}. New balance: 0.10\n`,
      );
      expect((await payments(`deposit ${id} 0.2`)).stdout).to.equal(
        `Deposited 0.20 to account ${id}. New balance: 0.30\n`,
      );
      expect((await payments(`balance ${id}`)).stdout).to.equal(`Account ${id} balance: 0.30 USD\n`);
    });

    it('prints two decimals for a currency without minor units and three for one that has three', async () => {
      const yen = await newAccount('JPY');
      expect((await payments(`deposit ${yen} 500`)).stdout).to.equal(
        `Deposited 500.00 to account ${yen}. New balance: 500.00\n`,
      );
      const dinar = await newAccount('KWD');
      expect((await payments(`deposit ${dinar} 1.234`)).stdout).to.equal(
        `Deposited 1.234 to account ${dinar}. New balance: 1.234\n`,
      );
      expect((await payments(`balance ${dinar}`)).stdout).to.equal(`Account ${dinar} balance: 1.234 KWD\n`);
    });

    it('sends the given Idempotency-Key and reuses it on a retry, which credits once', async () => {
      const id = await newAccount();
      const first = await payments(`deposit ${id} 10 --idempotency-key retry-key-1`);
      const second = await payments(`deposit ${id} 10 --idempotency-key retry-key-1`);
      expect(first.stdout).to.equal(`Deposited 10.00 to account ${id}. New balance: 10.00\n`);
      expect(second.stdout).to.equal(`Deposited 10.00 to account ${id}. New balance: 10.00\n`);
      expect(depositsTo(id).map((r) => r.headers['idempotency-key'])).to.deep.equal([
        'retry-key-1',
        'retry-key-1',
      ]);
    });

    it('generates a fresh Idempotency-Key for each new command', async () => {
      const id = await newAccount();
      await payments(`deposit ${id} 1`);
      await payments(`deposit ${id} 1`);
      const keys = depositsTo(id).map((r) => r.headers['idempotency-key']);
      expect(keys).to.have.length(2);
      expect(keys[0]).not.to.equal(keys[1]);
      expect((await payments(`balance ${id}`)).stdout).to.equal(`Account ${id} balance: 2.00 USD\n`);
    });

    it('returns at once with --no-wait, printing the pending transaction', async () => {
      const run = await payments(`deposit ${account} 5 --no-wait`);
      expect(run.code, run.stderr).to.equal(0);
      expect(run.stdout).to.match(/^Deposit accepted: transaction [0-9a-f-]{36} is pending\.\n$/);
    });

    it('prints the reason and exits 1 when the transaction fails', async () => {
      // The sandbox declines a card for an amount whose minor units end in 13, then cancels the payment.
      const run = await payments(`deposit ${account} 0.13`);
      expect(run.code).to.equal(1);
      expect(run.stdout).to.equal('');
      expect(run.stderr).to.match(/Deposit [0-9a-f-]{36} canceled: canceled at the provider \(abandoned\)\./);
      // While it was pending, its payment page (the link its owner is shown), once.
      const pages = run.stderr.match(/Pay it in a browser: http:\/\/127\.0\.0\.1:\d+\/pay\/[0-9a-f-]{36}/g);
      expect(pages, run.stderr).to.have.length(1);
    });

    it('exits 7 with the transaction id when waiting times out', async () => {
      const run = await payments(`deposit ${account} 3 --timeout 0.1`);
      expect(run.code).to.equal(7);
      expect(run.stderr).to.match(/still pending/);
      expect(run.stderr).to.match(/payments transaction [0-9a-f-]{36}/);
    });

    it('withdraws and prints the new balance (the development system links a payout account first)', async () => {
      const id = await newAccount();
      await payments(`deposit ${id} 50`);
      const run = await payments(`withdraw ${id} 20.5`);
      expect(run.code, run.stderr).to.equal(0);
      expect(run.stdout).to.equal(`Withdrew 20.50 from account ${id}. New balance: 29.50\n`);
    });

    it('transfers and prints the new balance of the account it left', async () => {
      const from = await newAccount();
      const to = await newAccount();
      await payments(`deposit ${from} 40`);
      const run = await payments(`transfer ${from} ${to} 30`);
      expect(run.code, run.stderr).to.equal(0);
      expect(run.stdout).to.equal(
        `Transferred 30.00 from account ${from} to account ${to}. New balance: 10.00\n`,
      );
      expect((await payments(`balance ${to}`)).stdout).to.equal(`Account ${to} balance: 30.00 USD\n`);
    });

    it('rejects an amount the currency cannot hold before sending anything (exit 2)', async () => {
      const before = depositsTo(account).length;
      const run = await payments(`deposit ${account} 1.005`);
      expect(run.code).to.equal(2);
      expect(run.stderr).to.include('at most 2 decimal places');
      expect(depositsTo(account).length).to.equal(before);
    });
  });

  describe('payout account', () => {
    let payer: string;
    const asPayer = (command: string) =>
      runPayments(command.split(' '), {
        XDG_CONFIG_HOME: payer,
        PAYMENTS_API_URL: gateway.url,
        PAYMENTS_PASSWORD: 'pw-payer-1',
      });

    before(async () => {
      payer = await mkdtemp(join(tmpdir(), 'payments-cli-'));
      await asPayer('register --username payer --email payer@example.com');
      await asPayer('login --username payer');
    });
    after(async () => {
      if (payer) await rm(payer, { recursive: true, force: true });
    });

    it('shows none before one is linked (exit 4)', async () => {
      const none = await asPayer('payout-account show');
      expect(none.code).to.equal(4);
      expect(none.stderr).to.match(/payout account not found/i);
    });

    it('links it at the provider once: link keeps the one a withdrawal linked', async () => {
      const id = (await asPayer('account create USD')).stdout.trim();
      await asPayer(`deposit ${id} 10`);
      expect((await asPayer(`withdraw ${id} 5`)).code).to.equal(0);
      const shown = await asPayer('payout-account show --json');
      expect(shown.code, shown.stderr).to.equal(0);
      const { account: connected } = JSON.parse(shown.stdout) as { account: string };
      expect(connected).to.match(/^acct_/);
      const linked = await asPayer('payout-account link');
      expect(linked.code, linked.stderr).to.equal(0);
      expect(linked.stdout.split('\n')[0]).to.equal(`Linked payout account ${connected} (stripe).`);
      expect(linked.stdout.split('\n')[1]).to.equal('Payouts are enabled.');
    });

    it('shows whether the provider pays out, and replaces the account by a new one', async () => {
      const shown = await asPayer('payout-account');
      expect(shown.code, shown.stderr).to.equal(0);
      expect(shown.stdout).to.match(/Payouts:\s+enabled/);
      expect(shown.stdout).to.match(/Still due:\s+nothing/);
      const before = JSON.parse((await asPayer('payout-account show --json')).stdout) as { account: string };
      const replaced = await asPayer('payout-account replace');
      expect(replaced.code, replaced.stderr).to.equal(0);
      const after = JSON.parse((await asPayer('payout-account show --json')).stdout) as { account: string };
      expect(after.account)
        .to.match(/^acct_/)
        .and.not.equal(before.account);
      expect(replaced.stdout.split('\n')[0]).to.equal(
        `Replaced ${before.account} by payout account ${after.account} (stripe).`,
      );
      // The account replaced is no longer the one to replace: a conflict (exit code of a 409).
      const stale = await asPayer(`payout-account replace --replaces acct_never_linked`);
      expect(stale.code).not.to.equal(0);
      expect(stale.stderr).to.match(/not your linked payout account/);
    });
  });

  describe('--json', () => {
    it('prints the settled transaction and the balance for deposit', async () => {
      const run = await payments(`deposit ${account} 1.25 --json`);
      expect(run.code, run.stderr).to.equal(0);
      const out = JSON.parse(run.stdout) as {
        transaction: { status: string; amount: number };
        balance: { account_id: string };
      };
      expect(out.transaction).to.include({ status: 'completed', amount: 1.25 });
      expect(out.balance.account_id).to.equal(account);
    });

    it('prints the API body for balance', async () => {
      const run = await payments(`balance ${account} --json`);
      const out = JSON.parse(run.stdout) as Record<string, unknown>;
      expect(out).to.have.keys('account_id', 'balance', 'currency', 'available_balance');
      const { token } = await sessionOf();
      const fromApi = await createPaymentsClient({ baseUrl: system.gatewayUrl, token }).balances.get(account);
      expect(out).to.deep.equal(fromApi);
    });

    it('prints lists for accounts, transactions and currencies', async () => {
      for (const command of ['account list', 'transactions', 'currencies list', `account show ${account}`]) {
        const run = await payments(`${command} --json`);
        expect(run.code, `${command}: ${run.stderr}`).to.equal(0);
        expect(() => JSON.parse(run.stdout) as unknown, command).not.to.throw();
      }
    });

    it('puts the problem body on stderr when a command fails', async () => {
      const run = await payments('balance 7a4c5f8e-0000-4000-8000-000000000000 --json');
      expect(run.code).to.equal(4);
      expect(JSON.parse(run.stderr)).to.include({ code: 'RESOURCE_NOT_FOUND', status: 404 });
    });
  });

  describe('tables', () => {
    it('lists accounts with formatted balances', async () => {
      const run = await payments('account list');
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
    let afterwards: string;
    before(async () => {
      statementAccount = await newAccount();
      for (const amount of ['10', '20.5', '0.25']) {
        const deposited = await payments(`deposit ${statementAccount} ${amount}`);
        expect(deposited.code, deposited.stderr).to.equal(0);
      }
      expect((await payments(`withdraw ${statementAccount} 5`)).code).to.equal(0);
      afterwards = new Date(Date.now() + 1000).toISOString();
    });
    const statementRequests = () =>
      sent((r) => pathOf(r).startsWith(`/account/${statementAccount}/statement`));
    /** The API answers pages of two, whatever the CLI asks for: it must follow them. */
    const pagesOfTwo = () =>
      gateway.use((request) =>
        request.url.includes('/statement')
          ? { forwardTo: request.url.replace('limit=1000', 'limit=2') }
          : undefined,
      );

    it('prints every page as one table between the opening and the closing balance', async () => {
      pagesOfTwo();
      const before = statementRequests().length;
      const run = await payments(`statement ${statementAccount} --from 2020-01-01`);
      expect(run.code, run.stderr).to.equal(0);
      const lines = run.stdout.split('\n');
      expect(lines[0]).to.match(
        new RegExp(
          `^Statement of account ${statementAccount} \\(USD\\) from 2020-01-01T00:00:00.000Z to \\S+$`,
        ),
      );
      expect(lines[1]).to.equal('Opening balance: 0.00');
      const rows = lines.filter((line) => /│ \d{4}-/.test(line)).map(cellsOf);
      expect(rows.map((cells) => cells.slice(2, 5))).to.deep.equal([
        ['deposit', '10.00', '10.00'],
        ['deposit', '20.50', '30.50'],
        ['deposit', '0.25', '30.75'],
        ['withdrawal', '-5.00', '25.75'],
      ]);
      expect(lines.at(-2)).to.equal('Closing balance: 25.75');
      const queries = statementRequests()
        .slice(before)
        .map((r) => new URL(r.url, 'http://x').searchParams);
      expect(queries).to.have.length(2);
      expect(queries[0]?.get('from')).to.equal('2020-01-01T00:00:00Z');
      expect(queries[0]?.get('limit')).to.equal('1000');
      expect(queries[1]?.get('starting_after')).to.be.a('string').and.not.equal('');
    });

    it('writes the CSV of every page to a file with one header row', async () => {
      pagesOfTwo();
      const file = join(home, 'statement.csv');
      const run = await payments(`statement ${statementAccount} --from 2020-01-01 --csv`, file);
      expect(run.code, run.stderr).to.equal(0);
      expect(run.stdout).to.equal(`Wrote 4 entries to ${file}.\n`);
      const rows = (await readFile(file, 'utf8')).split('\r\n').filter(Boolean);
      expect(rows[0]).to.equal(
        'created_at,entry_id,transaction_id,type,counterparty_account_id,amount,balance,currency,reference,metadata',
      );
      expect(rows.filter((row) => row.startsWith('created_at'))).to.have.length(1);
      expect(rows.slice(1).map((row) => row.split(',').slice(3, 7).join(','))).to.deep.equal([
        'opening_balance,,,0.00',
        'deposit,,10.00,10.00',
        'deposit,,20.50,30.50',
        'deposit,,0.25,30.75',
        'withdrawal,,-5.00,25.75',
        'closing_balance,,,25.75',
      ]);
      const csvRequests = statementRequests().filter((r) => r.url.includes('format=csv'));
      expect(csvRequests.at(-1)?.headers.accept).to.equal('text/csv, application/problem+json');
    });

    it('prints the balance at a past moment, a bare date meaning midnight UTC', async () => {
      const run = await payments(`balance ${statementAccount} --at 2025-01-01`);
      expect(run.code, run.stderr).to.equal(0);
      expect(run.stdout).to.equal(
        `Account ${statementAccount} balance at 2025-01-01T00:00:00.000Z: 0.00 USD\n`,
      );
      expect(sent().map((r) => pathOf(r))).to.include(
        `/account/${statementAccount}/balance?at=2025-01-01T00%3A00%3A00Z`,
      );
      const later = await payments(`balance ${statementAccount} --at ${afterwards}`);
      expect(later.stdout).to.equal(`Account ${statementAccount} balance at ${afterwards}: 25.75 USD\n`);
    });

    it('refuses a moment it cannot read before asking the API (exit 2)', async () => {
      const before = sent().length;
      const run = await payments(`statement ${statementAccount} --from`, '1st of May');
      expect(run.code).to.equal(2);
      expect(run.stderr).to.include(
        '--from must be a date (YYYY-MM-DD, midnight UTC) or an RFC 3339 date-time',
      );
      expect(
        sent()
          .slice(before)
          .filter((r) => r.url.includes('/statement')),
      ).to.deep.equal([]);
    });
  });

  describe('exit codes', () => {
    it('exits 2 on a usage error', async () => {
      const run = await payments(`deposit ${account}`);
      expect(run.code).to.equal(2);
      expect(run.stderr).to.include('Not enough non-option arguments');
    });

    it('exits 2 and lists field errors on a 400 from the API', async () => {
      const run = await payments('register --username carol --email not-an-email --password pw-carol-1');
      expect(run.code).to.equal(2);
      expect(run.stderr).to.include('The request is not valid');
      expect(run.stderr).to.include('email: must match format "email"');
    });

    it('exits 3 and says to log in again when the API refuses the token (401)', async () => {
      // Revoked as a logout elsewhere revokes it, and refused by the gateway once it knows.
      const { token } = await sessionOf();
      const api = rawApi(system.gatewayUrl);
      expect((await api.post('/auth/logout', undefined, token)).status).to.equal(204);
      await eventually(
        () => api.get('/accounts', token).then((answer) => answer.status),
        (status) => status === 401,
      );
      const run = await payments(`balance ${account}`);
      expect(run.code).to.equal(3);
      expect(run.stderr).to.include('Your session has expired or was revoked.');
      expect(run.stderr).to.include('payments login');
      expect(
        (await payments(`login --username ${ALICE.username} --password ${ALICE.password}`)).code,
      ).to.equal(0);
    });

    it('exits 4 on a 404', async () => {
      const run = await payments('balance 7a4c5f8e-0000-4000-8000-000000000000');
      expect(run.code).to.equal(4);
      expect(run.stderr).to.include('Account not found');
    });

    it('exits 5 on a business rule violation (422)', async () => {
      const created = await payments('account create XXX');
      expect(created.code).to.equal(5);
      expect(created.stderr).to.include('XXX');
      const withdrawn = await payments(`withdraw ${account} 1000000`);
      expect(withdrawn.code).to.equal(5);
      expect(withdrawn.stderr).to.include('The available balance does not cover 1000000.00 USD');
    });

    it('exits 5 on a conflict (409)', async () => {
      const run = await payments(
        `register --username ${ALICE.username} --email a2@example.com --password pw-pw-pw-1`,
      );
      expect(run.code).to.equal(5);
      expect(run.stderr).to.include('already exists');
    });

    it('exits 6 on a server error (500)', async () => {
      gateway.use((request) =>
        request.url.includes(`/account/${account}/balance`)
          ? { reply: problemReply(500, 'INTERNAL_ERROR', {}, 'An unexpected error occurred') }
          : undefined,
      );
      const run = await payments(`balance ${account}`);
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
      const run = await payments(`balance ${account}`);
      expect(run.code).to.equal(3);
      expect(run.stderr).to.include('You are not logged in.');
    });
  });

  describe('API version', () => {
    it("asks for every answer in the API's current version, by the path's prefix", async () => {
      expect(sent()).not.to.deep.equal([]);
      const others = sent().filter((r) => versionOf(r) !== CURRENT_VERSION);
      expect(others.map((r) => `${r.method} ${r.url}`)).to.deep.equal([]);
    });
  });
});
