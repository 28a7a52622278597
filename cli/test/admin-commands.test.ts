import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import type { ProviderMismatch, UnconfirmedWithdrawal } from '@payments/client';
import {
  AdminActionPage,
  CurrencyView,
  DeadLetterList,
  DeadLetterReplayView,
  minorToNumber,
  OverdrawnAccountPage,
  ProviderMismatchView,
  ReconciliationPage,
  ReconciliationRunView,
  TokenView,
  UserPage,
  UserView,
  WebhookDeliveryPage,
} from '@payments/contracts';
import {
  contractProblem,
  contractReply,
  csvReply,
  startContractStub,
  type ContractStub,
  type StubRequest,
} from '@payments/test-support';
import { runPayments } from '@payments/testkit';

const AT = '2025-01-01T00:00:00.000Z';
const FOUND_AT = '2025-01-02T03:04:05.000Z';
const EXPONENTS: Record<string, number> = { USD: 2, EUR: 2, KWD: 3 };
/** An amount as the API shows it: `minor` units of `currency`, exactly. */
const amount = (minor: bigint, currency: string) => minorToNumber(minor, EXPONENTS[currency] as number);

const ADMIN = { id: '1e2d3c4b-0000-4000-8000-00000000a001', username: 'ops' };
const BOB = { id: '1e2d3c4b-0000-4000-8000-00000000b0b0', username: 'bob' };
const ALICE = { id: '1e2d3c4b-0000-4000-8000-0000000a11ce', username: 'alice' };
const ALINA = { id: '1e2d3c4b-0000-4000-8000-0000000a1170', username: 'alina' };

const userView = (user: { id: string; username: string }, status: 'active' | 'disabled' = 'active') => ({
  id: user.id,
  username: user.username,
  email: `${user.username}@example.com`,
  role: user === ADMIN ? ('admin' as const) : ('user' as const),
  status,
  created_at: AT,
  updated_at: AT,
});

/** A JWT's shape, naming `sub`: the CLI reads the subject, and never checks a signature. */
const tokenOf = (sub: string) =>
  [{ alg: 'none' }, { sub }, 'sig']
    .map((part) => Buffer.from(JSON.stringify(part)).toString('base64url'))
    .join('.');

const CASES = {
  /** captured_not_credited, with a transaction: `book` resolves it. */
  bookable: '5d1e0c3a-0000-4000-8000-000000000001',
  /** amount_differs: the provider's records do not explain it, so `book` is refused (409). */
  unexplained: '5d1e0c3a-0000-4000-8000-000000000002',
  /** unknown_to_ledger, no transaction: nothing to book against (422). */
  unknown: '5d1e0c3a-0000-4000-8000-000000000003',
} as const;
const UNCONFIRMED_WITHDRAWAL = '7b2f9d10-0000-4000-8000-000000000001';

const withdrawal: UnconfirmedWithdrawal = {
  kind: 'unconfirmed_withdrawal',
  id: UNCONFIRMED_WITHDRAWAL,
  account_id: '9c3a0e21-0000-4000-8000-000000000002',
  type: 'withdrawal',
  status: 'pending',
  amount: amount(4000n, 'USD'),
  currency: 'USD',
  counterparty_account_id: null,
  payment_id: 'tr_unconfirmed',
  failure_reason: null,
  created_at: AT,
  updated_at: AT,
  completed_at: null,
  user_id: '1e2d3c4b-0000-4000-8000-000000000001',
  reconciliation_required_at: '2025-01-01T12:00:00.000Z',
};

const mismatch = (
  id: string,
  kind: ProviderMismatch['kind'],
  reference: string,
  transactionId: string | null,
  currency: string,
  [provider, ledger]: [bigint, bigint],
): ProviderMismatch => ({
  kind,
  id,
  status: 'open',
  provider_reference: reference,
  transaction_id: transactionId,
  currency,
  provider_amount: amount(provider, currency),
  ledger_amount: amount(ledger, currency),
  found_at: FOUND_AT,
  last_seen_at: FOUND_AT,
});
const bookable = mismatch(
  CASES.bookable,
  'captured_not_credited',
  'pi_captured',
  '0a1b2c3d-0000-4000-8000-000000000001',
  'USD',
  [2550n, 0n],
);
const unexplained = mismatch(
  CASES.unexplained,
  'amount_differs',
  'pi_differs',
  '0a1b2c3d-0000-4000-8000-000000000002',
  'KWD',
  [1234n, 1200n],
);
const unknown = mismatch(CASES.unknown, 'unknown_to_ledger', 'pi_stranger', null, 'EUR', [700n, 0n]);
const WAITING = [withdrawal, bookable, unexplained, unknown];
const page = <T>(data: T[], limit = 20, offset = 0, total = data.length) => ({
  data,
  has_more: offset + data.length < total,
  pagination: { limit, offset, total },
});

/** The cells of a table's body rows (the rows holding `marker`), trimmed, without the border cells. */
function cellsOf(stdout: string, marker: RegExp): string[][] {
  return stdout
    .split('\n')
    .filter((line) => marker.test(line))
    .map((line) =>
      line
        .split('│')
        .slice(1, -1)
        .map((cell) => cell.trim()),
    );
}

/**
 * The admin commands against a stand-in for the API that answers each operation as its contract says, with what
 * each test gives it: what the CLI asks, prints, and exits with for the answers the API can give.
 */
describe('payments admin', function () {
  this.timeout(30_000);
  let api: ContractStub;
  let adminHome: string;
  let userHome: string;
  /** Runs `payments` as the user logged in under `home`: the words of `command`, then `more` as they are. */
  const as =
    (home: string) =>
    (command: string, ...more: string[]) =>
      runPayments([...command.split(' '), ...more], {
        XDG_CONFIG_HOME: home,
        PAYMENTS_API_URL: api.url,
        PAYMENTS_PASSWORD: 'pw-12345',
      });
  const asAdmin = (command: string, ...more: string[]) => as(adminHome)(command, ...more);
  const asUser = (command: string, ...more: string[]) => as(userHome)(command, ...more);
  const requestsSince = (count: number, path: RegExp): StubRequest[] =>
    api.requests.slice(count).filter((r) => path.test(r.path));
  const lastRequest = () => api.requests.at(-1);

  before(async () => {
    api = await startContractStub();
    api.on('POST', '/auth/login', (request) => {
      const { username } = request.body as { username: string };
      const user = [ADMIN, BOB].find((known) => known.username === username) as typeof ADMIN;
      return contractReply(TokenView, { token: tokenOf(user.id), token_type: 'Bearer', expires_in: 900 });
    });
    for (const user of [ADMIN, BOB])
      api.on('GET', `/user/${user.id}`, contractReply(UserView, userView(user)));
    api.on('GET', /^\/api\/currencies\/[A-Z]{3}$/, (request) => {
      const code = request.path.slice(-3);
      return contractReply(CurrencyView, {
        code,
        name: code,
        numeric_code: '000',
        minor_units: EXPONENTS[code] as number,
        symbol: null,
        regions: [],
        countries: [],
        supported: true,
      });
    });
    adminHome = await mkdtemp(join(tmpdir(), 'payments-admin-'));
    userHome = await mkdtemp(join(tmpdir(), 'payments-admin-'));
    for (const [home, name] of [
      [adminHome, ADMIN.username],
      [userHome, BOB.username],
    ] as const) {
      const login = await as(home)(`login --username ${name}`);
      expect(login.code, login.stderr).to.equal(0);
    }
    const shown = /user id ([0-9a-f-]{36})/.exec((await asAdmin('whoami')).stdout)?.[1];
    expect(shown).to.equal(ADMIN.id);
  });
  after(async () => {
    await api?.close();
    if (adminHome) await rm(adminHome, { recursive: true, force: true });
    if (userHome) await rm(userHome, { recursive: true, force: true });
  });

  describe('reconciliation list', () => {
    before(() => {
      api.on('GET', '/admin/reconciliation', contractReply(ReconciliationPage, page(WAITING)));
      api.on(
        'GET',
        /^\/admin\/reconciliation\?limit=2&offset=1$/,
        contractReply(ReconciliationPage, page(WAITING.slice(1, 3), 2, 1, 4)),
      );
      api.on(
        'GET',
        new RegExp(`^/admin/reconciliation\\?limit=2&starting_after=${UNCONFIRMED_WITHDRAWAL}$`),
        contractReply(ReconciliationPage, { ...page(WAITING.slice(1, 3), 2, 0, 4), has_more: true }),
      );
      api.on(
        'GET',
        /^\/admin\/reconciliation\?format=csv$/,
        csvReply([
          'kind,case_id,status,transaction_id,provider_reference,currency,provider_amount,ledger_amount,found_at',
          `unconfirmed_withdrawal,,open,${UNCONFIRMED_WITHDRAWAL},tr_unconfirmed,USD,,40.00,2025-01-01T12:00:00.000Z`,
          `captured_not_credited,${CASES.bookable},open,${bookable.transaction_id},pi_captured,USD,25.50,0.00,${FOUND_AT}`,
          `amount_differs,${CASES.unexplained},open,${unexplained.transaction_id},pi_differs,KWD,1.234,1.200,${FOUND_AT}`,
          `unknown_to_ledger,${CASES.unknown},open,,pi_stranger,EUR,7.00,0.00,${FOUND_AT}`,
        ]),
      );
    });

    it('shows withdrawals and mismatch cases in one table, amounts in their currency', async () => {
      const run = await asAdmin('admin reconciliation list');
      expect(run.code, run.stderr).to.equal(0);
      expect(cellsOf(run.stdout, /│/)).to.deep.equal([
        ['KIND', 'CASE', 'TRANSACTION', 'REFERENCE', 'PROVIDER', 'LEDGER', 'CURRENCY', 'SINCE'],
        [
          'unconfirmed_withdrawal',
          '',
          UNCONFIRMED_WITHDRAWAL,
          'tr_unconfirmed',
          '',
          '40.00',
          'USD',
          '2025-01-01T12:00:00.000Z',
        ],
        [
          'captured_not_credited',
          CASES.bookable,
          '0a1b2c3d-0000-4000-8000-000000000001',
          'pi_captured',
          '25.50',
          '0.00',
          'USD',
          FOUND_AT,
        ],
        [
          'amount_differs',
          CASES.unexplained,
          '0a1b2c3d-0000-4000-8000-000000000002',
          'pi_differs',
          '1.234',
          '1.200',
          'KWD',
          FOUND_AT,
        ],
        ['unknown_to_ledger', CASES.unknown, '', 'pi_stranger', '7.00', '0.00', 'EUR', FOUND_AT],
      ]);
      expect(run.stderr).to.include('Showing 1-4 of 4.');
    });

    it('asks for the page given by --limit and --offset', async () => {
      const before = api.requests.length;
      const run = await asAdmin('admin reconciliation list --limit 2 --offset 1');
      expect(run.code, run.stderr).to.equal(0);
      expect(requestsSince(before, /^\/admin\//).map((r) => `${r.method} ${r.path}`)).to.deep.equal([
        'GET /admin/reconciliation?limit=2&offset=1',
      ]);
      expect(cellsOf(run.stdout, /pi_/).map((row) => row[0])).to.deep.equal([
        'captured_not_credited',
        'amount_differs',
      ]);
      expect(run.stderr).to.include('Showing 2-3 of 4.');
    });

    it('asks for the page after an item with --starting-after, and says how to read the next', async () => {
      const before = api.requests.length;
      const run = await asAdmin(
        `admin reconciliation list --limit 2 --starting-after ${UNCONFIRMED_WITHDRAWAL}`,
      );
      expect(run.code, run.stderr).to.equal(0);
      expect(requestsSince(before, /^\/admin\//).map((r) => `${r.method} ${r.path}`)).to.deep.equal([
        `GET /admin/reconciliation?limit=2&starting_after=${UNCONFIRMED_WITHDRAWAL}`,
      ]);
      expect(cellsOf(run.stdout, /pi_/).map((row) => row[0])).to.deep.equal([
        'captured_not_credited',
        'amount_differs',
      ]);
      expect(run.stderr).to.include(`More: --starting-after ${CASES.unexplained}`);
      expect(run.stderr).to.not.include('Showing');
    });

    it("prints the API's page with --json", async () => {
      const run = await asAdmin('admin reconciliation list --json');
      expect(run.code, run.stderr).to.equal(0);
      expect(JSON.parse(run.stdout)).to.deep.equal(page(WAITING));
    });

    it("prints the API's CSV report as it came with --csv", async () => {
      const before = api.requests.length;
      const run = await asAdmin('admin reconciliation list --csv');
      expect(run.code, run.stderr).to.equal(0);
      const rows = run.stdout.split('\r\n');
      expect(rows[0]).to.equal(
        'kind,case_id,status,transaction_id,provider_reference,currency,provider_amount,ledger_amount,found_at',
      );
      expect(rows.slice(1).map((row) => row.split(',')[0])).to.deep.equal([
        'unconfirmed_withdrawal',
        'captured_not_credited',
        'amount_differs',
        'unknown_to_ledger',
        '',
      ]);
      const [sent] = requestsSince(before, /^\/admin\//);
      expect(sent?.path).to.equal('/admin/reconciliation?format=csv');
      expect(sent?.headers.accept).to.equal('text/csv, application/problem+json');
    });

    it('refuses --csv with --limit or a cursor before asking the API, the report being unpaged (exit 2)', async () => {
      const before = api.requests.length;
      for (const paging of ['--limit 5', `--starting-after ${UNCONFIRMED_WITHDRAWAL}`]) {
        const run = await asAdmin(`admin reconciliation list --csv ${paging}`);
        expect(run.code, paging).to.equal(2);
        expect(run.stderr).to.include('leave out --limit and --offset, and the cursors');
      }
      expect(requestsSince(before, /^\/admin\//)).to.deep.equal([]);
    });
  });

  describe('reconciliation show', () => {
    before(() => {
      for (const found of [bookable, unexplained, unknown]) {
        api.on('GET', `/admin/reconciliation/cases/${found.id}`, contractReply(ProviderMismatchView, found));
      }
    });

    it('shows a case with both sides of the amount', async () => {
      const before = api.requests.length;
      const run = await asAdmin(`admin reconciliation show ${CASES.unexplained}`);
      expect(run.code, run.stderr).to.equal(0);
      expect(run.stdout).to.match(new RegExp(`^Case: +${CASES.unexplained}$`, 'm'));
      expect(run.stdout).to.match(/^Kind: +amount_differs$/m);
      expect(run.stdout).to.match(/^Status: +open$/m);
      expect(run.stdout).to.match(/^By the provider: +1\.234 KWD$/m);
      expect(run.stdout).to.match(/^By the books: +1\.200 KWD$/m);
      expect(run.stdout).not.to.include('Decision');
      expect(requestsSince(before, /^\/admin\//).map((r) => `${r.method} ${r.path}`)).to.deep.equal([
        `GET /admin/reconciliation/cases/${CASES.unexplained}`,
      ]);
    });

    it('says when the ledger has no transaction for the case', async () => {
      const run = await asAdmin(`admin reconciliation show ${CASES.unknown}`);
      expect(run.stdout).to.match(/^Transaction: +\(none in the ledger\)$/m);
    });

    it("prints the API's case with --json", async () => {
      const run = await asAdmin(`admin reconciliation show ${CASES.bookable} --json`);
      expect(run.code, run.stderr).to.equal(0);
      expect(JSON.parse(run.stdout)).to.deep.equal(bookable);
    });

    it('exits 4 with the detail for a case that does not exist', async () => {
      const missing = '5d1e0c3a-0000-4000-8000-0000000000ff';
      api.on(
        'GET',
        `/admin/reconciliation/cases/${missing}`,
        contractProblem('RESOURCE_NOT_FOUND', 'Reconciliation case not found'),
      );
      const run = await asAdmin(`admin reconciliation show ${missing}`);
      expect(run.code).to.equal(4);
      expect(run.stderr).to.include('Reconciliation case not found');
    });
  });

  describe('reconciliation resolve', () => {
    const resolutionOf = (id: string) => `/admin/reconciliation/cases/${id}/resolution`;
    const resolutions = (before: number) => requestsSince(before, /\/resolution$/);
    const decided = (
      found: ProviderMismatch,
      decision: 'book' | 'nothing_owed',
      reason: string,
    ): ProviderMismatch => ({
      ...found,
      status: 'resolved',
      decision,
      reason,
      resolved_by: ADMIN.id,
      resolved_at: '2025-01-03T00:00:00.000Z',
    });
    const DONT_EXPLAIN =
      "The provider's records do not explain this difference (amount_differs); decide nothing_owed with a " +
      'reason once it is understood';

    before(() => {
      api.on('POST', resolutionOf(CASES.unexplained), contractProblem('CONFLICT', DONT_EXPLAIN));
      api.on(
        'POST',
        resolutionOf(CASES.unknown),
        contractProblem(
          'BUSINESS_RULE_VIOLATION',
          'Nothing of the ledger to book this against: give it back (refund, reverse) or decide nothing_owed ' +
            'with a reason',
        ),
      );
    });

    it('refuses a missing --reason before any request (exit 2)', async () => {
      const before = api.requests.length;
      const run = await asAdmin(`admin reconciliation resolve ${CASES.bookable} --decision book`);
      expect(run.code).to.equal(2);
      expect(run.stderr).to.include('Missing required argument: reason');
      expect(api.requests.length).to.equal(before);
    });

    it('refuses a reason under 3 characters, and a decision it does not know, before any request (exit 2)', async () => {
      const before = api.requests.length;
      const short = await asAdmin(
        `admin reconciliation resolve ${CASES.bookable} --decision book --reason`,
        ' ok ',
      );
      expect(short.code).to.equal(2);
      expect(short.stderr).to.include('--reason must say why in 3 to 1000 characters');
      const unknownDecision = await asAdmin(
        `admin reconciliation resolve ${CASES.bookable} --decision waive --reason`,
        'refund missed',
      );
      expect(unknownDecision.code).to.equal(2);
      expect(unknownDecision.stderr).to.include('Invalid values');
      expect(resolutions(before)).to.deep.equal([]);
    });

    it("exits 5 with the API's detail when the provider's records do not explain the difference (409)", async () => {
      const run = await asAdmin(
        `admin reconciliation resolve ${CASES.unexplained} --decision book --reason`,
        'provider says so',
      );
      expect(run.code).to.equal(5);
      expect(run.stdout).to.equal('');
      expect(run.stderr).to.include("The provider's records do not explain this difference (amount_differs)");
    });

    it('puts the problem body on stderr with --json (409)', async () => {
      const run = await asAdmin(
        `admin reconciliation resolve ${CASES.unexplained} --decision book --reason`,
        'provider says so',
        '--json',
      );
      expect(run.code).to.equal(5);
      expect(JSON.parse(run.stderr)).to.include({ status: 409, code: 'CONFLICT', detail: DONT_EXPLAIN });
    });

    it('exits 5 when there is nothing in the ledger to book against (422)', async () => {
      const run = await asAdmin(
        `admin reconciliation resolve ${CASES.unknown} --decision book --reason`,
        'stranger payment',
      );
      expect(run.code).to.equal(5);
      expect(run.stderr).to.include('Nothing of the ledger to book this against');
    });

    it('sends the decision and the reason and prints the decided case', async () => {
      const reason = 'webhook for the capture was lost';
      api.on(
        'POST',
        resolutionOf(CASES.bookable),
        contractReply(ProviderMismatchView, decided(bookable, 'book', reason)),
      );
      const before = api.requests.length;
      const run = await asAdmin(
        `admin reconciliation resolve ${CASES.bookable} --decision book --reason`,
        reason,
      );
      expect(run.code, run.stderr).to.equal(0);
      const [sent] = resolutions(before);
      expect(sent?.method).to.equal('POST');
      expect(sent?.path).to.equal(resolutionOf(CASES.bookable));
      expect(sent?.body).to.deep.equal({ decision: 'book', reason });
      expect(run.stdout).to.match(/^Status: +resolved$/m);
      expect(run.stdout).to.match(/^Decision: +book$/m);
      expect(run.stdout).to.match(/^Reason: +webhook for the capture was lost$/m);
      expect(run.stdout).to.match(new RegExp(`^Resolved by: +${ADMIN.id}$`, 'm'));
    });

    it('exits 5 when the case was already decided otherwise (409)', async () => {
      api.on(
        'POST',
        resolutionOf(CASES.bookable),
        contractProblem('CONFLICT', 'This case was already decided: book'),
      );
      const run = await asAdmin(
        `admin reconciliation resolve ${CASES.bookable} --decision nothing_owed --reason`,
        'changed my mind',
      );
      expect(run.code).to.equal(5);
      expect(run.stderr).to.include('This case was already decided: book');
    });

    it("prints the API's decided case with --json", async () => {
      const reason = 'test payment by the provider';
      const answer = decided(unknown, 'nothing_owed', reason);
      api.on('POST', resolutionOf(CASES.unknown), contractReply(ProviderMismatchView, answer));
      const run = await asAdmin(
        `admin reconciliation resolve ${CASES.unknown} --decision nothing_owed --reason`,
        reason,
        '--json',
      );
      expect(run.code, run.stderr).to.equal(0);
      expect(JSON.parse(run.stdout)).to.deep.equal(answer);
      expect(lastRequest()?.body).to.deep.equal({ decision: 'nothing_owed', reason });
    });
  });

  describe('reconciliation run', () => {
    const summary = {
      since: AT,
      cursor: '2025-01-02T00:00:00.000Z',
      checked: 12,
      agreed: 8,
      unsettled: 1,
      mismatches: 3,
      removed: 0,
      opened: 2,
      cleared: 1,
    };
    before(() => api.on('POST', '/admin/reconciliation/runs', contractReply(ReconciliationRunView, summary)));

    it('starts a run and prints its summary', async () => {
      const before = api.requests.length;
      const run = await asAdmin('admin reconciliation run');
      expect(run.code, run.stderr).to.equal(0);
      expect(requestsSince(before, /^\/admin\//).map((r) => `${r.method} ${r.path}`)).to.deep.equal([
        'POST /admin/reconciliation/runs',
      ]);
      expect(run.stdout.split('\n').map((line) => line.replace(/ +/g, ' '))).to.deep.equal([
        'Since: 2025-01-01T00:00:00.000Z',
        'Cursor: 2025-01-02T00:00:00.000Z',
        'Checked: 12',
        'Agreed: 8',
        'Unsettled: 1',
        'Mismatches: 3',
        'Opened: 2',
        'Cleared: 1',
        '',
      ]);
    });

    it("prints the API's summary with --json", async () => {
      const run = await asAdmin('admin reconciliation run --json');
      expect(run.code, run.stderr).to.equal(0);
      expect(JSON.parse(run.stdout)).to.deep.equal(summary);
    });
  });

  describe('actions', () => {
    const action = (id: string, decision: string, subject: string, reason: string) => ({
      id,
      actor: ADMIN.id,
      action: `reconciliation.${decision}`,
      subject: `reconciliation_case:${subject}`,
      owner: null,
      reason,
      detail: { kind: 'unknown_to_ledger', provider_reference: 'pi_stranger' },
      created_at: '2025-01-03T00:00:00.000Z',
    });
    const trail = [
      action(
        '6a1d0c3a-0000-4000-8000-000000000001',
        'book',
        CASES.bookable,
        'webhook for the capture was lost',
      ),
      action(
        '6a1d0c3a-0000-4000-8000-000000000002',
        'nothing_owed',
        CASES.unknown,
        'test payment by the provider',
      ),
    ];
    before(() => {
      api.on('GET', '/admin/actions', contractReply(AdminActionPage, page(trail)));
      api.on(
        'GET',
        /^\/admin\/actions\?limit=1&offset=1$/,
        contractReply(AdminActionPage, page(trail.slice(1), 1, 1, 2)),
      );
      api.on('GET', /^\/admin\/actions\?owner=/, contractReply(AdminActionPage, page([])));
    });

    it('lists the decisions in the trail, who took them and why', async () => {
      const run = await asAdmin('admin actions');
      expect(run.code, run.stderr).to.equal(0);
      const [head, ...rows] = cellsOf(run.stdout, /│/);
      expect(head).to.deep.equal(['ID', 'WHEN', 'ACTOR', 'ACTION', 'SUBJECT', 'OWNER', 'REASON']);
      expect(rows.map((row) => row[0])).to.deep.equal(trail.map((entry) => entry.id));
      expect(rows.map((row) => row.slice(2))).to.deep.equal([
        [
          ADMIN.id,
          'reconciliation.book',
          `reconciliation_case:${CASES.bookable}`,
          '(platform)',
          'webhook for the capture was lost',
        ],
        [
          ADMIN.id,
          'reconciliation.nothing_owed',
          `reconciliation_case:${CASES.unknown}`,
          '(platform)',
          'test payment by the provider',
        ],
      ]);
    });

    it("asks for one admin's actions with --actor, or those on one user's resources with --owner", async () => {
      const mine = await asAdmin(`admin actions --actor ${ADMIN.id} --json`);
      expect(mine.code, mine.stderr).to.equal(0);
      expect((JSON.parse(mine.stdout) as { data: unknown[] }).data).to.have.length(2);
      expect(lastRequest()?.path).to.equal(`/admin/actions?actor=${ADMIN.id}`);
      const someone = '1e2d3c4b-0000-4000-8000-00000000abcd';
      const theirs = await asAdmin(`admin actions --owner ${someone}`);
      expect(theirs.code, theirs.stderr).to.equal(0);
      expect(theirs.stdout).to.equal('(none)\n');
      expect(lastRequest()?.path).to.equal(`/admin/actions?owner=${someone}`);
    });

    it("prints the API's page with --json, paged by --limit and --offset", async () => {
      const run = await asAdmin('admin actions --limit 1 --offset 1 --json');
      expect(run.code, run.stderr).to.equal(0);
      expect(JSON.parse(run.stdout)).to.deep.equal(page(trail.slice(1), 1, 1, 2));
      expect(lastRequest()?.path).to.equal('/admin/actions?limit=1&offset=1');
    });
  });

  describe('overdrawn', () => {
    const OVERDRAWN_ACCOUNT = '9c3a0e21-0000-4000-8000-000000000001';
    const PLATFORM_LOSS = '4a5b6c7d-0000-4000-8000-000000000001';
    const REMOVED_DEPOSIT = '4a5b6c7d-0000-4000-8000-000000000002';
    const exposure = {
      by_currency: [
        {
          currency: 'KWD',
          overdrawn_accounts: 1,
          overdrawn_total: amount(1500n, 'KWD'),
          losses: 0,
          losses_total: 0,
        },
        {
          currency: 'USD',
          overdrawn_accounts: 0,
          overdrawn_total: 0,
          losses: 1,
          losses_total: amount(990n, 'USD'),
        },
      ],
      platform_losses: [
        {
          id: PLATFORM_LOSS,
          deposit_id: REMOVED_DEPOSIT,
          reason: 'refund' as const,
          currency: 'USD',
          amount: amount(1000n, 'USD'),
          fee: amount(10n, 'USD'),
          loss: amount(990n, 'USD'),
          provider_reference: 're_1',
          booked_at: FOUND_AT,
        },
      ],
    };
    before(() => {
      const overdrawn = {
        id: OVERDRAWN_ACCOUNT,
        user_id: '1e2d3c4b-0000-4000-8000-000000000002',
        currency: 'KWD',
        balance: amount(-1500n, 'KWD'),
        available_balance: amount(-1500n, 'KWD'),
        metadata: {},
        created_at: AT,
        updated_at: AT,
        overdrawn_by: amount(1500n, 'KWD'),
      };
      api.on(
        'GET',
        '/admin/overdrawn-accounts',
        contractReply(OverdrawnAccountPage, { ...page([overdrawn]), ...exposure }),
      );
      api.on(
        'GET',
        /^\/admin\/overdrawn-accounts\?offset=1$/,
        contractReply(OverdrawnAccountPage, { ...page([], 20, 1, 1), ...exposure }),
      );
    });

    it('lists overdrawn accounts with how far below zero they are, then what users owe next to what the platform lost', async () => {
      const before = api.requests.length;
      const run = await asAdmin('admin overdrawn');
      expect(run.code, run.stderr).to.equal(0);
      expect(cellsOf(run.stdout, /│/)).to.deep.equal([
        ['ACCOUNT', 'USER', 'CURRENCY', 'BALANCE', 'OVERDRAWN BY'],
        [OVERDRAWN_ACCOUNT, '1e2d3c4b-0000-4000-8000-000000000002', 'KWD', '-1.500', '1.500'],
        ['CURRENCY', 'ACCOUNTS BELOW ZERO', 'OWED BACK', 'LOSSES', 'LOST'],
        ['KWD', '1', '1.500', '0', '0.000'],
        ['USD', '0', '0.00', '1', '9.90'],
        ['LOSS', 'DEPOSIT', 'REASON', 'CURRENCY', 'TAKEN BACK', 'FEE RETURNED', 'LOST', 'BOOKED'],
        [PLATFORM_LOSS, REMOVED_DEPOSIT, 'refund', 'USD', '10.00', '0.10', '9.90', FOUND_AT],
      ]);
      expect(requestsSince(before, /^\/admin\//).map((r) => `${r.method} ${r.path}`)).to.deep.equal([
        'GET /admin/overdrawn-accounts',
      ]);
    });

    it("prints the API's page with --json", async () => {
      const run = await asAdmin('admin overdrawn --offset 1 --json');
      expect(run.code, run.stderr).to.equal(0);
      expect(JSON.parse(run.stdout)).to.deep.equal({ ...page([], 20, 1, 1), ...exposure });
    });
  });

  describe('users', () => {
    before(() => {
      api.on(
        'GET',
        '/admin/users',
        contractReply(UserPage, page([ALICE, ALINA].map((user) => userView(user)))),
      );
      api.on(
        'GET',
        /^\/admin\/users\?username=BOB&/,
        contractReply(UserPage, page([userView(BOB)], 5, 0, 1)),
      );
      api.on(
        'GET',
        /^\/admin\/users\?status=disabled$/,
        contractReply(UserPage, page([userView(BOB, 'disabled')])),
      );
    });

    it('finds users whose username or e-mail starts with --query, in a table', async () => {
      const before = api.requests.length;
      const run = await asAdmin('admin users find --query ali');
      expect(run.code, run.stderr).to.equal(0);
      expect(requestsSince(before, /^\/admin\//).map((r) => `${r.method} ${r.path}`)).to.deep.equal([
        'GET /admin/users?q=ali',
      ]);
      expect(cellsOf(run.stdout, /│/)).to.deep.equal([
        ['ID', 'USERNAME', 'EMAIL', 'ROLE', 'STATUS', 'CREATED'],
        [ALICE.id, 'alice', 'alice@example.com', 'user', 'active', AT],
        [ALINA.id, 'alina', 'alina@example.com', 'user', 'active', AT],
      ]);
      expect(run.stderr).to.include('Showing 1-2 of 2.');
    });

    it("sends every criterion and the page, and prints the API's page with --json", async () => {
      const before = api.requests.length;
      const run = await asAdmin(
        'admin users find --username BOB --email bob@example.com --status active --limit 5 --offset 0 --json',
      );
      expect(run.code, run.stderr).to.equal(0);
      const [sent] = requestsSince(before, /^\/admin\//);
      expect(sent?.path).to.equal(
        '/admin/users?username=BOB&email=bob%40example.com&status=active&limit=5&offset=0',
      );
      expect(JSON.parse(run.stdout)).to.deep.equal(page([userView(BOB)], 5, 0, 1));
    });

    it('refuses a status it does not know before any request (exit 2)', async () => {
      const before = api.requests.length;
      const run = await asAdmin('admin users find --status banished');
      expect(run.code).to.equal(2);
      expect(run.stderr).to.include('Invalid values');
      expect(requestsSince(before, /^\/admin\//)).to.deep.equal([]);
    });

    it('disables a user, whose session then ends (exit 3), and enables them again', async () => {
      const status = `/admin/users/${BOB.id}/status`;
      api.on('PATCH', status, (request) =>
        contractReply(UserView, userView(BOB, (request.body as { status: 'active' | 'disabled' }).status)),
      );
      const before = api.requests.length;
      const disabled = await asAdmin(`admin users disable ${BOB.id} --reason`, ' chargeback ring ');
      expect(disabled.code, disabled.stderr).to.equal(0);
      expect(disabled.stdout).to.equal(`User bob (${BOB.id}) is disabled; their tokens are revoked.\n`);
      const [sent] = requestsSince(before, /^\/admin\//);
      expect(sent).to.deep.include({ method: 'PATCH', path: status });
      expect(sent?.body).to.deep.equal({ status: 'disabled', reason: 'chargeback ring' });
      // Their token is refused from now on.
      api.on('GET', '/accounts', contractProblem('AUTH_REQUIRED', 'The token was revoked'));
      expect((await asUser('account list')).code).to.equal(3);
      const listed = await asAdmin('admin users find --status disabled --json');
      expect((JSON.parse(listed.stdout) as { data: { id: string }[] }).data.map((u) => u.id)).to.deep.equal([
        BOB.id,
      ]);

      const enabled = await asAdmin(`admin users enable ${BOB.id} --json`);
      expect(enabled.code, enabled.stderr).to.equal(0);
      expect(JSON.parse(enabled.stdout)).to.include({ id: BOB.id, status: 'active' });
      expect(lastRequest()?.body).to.deep.equal({ status: 'active' });
      const login = await as(userHome)(`login --username ${BOB.username}`);
      expect(login.code, login.stderr).to.equal(0);
    });

    it('exits 4 for a user that does not exist, and 5 when an admin would disable themselves (422)', async () => {
      const nobody = '5d1e0c3a-0000-4000-8000-0000000000ff';
      api.on(
        'PATCH',
        `/admin/users/${nobody}/status`,
        contractProblem('RESOURCE_NOT_FOUND', 'User not found'),
      );
      api.on(
        'PATCH',
        `/admin/users/${ADMIN.id}/status`,
        contractProblem('BUSINESS_RULE_VIOLATION', 'An administrator cannot change their own status'),
      );
      const missing = await asAdmin(`admin users disable ${nobody}`);
      expect(missing.code).to.equal(4);
      expect(missing.stderr).to.include('User not found');
      const self = await asAdmin(`admin users disable ${ADMIN.id}`);
      expect(self.code).to.equal(5);
      expect(self.stderr).to.include('An administrator cannot change their own status');
    });
  });

  describe('deliveries', () => {
    /** The endpoint whose delivery log is read: another user's, so only an admin may read it. */
    const WATCHED = '653b6d43-0000-4000-8000-000000000001';
    const delivery = (
      n: number,
      status: 'succeeded' | 'pending' | 'failed',
      code: number | null,
      error: string | null,
    ) => ({
      id: `7e1d0c3a-0000-4000-8000-00000000000${n}`,
      endpoint_id: WATCHED,
      event_id: `6b324bd0-0000-4000-8000-00000000000${n}`,
      event_type: 'transaction.completed' as const,
      status,
      attempts: n,
      last_status_code: code,
      last_latency_ms: code === null ? null : 42,
      last_error: error,
      next_attempt_at: status === 'pending' ? '2025-01-02T00:00:30.000Z' : null,
      created_at: '2025-01-02T00:00:00.000Z',
      updated_at: '2025-01-02T00:00:00.000Z',
      delivered_at: status === 'succeeded' ? '2025-01-02T00:00:00.000Z' : null,
    });
    const log = [
      delivery(1, 'succeeded', 200, null),
      delivery(2, 'pending', null, 'connection refused'),
      delivery(3, 'failed', 500, null),
    ];
    before(() => {
      api.on(
        'GET',
        `/webhook-endpoints/${WATCHED}/deliveries`,
        contractReply(WebhookDeliveryPage, page(log)),
      );
      api.on(
        'GET',
        /\/deliveries\?status=failed&limit=1$/,
        contractReply(WebhookDeliveryPage, page(log.slice(2), 1, 0, 1)),
      );
    });

    it("shows the delivery log of another user's endpoint", async () => {
      const before = api.requests.length;
      const run = await asAdmin(`admin deliveries ${WATCHED}`);
      expect(run.code, run.stderr).to.equal(0);
      expect(requestsSince(before, /^\/webhook-endpoints\//).map((r) => r.path)).to.deep.equal([
        `/webhook-endpoints/${WATCHED}/deliveries`,
      ]);
      const [head, ...rows] = cellsOf(run.stdout, /│/);
      expect(head).to.deep.equal(['ID', 'EVENT', 'STATUS', 'ATTEMPTS', 'LAST', 'LATENCY', 'NEXT RETRY']);
      expect(rows.map((row) => row.slice(1))).to.deep.equal([
        ['transaction.completed', 'succeeded', '1', '200', '42 ms', ''],
        ['transaction.completed', 'pending', '2', 'connection refused', '', '2025-01-02T00:00:30.000Z'],
        ['transaction.completed', 'failed', '3', '500', '42 ms', ''],
      ]);
    });

    it("filters by --status and pages with --limit, printing the API's page with --json", async () => {
      const run = await asAdmin(`admin deliveries ${WATCHED} --status failed --limit 1 --json`);
      expect(run.code, run.stderr).to.equal(0);
      expect(lastRequest()?.path).to.equal(`/webhook-endpoints/${WATCHED}/deliveries?status=failed&limit=1`);
      expect(JSON.parse(run.stdout)).to.deep.equal(page(log.slice(2), 1, 0, 1));
    });

    it('exits 4 for an endpoint that does not exist', async () => {
      const nowhere = '5d1e0c3a-0000-4000-8000-0000000000ff';
      api.on(
        'GET',
        `/webhook-endpoints/${nowhere}/deliveries`,
        contractProblem('RESOURCE_NOT_FOUND', 'Webhook endpoint not found'),
      );
      const run = await asAdmin(`admin deliveries ${nowhere}`);
      expect(run.code).to.equal(4);
      expect(run.stderr).to.include('Webhook endpoint not found');
    });
  });

  describe('dead-letters', () => {
    /** A stranded confirmation and a poison message in the ledger's dead letters. */
    const EVENT = {
      id: '2f0d1c3b-0000-4000-8000-000000000001',
      type: 'PaymentProcessed',
      version: 1,
      occurred_at: FOUND_AT,
      correlation_id: 'stranded-1',
      data: { transaction_id: '0a1b2c3d-0000-4000-8000-000000000009', status: 'completed' },
    };
    const POISON = '{"id": "not-an-event", "type": "PaymentProcessed", ';
    before(() => {
      const letters = [{ event: EVENT }, { raw: POISON }];
      api.on(
        'GET',
        '/admin/dead-letters/ledger',
        contractReply(DeadLetterList, { queue: 'ledger', count: 2, data: letters }),
      );
      api.on(
        'GET',
        /^\/admin\/dead-letters\/ledger\?limit=1$/,
        contractReply(DeadLetterList, { queue: 'ledger', count: 2, data: letters.slice(0, 1) }),
      );
      api.on(
        'POST',
        '/admin/dead-letters/ledger/replay',
        contractReply(DeadLetterReplayView, { queue: 'ledger', replayed: 1 }),
      );
    });

    it('lists the dead letters of a queue: each event, and what is not JSON as it came', async () => {
      const before = api.requests.length;
      const run = await asAdmin('admin dead-letters list ledger');
      expect(run.code, run.stderr).to.equal(0);
      expect(requestsSince(before, /^\/admin\//).map((r) => `${r.method} ${r.path}`)).to.deep.equal([
        'GET /admin/dead-letters/ledger',
      ]);
      expect(cellsOf(run.stdout, /│/)).to.deep.equal([
        ['EVENT', 'TYPE', 'OCCURRED', 'DATA'],
        [EVENT.id, 'PaymentProcessed', EVENT.occurred_at, JSON.stringify(EVENT.data).slice(0, 59) + '…'],
        ['', '(not JSON)', '', POISON.trim()],
      ]);
      expect(run.stderr).to.include('2 of 2 dead letter(s) in ledger.');
    });

    it("asks for --limit of them and prints the API's answer with --json", async () => {
      const run = await asAdmin('admin dead-letters list ledger --limit 1 --json');
      expect(run.code, run.stderr).to.equal(0);
      expect(lastRequest()?.path).to.equal('/admin/dead-letters/ledger?limit=1');
      expect(JSON.parse(run.stdout)).to.deep.equal({ queue: 'ledger', count: 2, data: [{ event: EVENT }] });
    });

    it('refuses a queue no service behind the gateway serves, before any request (exit 2)', async () => {
      const before = api.requests.length;
      for (const action of ['list', 'replay']) {
        const run = await asAdmin(`admin dead-letters ${action} provider-sandbox`);
        expect(run.code, action).to.equal(2);
        expect(run.stderr, action).to.include('Invalid values');
      }
      expect(requestsSince(before, /^\/admin\//)).to.deep.equal([]);
    });

    it('replays up to --limit of them, then all that are left without it', async () => {
      const before = api.requests.length;
      const some = await asAdmin('admin dead-letters replay ledger --limit 1');
      expect(some.code, some.stderr).to.equal(0);
      expect(some.stdout).to.equal('Replayed 1 dead letter(s) onto ledger.\n');
      const all = await asAdmin('admin dead-letters replay ledger --reason', 'bug 12 fixed', '--json');
      expect(all.code, all.stderr).to.equal(0);
      expect(JSON.parse(all.stdout)).to.deep.equal({ queue: 'ledger', replayed: 1 });
      const sent = requestsSince(before, /^\/admin\//);
      expect(sent.map((r) => `${r.method} ${r.path}`)).to.deep.equal([
        'POST /admin/dead-letters/ledger/replay',
        'POST /admin/dead-letters/ledger/replay',
      ]);
      expect(sent.map((r) => r.body)).to.deep.equal([{ limit: 1 }, { reason: 'bug 12 fixed' }]);
      // Without --limit the body names no limit: every dead letter the queue holds now.
      expect(sent[1]?.headers['content-type']).to.equal('application/json');
    });
  });

  describe('without an admin login', () => {
    const FORBIDDEN: [string, string | RegExp, string][] = [
      [
        'GET',
        /^\/admin\/(reconciliation|actions|overdrawn-accounts)/,
        'Only an administrator may use the admin routes',
      ],
      ['POST', /^\/admin\/reconciliation\//, 'Only an administrator may use the admin routes'],
      ['GET', /^\/admin\/users/, 'Only an administrator may manage users'],
      ['PATCH', /^\/admin\/users\//, 'Only an administrator may manage users'],
      ['GET', /^\/webhook-endpoints\//, 'This webhook endpoint belongs to another user'],
      ['GET', /^\/admin\/dead-letters\//, 'Only an administrator may read or replay dead letters'],
      ['POST', /^\/admin\/dead-letters\//, 'Only an administrator may read or replay dead letters'],
    ];
    before(() => {
      for (const [method, path, detail] of FORBIDDEN)
        api.on(method, path, contractProblem('ACCESS_DENIED', detail));
    });

    const commands = [
      ['reconciliation list'],
      ['reconciliation list --csv'],
      [`reconciliation show ${CASES.unexplained}`],
      [`reconciliation resolve ${CASES.unexplained} --decision nothing_owed --reason`, 'not mine to say'],
      ['reconciliation run'],
      ['actions'],
      ['overdrawn'],
    ];

    it("exits 3 with the API's detail when the user is not an admin (403)", async () => {
      for (const [command, ...more] of commands) {
        const run = await asUser(`admin ${command}`, ...more);
        expect(run.code, command).to.equal(3);
        expect(run.stdout, command).to.equal('');
        expect(run.stderr, command).to.include('Only an administrator may use the admin routes');
      }
    });

    it("exits 3 with the API's detail for the users, deliveries and dead-letters commands too", async () => {
      for (const [command, detail] of [
        ['users find --query a', 'Only an administrator may manage users'],
        [`users disable ${ADMIN.id}`, 'Only an administrator may manage users'],
        ['deliveries 653b6d43-0000-4000-8000-000000000001', 'This webhook endpoint belongs to another user'],
        ['dead-letters list ledger', 'Only an administrator may read or replay dead letters'],
        ['dead-letters replay ledger', 'Only an administrator may read or replay dead letters'],
      ]) {
        const run = await asUser(`admin ${command}`);
        expect(run.code, command).to.equal(3);
        expect(run.stdout, command).to.equal('');
        expect(run.stderr, command).to.include(detail);
      }
    });

    it('puts the 403 problem body on stderr with --json', async () => {
      const run = await asUser('admin overdrawn --json');
      expect(run.code).to.equal(3);
      expect(JSON.parse(run.stderr)).to.include({ status: 403, code: 'ACCESS_DENIED' });
    });

    it('exits 3 before any request when nobody is logged in', async () => {
      const nobody = await mkdtemp(join(tmpdir(), 'payments-admin-'));
      try {
        const before = api.requests.length;
        const run = await as(nobody)('admin reconciliation list');
        expect(run.code).to.equal(3);
        expect(run.stderr).to.include('You are not logged in.');
        expect(requestsSince(before, /^\/admin\//)).to.deep.equal([]);
      } finally {
        await rm(nobody, { recursive: true, force: true });
      }
    });
  });

  describe('help', () => {
    it('lists the admin commands', async () => {
      const top = await asUser('--help');
      expect(top.stdout).to.match(/payments admin +Operators' commands/);
      const admin = await asUser('admin --help');
      for (const command of [
        'users',
        'reconciliation',
        'actions',
        'overdrawn',
        'deliveries',
        'dead-letters',
      ]) {
        expect(admin.stdout).to.match(new RegExp(`^  payments admin ${command} `, 'm'));
      }
      const users = await asUser('admin users --help');
      for (const command of ['find', 'disable', 'enable']) {
        expect(users.stdout).to.match(new RegExp(`^  payments admin users ${command} `, 'm'));
      }
      const deadLetters = await asUser('admin dead-letters --help');
      for (const command of ['list', 'replay']) {
        expect(deadLetters.stdout).to.match(new RegExp(`^  payments admin dead-letters ${command} `, 'm'));
      }
      const reconciliation = await asUser('admin reconciliation --help');
      for (const command of ['list', 'show', 'resolve', 'run']) {
        expect(reconciliation.stdout).to.match(
          new RegExp(`^  payments admin reconciliation ${command} `, 'm'),
        );
      }
    });

    it('asks for a subcommand (exit 2)', async () => {
      const run = await asAdmin('admin');
      expect(run.code).to.equal(2);
      expect(run.stderr).to.include('users, reconciliation, actions, overdrawn, deliveries or dead-letters');
    });
  });
});
