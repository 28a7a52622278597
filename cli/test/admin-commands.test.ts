import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import {
  DEAD_LETTER_EVENT,
  DEAD_LETTER_POISON,
  OVERDRAWN_ACCOUNT,
  PLATFORM_LOSS,
  RECONCILIATION_CASES,
  REMOVED_DEPOSIT,
  startFakeGateway,
  UNCONFIRMED_WITHDRAWAL,
  WATCHED_ENDPOINT,
  type FakeGateway,
  type SeenRequest,
} from './fake-gateway.js';
import { runPayments } from '@payments/testkit';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

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

describe('payments admin', function () {
  this.timeout(30_000);
  let gateway: FakeGateway;
  let adminHome: string;
  let userHome: string;
  let adminId: string;
  const as =
    (home: string) =>
    (...args: string[]) =>
      runPayments(args, {
        XDG_CONFIG_HOME: home,
        PAYMENTS_API_URL: gateway.url,
        PAYMENTS_PASSWORD: 'pw-12345',
      });
  const asAdmin = (...args: string[]) => as(adminHome)(...args);
  const asUser = (...args: string[]) => as(userHome)(...args);
  const requestsSince = (count: number, path: RegExp): SeenRequest[] =>
    gateway.requests.slice(count).filter((r) => path.test(r.path));

  before(async () => {
    gateway = await startFakeGateway();
    adminHome = await mkdtemp(join(tmpdir(), 'payments-admin-'));
    userHome = await mkdtemp(join(tmpdir(), 'payments-admin-'));
    for (const [home, name] of [
      [adminHome, 'ops'],
      [userHome, 'bob'],
    ] as const) {
      const registered = await as(home)('register', '--username', name, '--email', `${name}@example.com`);
      expect(registered.code, registered.stderr).to.equal(0);
      const login = await as(home)('login', '--username', name);
      expect(login.code, login.stderr).to.equal(0);
    }
    gateway.grantAdmin('ops');
    adminId = /user id ([0-9a-f-]{36})/.exec((await asAdmin('whoami')).stdout)?.[1] as string;
    expect(adminId).to.match(UUID);
  });
  after(async () => {
    await gateway.close();
    await rm(adminHome, { recursive: true, force: true });
    await rm(userHome, { recursive: true, force: true });
  });

  describe('reconciliation list', () => {
    it('shows withdrawals and mismatch cases in one table, amounts in their currency', async () => {
      const run = await asAdmin('admin', 'reconciliation', 'list');
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
          RECONCILIATION_CASES.bookable,
          '0a1b2c3d-0000-4000-8000-000000000001',
          'pi_captured',
          '25.50',
          '0.00',
          'USD',
          '2025-01-02T03:04:05.000Z',
        ],
        [
          'amount_differs',
          RECONCILIATION_CASES.unexplained,
          '0a1b2c3d-0000-4000-8000-000000000002',
          'pi_differs',
          '1.234',
          '1.200',
          'KWD',
          '2025-01-02T03:04:05.000Z',
        ],
        [
          'unknown_to_ledger',
          RECONCILIATION_CASES.unknown,
          '',
          'pi_stranger',
          '7.00',
          '0.00',
          'EUR',
          '2025-01-02T03:04:05.000Z',
        ],
      ]);
      expect(run.stderr).to.include('Showing 1-4 of 4.');
    });

    it('asks for the page given by --limit and --offset', async () => {
      const before = gateway.requests.length;
      const run = await asAdmin('admin', 'reconciliation', 'list', '--limit', '2', '--offset', '1');
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

    it("prints the API's page with --json", async () => {
      const run = await asAdmin('admin', 'reconciliation', 'list', '--json');
      expect(run.code, run.stderr).to.equal(0);
      const page = JSON.parse(run.stdout) as {
        data: { kind: string; id: string; provider_amount?: number }[];
        pagination: unknown;
      };
      expect(page.data.map((item) => item.kind)).to.deep.equal([
        'unconfirmed_withdrawal',
        'captured_not_credited',
        'amount_differs',
        'unknown_to_ledger',
      ]);
      expect(page.data[2]).to.include({ id: RECONCILIATION_CASES.unexplained, provider_amount: 1.234 });
      expect(page.pagination).to.deep.equal({ limit: 20, offset: 0, total: 4 });
    });

    it("prints the API's CSV report as it came with --csv", async () => {
      const before = gateway.requests.length;
      const run = await asAdmin('admin', 'reconciliation', 'list', '--csv');
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

    it('refuses --csv with --limit before asking the API, the report being unpaged (exit 2)', async () => {
      const before = gateway.requests.length;
      const run = await asAdmin('admin', 'reconciliation', 'list', '--csv', '--limit', '5');
      expect(run.code).to.equal(2);
      expect(run.stderr).to.include('leave out --limit and --offset');
      expect(requestsSince(before, /^\/admin\//)).to.deep.equal([]);
    });
  });

  describe('reconciliation show', () => {
    it('shows a case with both sides of the amount', async () => {
      const before = gateway.requests.length;
      const run = await asAdmin('admin', 'reconciliation', 'show', RECONCILIATION_CASES.unexplained);
      expect(run.code, run.stderr).to.equal(0);
      expect(run.stdout).to.match(new RegExp(`^Case: +${RECONCILIATION_CASES.unexplained}$`, 'm'));
      expect(run.stdout).to.match(/^Kind: +amount_differs$/m);
      expect(run.stdout).to.match(/^Status: +open$/m);
      expect(run.stdout).to.match(/^By the provider: +1\.234 KWD$/m);
      expect(run.stdout).to.match(/^By the books: +1\.200 KWD$/m);
      expect(run.stdout).not.to.include('Decision');
      expect(requestsSince(before, /^\/admin\//).map((r) => `${r.method} ${r.path}`)).to.deep.equal([
        `GET /admin/reconciliation/cases/${RECONCILIATION_CASES.unexplained}`,
      ]);
    });

    it('says when the ledger has no transaction for the case', async () => {
      const run = await asAdmin('admin', 'reconciliation', 'show', RECONCILIATION_CASES.unknown);
      expect(run.stdout).to.match(/^Transaction: +\(none in the ledger\)$/m);
    });

    it("prints the API's case with --json", async () => {
      const run = await asAdmin('admin', 'reconciliation', 'show', RECONCILIATION_CASES.bookable, '--json');
      expect(run.code, run.stderr).to.equal(0);
      expect(JSON.parse(run.stdout)).to.include({
        id: RECONCILIATION_CASES.bookable,
        kind: 'captured_not_credited',
        provider_amount: 25.5,
        status: 'open',
      });
    });

    it('exits 4 with the detail for a case that does not exist', async () => {
      const run = await asAdmin('admin', 'reconciliation', 'show', '5d1e0c3a-0000-4000-8000-0000000000ff');
      expect(run.code).to.equal(4);
      expect(run.stderr).to.include('Reconciliation case not found');
    });
  });

  describe('reconciliation resolve', () => {
    const resolutions = (before: number) => requestsSince(before, /\/resolution$/);

    it('refuses a missing --reason before any request (exit 2)', async () => {
      const before = gateway.requests.length;
      const run = await asAdmin(
        'admin',
        'reconciliation',
        'resolve',
        RECONCILIATION_CASES.bookable,
        '--decision',
        'book',
      );
      expect(run.code).to.equal(2);
      expect(run.stderr).to.include('Missing required argument: reason');
      expect(gateway.requests.length).to.equal(before);
    });

    it('refuses a reason under 3 characters, and a decision it does not know, before any request (exit 2)', async () => {
      const before = gateway.requests.length;
      const short = await asAdmin(
        'admin',
        'reconciliation',
        'resolve',
        RECONCILIATION_CASES.bookable,
        '--decision',
        'book',
        '--reason',
        ' ok ',
      );
      expect(short.code).to.equal(2);
      expect(short.stderr).to.include('--reason must say why in 3 to 1000 characters');
      const unknown = await asAdmin(
        'admin',
        'reconciliation',
        'resolve',
        RECONCILIATION_CASES.bookable,
        '--decision',
        'waive',
        '--reason',
        'refund missed',
      );
      expect(unknown.code).to.equal(2);
      expect(unknown.stderr).to.include('Invalid values');
      expect(resolutions(before)).to.deep.equal([]);
    });

    it("exits 5 with the API's detail when the provider's records do not explain the difference (409)", async () => {
      const run = await asAdmin(
        'admin',
        'reconciliation',
        'resolve',
        RECONCILIATION_CASES.unexplained,
        '--decision',
        'book',
        '--reason',
        'provider says so',
      );
      expect(run.code).to.equal(5);
      expect(run.stdout).to.equal('');
      expect(run.stderr).to.include("The provider's records do not explain this difference (amount_differs)");
    });

    it('puts the problem body on stderr with --json (409)', async () => {
      const run = await asAdmin(
        'admin',
        'reconciliation',
        'resolve',
        RECONCILIATION_CASES.unexplained,
        '--decision',
        'book',
        '--reason',
        'provider says so',
        '--json',
      );
      expect(run.code).to.equal(5);
      expect(JSON.parse(run.stderr)).to.include({ status: 409, code: 'CONFLICT' });
    });

    it('exits 5 when there is nothing in the ledger to book against (422)', async () => {
      const run = await asAdmin(
        'admin',
        'reconciliation',
        'resolve',
        RECONCILIATION_CASES.unknown,
        '--decision',
        'book',
        '--reason',
        'stranger payment',
      );
      expect(run.code).to.equal(5);
      expect(run.stderr).to.include('Nothing of the ledger to book this against');
    });

    it('sends the decision and the reason and prints the decided case', async () => {
      const before = gateway.requests.length;
      const run = await asAdmin(
        'admin',
        'reconciliation',
        'resolve',
        RECONCILIATION_CASES.bookable,
        '--decision',
        'book',
        '--reason',
        'webhook for the capture was lost',
      );
      expect(run.code, run.stderr).to.equal(0);
      const [sent] = resolutions(before);
      expect(sent?.method).to.equal('POST');
      expect(sent?.path).to.equal(`/admin/reconciliation/cases/${RECONCILIATION_CASES.bookable}/resolution`);
      expect(sent?.body).to.deep.equal({ decision: 'book', reason: 'webhook for the capture was lost' });
      expect(run.stdout).to.match(/^Status: +resolved$/m);
      expect(run.stdout).to.match(/^Decision: +book$/m);
      expect(run.stdout).to.match(/^Reason: +webhook for the capture was lost$/m);
      expect(run.stdout).to.match(new RegExp(`^Resolved by: +${adminId}$`, 'm'));
      const listed = await asAdmin('admin', 'reconciliation', 'list', '--json');
      const ids = (JSON.parse(listed.stdout) as { data: { id: string }[] }).data.map((item) => item.id);
      expect(ids).not.to.include(RECONCILIATION_CASES.bookable);
    });

    it('exits 5 when the case was already decided otherwise (409)', async () => {
      const run = await asAdmin(
        'admin',
        'reconciliation',
        'resolve',
        RECONCILIATION_CASES.bookable,
        '--decision',
        'nothing_owed',
        '--reason',
        'changed my mind',
      );
      expect(run.code).to.equal(5);
      expect(run.stderr).to.include('This case was already decided: book');
    });

    it("prints the API's decided case with --json", async () => {
      const run = await asAdmin(
        'admin',
        'reconciliation',
        'resolve',
        RECONCILIATION_CASES.unknown,
        '--decision',
        'nothing_owed',
        '--reason',
        'test payment by the provider',
        '--json',
      );
      expect(run.code, run.stderr).to.equal(0);
      expect(JSON.parse(run.stdout)).to.include({
        id: RECONCILIATION_CASES.unknown,
        status: 'resolved',
        decision: 'nothing_owed',
        reason: 'test payment by the provider',
        resolved_by: adminId,
      });
    });
  });

  describe('reconciliation run', () => {
    it('starts a run and prints its summary', async () => {
      const before = gateway.requests.length;
      const run = await asAdmin('admin', 'reconciliation', 'run');
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
      const run = await asAdmin('admin', 'reconciliation', 'run', '--json');
      expect(run.code, run.stderr).to.equal(0);
      expect(JSON.parse(run.stdout)).to.deep.equal({
        since: '2025-01-01T00:00:00.000Z',
        cursor: '2025-01-02T00:00:00.000Z',
        checked: 12,
        agreed: 8,
        unsettled: 1,
        mismatches: 3,
        opened: 2,
        cleared: 1,
      });
    });
  });

  describe('actions', () => {
    it('lists the decisions taken above in the trail, who took them and why', async () => {
      const run = await asAdmin('admin', 'actions');
      expect(run.code, run.stderr).to.equal(0);
      const [head, ...rows] = cellsOf(run.stdout, /│/);
      expect(head).to.deep.equal(['ID', 'WHEN', 'ACTOR', 'ACTION', 'SUBJECT', 'OWNER', 'REASON']);
      expect(rows.map((row) => row[0])).to.satisfy((ids: string[]) => ids.every((id) => UUID.test(id)));
      expect(rows.map((row) => row.slice(2))).to.deep.equal([
        [
          adminId,
          'reconciliation.book',
          `reconciliation_case:${RECONCILIATION_CASES.bookable}`,
          '(platform)',
          'webhook for the capture was lost',
        ],
        [
          adminId,
          'reconciliation.nothing_owed',
          `reconciliation_case:${RECONCILIATION_CASES.unknown}`,
          '(platform)',
          'test payment by the provider',
        ],
      ]);
    });

    it("asks for one admin's actions with --actor, or those on one user's resources with --owner", async () => {
      const mine = await asAdmin('admin', 'actions', '--actor', adminId, '--json');
      expect(mine.code, mine.stderr).to.equal(0);
      expect((JSON.parse(mine.stdout) as { data: unknown[] }).data).to.have.length(2);
      expect(gateway.requests.at(-1)?.path).to.equal(`/admin/actions?actor=${adminId}`);
      const someone = '1e2d3c4b-0000-4000-8000-00000000abcd';
      const theirs = await asAdmin('admin', 'actions', '--owner', someone);
      expect(theirs.code, theirs.stderr).to.equal(0);
      expect(theirs.stdout).to.equal('(none)\n');
      expect(gateway.requests.at(-1)?.path).to.equal(`/admin/actions?owner=${someone}`);
    });

    it("prints the API's page with --json, paged by --limit and --offset", async () => {
      const run = await asAdmin('admin', 'actions', '--limit', '1', '--offset', '1', '--json');
      expect(run.code, run.stderr).to.equal(0);
      const page = JSON.parse(run.stdout) as {
        data: { action: string; detail: unknown }[];
        pagination: unknown;
      };
      expect(page.data.map((a) => a.action)).to.deep.equal(['reconciliation.nothing_owed']);
      expect(page.data[0]?.detail).to.deep.equal({
        kind: 'unknown_to_ledger',
        provider_reference: 'pi_stranger',
      });
      expect(page.pagination).to.deep.equal({ limit: 1, offset: 1, total: 2 });
      expect(gateway.requests.at(-1)?.path).to.equal('/admin/actions?limit=1&offset=1');
    });
  });

  describe('overdrawn', () => {
    it('lists overdrawn accounts with how far below zero they are, then what users owe next to what the platform lost', async () => {
      const before = gateway.requests.length;
      const run = await asAdmin('admin', 'overdrawn');
      expect(run.code, run.stderr).to.equal(0);
      expect(cellsOf(run.stdout, /│/)).to.deep.equal([
        ['ACCOUNT', 'USER', 'CURRENCY', 'BALANCE', 'OVERDRAWN BY'],
        [OVERDRAWN_ACCOUNT, '1e2d3c4b-0000-4000-8000-000000000002', 'KWD', '-1.500', '1.500'],
        ['CURRENCY', 'ACCOUNTS BELOW ZERO', 'OWED BACK', 'LOSSES', 'LOST'],
        ['KWD', '1', '1.500', '0', '0.000'],
        ['USD', '0', '0.00', '1', '9.90'],
        ['LOSS', 'DEPOSIT', 'REASON', 'CURRENCY', 'TAKEN BACK', 'FEE RETURNED', 'LOST', 'BOOKED'],
        [
          PLATFORM_LOSS,
          REMOVED_DEPOSIT,
          'refund',
          'USD',
          '10.00',
          '0.10',
          '9.90',
          '2025-01-02T03:04:05.000Z',
        ],
      ]);
      expect(requestsSince(before, /^\/admin\//).map((r) => `${r.method} ${r.path}`)).to.deep.equal([
        'GET /admin/overdrawn-accounts',
      ]);
    });

    it("prints the API's page with --json", async () => {
      const run = await asAdmin('admin', 'overdrawn', '--offset', '1', '--json');
      expect(run.code, run.stderr).to.equal(0);
      const body = JSON.parse(run.stdout);
      expect(body).to.deep.include({ data: [], pagination: { limit: 20, offset: 1, total: 1 } });
      expect(body.platform_losses).to.have.length(1);
      expect(body.by_currency.map((total: { currency: string }) => total.currency)).to.deep.equal([
        'KWD',
        'USD',
      ]);
    });
  });

  describe('users', () => {
    let bobId: string;
    const ids: Record<string, string> = {};

    before(async () => {
      for (const [username, email] of [
        ['alice', 'Alice@Example.com'],
        ['alina', 'alina@example.com'],
      ] as const) {
        const response = await fetch(`${gateway.url}/user`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ username, email, password: 'pw-12345' }),
        });
        ids[username] = ((await response.json()) as { id: string }).id;
      }
      bobId = /user id ([0-9a-f-]{36})/.exec((await asUser('whoami')).stdout)?.[1] as string;
      expect(bobId).to.match(UUID);
    });

    it('finds users whose username or e-mail starts with --query, in a table', async () => {
      const before = gateway.requests.length;
      const run = await asAdmin('admin', 'users', 'find', '--query', 'ali');
      expect(run.code, run.stderr).to.equal(0);
      expect(requestsSince(before, /^\/admin\//).map((r) => `${r.method} ${r.path}`)).to.deep.equal([
        'GET /admin/users?q=ali',
      ]);
      expect(cellsOf(run.stdout, /│/)).to.deep.equal([
        ['ID', 'USERNAME', 'EMAIL', 'ROLE', 'STATUS', 'CREATED'],
        [ids.alice, 'alice', 'alice@example.com', 'user', 'active', '2025-01-01T00:00:00.000Z'],
        [ids.alina, 'alina', 'alina@example.com', 'user', 'active', '2025-01-01T00:00:00.000Z'],
      ]);
      expect(run.stderr).to.include('Showing 1-2 of 2.');
    });

    it("sends every criterion and the page, and prints the API's page with --json", async () => {
      const before = gateway.requests.length;
      const run = await asAdmin(
        'admin',
        'users',
        'find',
        '--username',
        'BOB',
        '--email',
        'bob@example.com',
        '--status',
        'active',
        '--limit',
        '5',
        '--offset',
        '0',
        '--json',
      );
      expect(run.code, run.stderr).to.equal(0);
      const [sent] = requestsSince(before, /^\/admin\//);
      expect(sent?.path).to.equal(
        '/admin/users?username=BOB&email=bob%40example.com&status=active&limit=5&offset=0',
      );
      const page = JSON.parse(run.stdout) as { data: { id: string; role: string }[]; pagination: unknown };
      expect(page.data.map((u) => u.id)).to.deep.equal([bobId]);
      expect(page.pagination).to.deep.equal({ limit: 5, offset: 0, total: 1 });
    });

    it('refuses a status it does not know before any request (exit 2)', async () => {
      const before = gateway.requests.length;
      const run = await asAdmin('admin', 'users', 'find', '--status', 'banished');
      expect(run.code).to.equal(2);
      expect(run.stderr).to.include('Invalid values');
      expect(requestsSince(before, /^\/admin\//)).to.deep.equal([]);
    });

    it('disables a user, whose session then ends (exit 3), and enables them again', async () => {
      const before = gateway.requests.length;
      const disabled = await asAdmin('admin', 'users', 'disable', bobId, '--reason', ' chargeback ring ');
      expect(disabled.code, disabled.stderr).to.equal(0);
      expect(disabled.stdout).to.equal(`User bob (${bobId}) is disabled; their tokens are revoked.\n`);
      const [sent] = requestsSince(before, /^\/admin\//);
      expect(sent).to.deep.include({ method: 'PATCH', path: `/admin/users/${bobId}/status` });
      expect(sent?.body).to.deep.equal({ status: 'disabled', reason: 'chargeback ring' });
      expect((await asUser('account', 'list')).code).to.equal(3);
      const listed = await asAdmin('admin', 'users', 'find', '--status', 'disabled', '--json');
      expect((JSON.parse(listed.stdout) as { data: { id: string }[] }).data.map((u) => u.id)).to.deep.equal([
        bobId,
      ]);

      const enabled = await asAdmin('admin', 'users', 'enable', bobId, '--json');
      expect(enabled.code, enabled.stderr).to.equal(0);
      expect(JSON.parse(enabled.stdout)).to.include({ id: bobId, status: 'active' });
      expect(gateway.requests.at(-1)?.body).to.deep.equal({ status: 'active' });
      const login = await as(userHome)('login', '--username', 'bob');
      expect(login.code, login.stderr).to.equal(0);
    });

    it('exits 4 for a user that does not exist, and 5 when an admin would disable themselves (422)', async () => {
      const missing = await asAdmin('admin', 'users', 'disable', '5d1e0c3a-0000-4000-8000-0000000000ff');
      expect(missing.code).to.equal(4);
      expect(missing.stderr).to.include('User not found');
      const self = await asAdmin('admin', 'users', 'disable', adminId);
      expect(self.code).to.equal(5);
      expect(self.stderr).to.include('An administrator cannot change their own status');
    });
  });

  describe('deliveries', () => {
    it("shows the delivery log of another user's endpoint", async () => {
      const before = gateway.requests.length;
      const run = await asAdmin('admin', 'deliveries', WATCHED_ENDPOINT);
      expect(run.code, run.stderr).to.equal(0);
      expect(requestsSince(before, /^\/webhook-endpoints\//).map((r) => r.path)).to.deep.equal([
        `/webhook-endpoints/${WATCHED_ENDPOINT}/deliveries`,
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
      const run = await asAdmin(
        'admin',
        'deliveries',
        WATCHED_ENDPOINT,
        '--status',
        'failed',
        '--limit',
        '1',
        '--json',
      );
      expect(run.code, run.stderr).to.equal(0);
      expect(gateway.requests.at(-1)?.path).to.equal(
        `/webhook-endpoints/${WATCHED_ENDPOINT}/deliveries?status=failed&limit=1`,
      );
      const page = JSON.parse(run.stdout) as { data: { status: string }[]; pagination: unknown };
      expect(page.data.map((d) => d.status)).to.deep.equal(['failed']);
    });

    it('exits 4 for an endpoint that does not exist', async () => {
      const run = await asAdmin('admin', 'deliveries', '5d1e0c3a-0000-4000-8000-0000000000ff');
      expect(run.code).to.equal(4);
      expect(run.stderr).to.include('Webhook endpoint not found');
    });
  });

  describe('dead-letters', () => {
    it('lists the dead letters of a queue: each event, and what is not JSON as it came', async () => {
      const before = gateway.requests.length;
      const run = await asAdmin('admin', 'dead-letters', 'list', 'ledger');
      expect(run.code, run.stderr).to.equal(0);
      expect(requestsSince(before, /^\/admin\//).map((r) => `${r.method} ${r.path}`)).to.deep.equal([
        'GET /admin/dead-letters/ledger',
      ]);
      expect(cellsOf(run.stdout, /│/)).to.deep.equal([
        ['EVENT', 'TYPE', 'OCCURRED', 'DATA'],
        [
          DEAD_LETTER_EVENT.id,
          'PaymentProcessed',
          DEAD_LETTER_EVENT.occurred_at,
          JSON.stringify(DEAD_LETTER_EVENT.data).slice(0, 59) + '…',
        ],
        ['', '(not JSON)', '', DEAD_LETTER_POISON.trim()],
      ]);
      expect(run.stderr).to.include('2 of 2 dead letter(s) in ledger.');
    });

    it("asks for --limit of them and prints the API's answer with --json", async () => {
      const run = await asAdmin('admin', 'dead-letters', 'list', 'ledger', '--limit', '1', '--json');
      expect(run.code, run.stderr).to.equal(0);
      expect(gateway.requests.at(-1)?.path).to.equal('/admin/dead-letters/ledger?limit=1');
      expect(JSON.parse(run.stdout)).to.deep.equal({
        queue: 'ledger',
        count: 2,
        data: [{ event: DEAD_LETTER_EVENT }],
      });
    });

    it('refuses a queue no service behind the gateway serves, before any request (exit 2)', async () => {
      const before = gateway.requests.length;
      for (const action of ['list', 'replay']) {
        const run = await asAdmin('admin', 'dead-letters', action, 'provider-sandbox');
        expect(run.code, action).to.equal(2);
        expect(run.stderr, action).to.include('Invalid values');
      }
      expect(requestsSince(before, /^\/admin\//)).to.deep.equal([]);
    });

    it('replays up to --limit of them, then all that are left without it', async () => {
      const before = gateway.requests.length;
      const some = await asAdmin('admin', 'dead-letters', 'replay', 'ledger', '--limit', '1');
      expect(some.code, some.stderr).to.equal(0);
      expect(some.stdout).to.equal('Replayed 1 dead letter(s) onto ledger.\n');
      const all = await asAdmin(
        'admin',
        'dead-letters',
        'replay',
        'ledger',
        '--reason',
        'bug 12 fixed',
        '--json',
      );
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
      // The poison came back, as it would on the broker.
      const listed = await asAdmin('admin', 'dead-letters', 'list', 'ledger', '--json');
      expect(JSON.parse(listed.stdout)).to.deep.include({ count: 1, data: [{ raw: DEAD_LETTER_POISON }] });
    });
  });

  describe('without an admin login', () => {
    const commands = [
      ['reconciliation', 'list'],
      ['reconciliation', 'list', '--csv'],
      ['reconciliation', 'show', RECONCILIATION_CASES.unexplained],
      [
        'reconciliation',
        'resolve',
        RECONCILIATION_CASES.unexplained,
        '--decision',
        'nothing_owed',
        '--reason',
        'not mine to say',
      ],
      ['reconciliation', 'run'],
      ['actions'],
      ['overdrawn'],
    ];

    it("exits 3 with the API's detail when the user is not an admin (403)", async () => {
      for (const args of commands) {
        const run = await asUser('admin', ...args);
        expect(run.code, args.join(' ')).to.equal(3);
        expect(run.stdout, args.join(' ')).to.equal('');
        expect(run.stderr, args.join(' ')).to.include('Only an administrator may use the admin routes');
      }
      const show = await asAdmin('admin', 'reconciliation', 'show', RECONCILIATION_CASES.unexplained);
      expect(show.stdout).to.match(/^Status: +open$/m);
    });

    it("exits 3 with the API's detail for the users, deliveries and dead-letters commands too", async () => {
      for (const [args, detail] of [
        [['users', 'find', '--query', 'a'], 'Only an administrator may manage users'],
        [['users', 'disable', adminId], 'Only an administrator may manage users'],
        [['deliveries', WATCHED_ENDPOINT], 'This webhook endpoint belongs to another user'],
        [['dead-letters', 'list', 'ledger'], 'Only an administrator may read or replay dead letters'],
        [['dead-letters', 'replay', 'ledger'], 'Only an administrator may read or replay dead letters'],
      ] as const) {
        const run = await asUser('admin', ...args);
        expect(run.code, args.join(' ')).to.equal(3);
        expect(run.stdout, args.join(' ')).to.equal('');
        expect(run.stderr, args.join(' ')).to.include(detail);
      }
    });

    it('puts the 403 problem body on stderr with --json', async () => {
      const run = await asUser('admin', 'overdrawn', '--json');
      expect(run.code).to.equal(3);
      expect(JSON.parse(run.stderr)).to.include({ status: 403, code: 'ACCESS_DENIED' });
    });

    it('exits 3 before any request when nobody is logged in', async () => {
      const nobody = await mkdtemp(join(tmpdir(), 'payments-admin-'));
      try {
        const before = gateway.requests.length;
        const run = await as(nobody)('admin', 'reconciliation', 'list');
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
      const admin = await asUser('admin', '--help');
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
      const users = await asUser('admin', 'users', '--help');
      for (const command of ['find', 'disable', 'enable']) {
        expect(users.stdout).to.match(new RegExp(`^  payments admin users ${command} `, 'm'));
      }
      const deadLetters = await asUser('admin', 'dead-letters', '--help');
      for (const command of ['list', 'replay']) {
        expect(deadLetters.stdout).to.match(new RegExp(`^  payments admin dead-letters ${command} `, 'm'));
      }
      const reconciliation = await asUser('admin', 'reconciliation', '--help');
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
