import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { eventually } from '@payments/testkit';
import { useLedgerHarness, type ApiResponse, type TestUser } from './support/ledger-harness.js';

interface StatementBody {
  opening_balance: number;
  closing_balance: number;
  entries: { id: string; amount: number; balance: number; type: string | null; created_at: string }[];
  has_more: boolean;
  from: string;
  to: string;
}

const cents = (value: number) => Math.round(value * 100);

/** opening + each entry = its running balance, and the last one (or the opening) is the closing balance. */
function expectConsistent(body: StatementBody) {
  let balance = cents(body.opening_balance);
  for (const line of body.entries) {
    balance += cents(line.amount);
    expect(cents(line.balance), `running balance after entry ${line.id}`).to.equal(balance);
  }
  if (!body.has_more) expect(cents(body.closing_balance)).to.equal(balance);
}

describe('ledger statements and past balances', function () {
  this.timeout(60_000);
  let alice: TestUser;

  const ledger = useLedgerHarness({ env: { FEE_TRANSFER_FIXED: '0.05', FEE_TRANSFER_PERCENT: '0' } });
  before(async () => {
    alice = ledger.newUser();
  });

  const statement = (user: TestUser, accountId: string, query = '') =>
    ledger.call('GET', `/account/${accountId}/statement${query ? `?${query}` : ''}`, { user });

  /**
   * Books entries at chosen moments on an account opened at `openedAt`, balanced against a system-side account and
   * added to the account's balance, as settlement would.
   */
  const book = async (accountId: string, openedAt: string, moves: [string, number][]) => {
    await ledger.db.transaction(async (trx) => {
      for (const [at, amount] of moves) {
        const transactionId = randomUUID();
        await trx('entries').insert([
          { transaction_id: transactionId, account_id: accountId, amount, currency: 'USD', created_at: at },
          {
            transaction_id: transactionId,
            account_id: randomUUID(),
            amount: -amount,
            currency: 'USD',
            created_at: at,
          },
        ]);
      }
      const total = moves.reduce((sum, [, amount]) => sum + amount, 0);
      await trx('accounts')
        .where({ id: accountId })
        .update({ balance: trx.raw('balance + ?', [total]), created_at: openedAt });
    });
  };

  it('lists the entries of real money movements with a running balance from opening to closing', async () => {
    const main = await ledger.openAccount(alice);
    const savings = await ledger.openAccount(alice);
    const start = new Date().toISOString();
    await ledger.fund(alice, main.id, 100);
    const transfer = await ledger.transfer(alice, main.id, savings.id, 30);
    expect(transfer.status, JSON.stringify(transfer.body)).to.equal(202);
    await ledger.waitForStatus(alice, transfer.body.id, 'completed');
    await ledger.fund(alice, main.id, 0.5);

    const response = await statement(alice, main.id, `from=${encodeURIComponent(start)}`);
    expect(response.status, response.text).to.equal(200);
    const body = response.body as StatementBody;
    expect(body.opening_balance).to.equal(0);
    expect(body.entries.map((e) => [e.type, e.amount, e.balance])).to.deep.equal([
      ['deposit', 100, 100],
      ['transfer', -30.05, 69.95],
      ['deposit', 0.5, 70.45],
    ]);
    expect(body.closing_balance).to.equal(70.45);
    expect(body.closing_balance).to.equal((await ledger.balanceOf(alice, main.id)).balance);
    expect(body.has_more).to.equal(false);
    expect(response.headers.get('cache-control')).to.equal('no-store');

    const received = (await statement(alice, savings.id, `from=${encodeURIComponent(start)}`)).body;
    expect(received.entries).to.have.length(1);
    expect(received.entries[0]).to.include({ type: 'transfer', amount: 30, balance: 30 });
    expect(received.entries[0].counterparty_account_id).to.equal(main.id);
  });

  describe('with entries at known moments', () => {
    let accountId: string;
    before(async () => {
      accountId = (await ledger.openAccount(alice)).id;
      await book(accountId, '2024-12-01T00:00:00Z', [
        ['2025-01-01T00:00:00Z', 1000],
        ['2025-01-15T12:00:00Z', -300],
        ['2025-01-20T00:00:00Z', -1200],
        ['2025-02-01T00:00:00Z', 650],
      ]);
    });

    it('counts an entry at `from` in the period and one at `to` in the next', async () => {
      const { body, status } = await statement(
        alice,
        accountId,
        'from=2025-01-01T00:00:00Z&to=2025-02-01T00:00:00Z',
      );
      expect(status).to.equal(200);
      expect(body.opening_balance).to.equal(0);
      expect(
        body.entries.map((e: StatementBody['entries'][number]) => [e.created_at, e.amount, e.balance]),
      ).to.deep.equal([
        ['2025-01-01T00:00:00.000Z', 10, 10],
        ['2025-01-15T12:00:00.000Z', -3, 7],
        ['2025-01-20T00:00:00.000Z', -12, -5],
      ]);
      expect(body.closing_balance).to.equal(-5);
      expect(body.entries.every((e: StatementBody['entries'][number]) => e.type === null)).to.equal(true);

      const later = (
        await statement(alice, accountId, 'from=2025-01-01T00:00:00.001Z&to=2025-02-01T00:00:00.001Z')
      ).body;
      expect(later.opening_balance).to.equal(10);
      expect(later.entries.map((e: StatementBody['entries'][number]) => e.amount)).to.deep.equal([
        -3, -12, 6.5,
      ]);
      expect(later.closing_balance).to.equal(1.5);
    });

    it('reads moments with any offset as the same instants', async () => {
      const utc = await statement(alice, accountId, 'from=2025-01-15T12:00:00Z&to=2025-01-20T00:00:00Z');
      const offsets = await statement(
        alice,
        accountId,
        `from=${encodeURIComponent('2025-01-15T14:00:00+02:00')}&to=${encodeURIComponent('2025-01-19T19:00:00-05:00')}`,
      );
      expect(offsets.status, offsets.text).to.equal(200);
      expect(offsets.body).to.deep.equal(utc.body);
      expect(utc.body.entries).to.have.length(1);
      expect(utc.body).to.include({ opening_balance: 10, closing_balance: 7 });
    });

    it('answers the balance at a past moment from the entries before it, matching the statement edges', async () => {
      const at = async (moment: string) => {
        const response = await ledger.call(
          'GET',
          `/account/${accountId}/balance?at=${encodeURIComponent(moment)}`,
          {
            user: alice,
          },
        );
        expect(response.status, response.text).to.equal(200);
        return response.body;
      };
      expect(await at('2024-12-31T23:59:59.999Z')).to.deep.equal({
        account_id: accountId,
        balance: 0,
        currency: 'USD',
        at: '2024-12-31T23:59:59.999Z',
      });
      expect((await at('2025-01-15T12:00:00Z')).balance).to.equal(10);
      expect((await at('2025-01-15T13:00:00+01:00')).balance).to.equal(10);
      expect((await at('2025-01-15T12:00:00.001Z')).balance).to.equal(7);
      expect((await at('2025-01-25T00:00:00Z')).balance).to.equal(-5);
      const period = (await statement(alice, accountId, 'from=2025-01-10T00:00:00Z&to=2025-01-25T00:00:00Z'))
        .body;
      expect(period.opening_balance).to.equal((await at('2025-01-10T00:00:00Z')).balance);
      expect(period.closing_balance).to.equal((await at('2025-01-25T00:00:00Z')).balance);
      // Asked about the future, it answers as of now: every entry, and not the account's available balance.
      const future = await at('2999-01-01T00:00:00Z');
      expect(future.balance).to.equal(1.5);
      expect(new Date(future.at).getTime()).to.be.at.most(Date.now());
      expect(future).to.not.have.property('available_balance');
    });

    it('pages through a period with starting_after, the running balance carrying over', async () => {
      const query = 'from=2024-12-01T00:00:00Z&to=2025-03-01T00:00:00Z&limit=1';
      const seen: StatementBody['entries'] = [];
      let page: ApiResponse = await statement(alice, accountId, query);
      for (;;) {
        expect(page.status, page.text).to.equal(200);
        expect(page.body).to.include({ opening_balance: 0, closing_balance: 1.5 });
        seen.push(...page.body.entries);
        if (!page.body.has_more) break;
        page = await statement(alice, accountId, `${query}&starting_after=${page.body.entries.at(-1).id}`);
      }
      expect(seen.map((e) => e.balance)).to.deep.equal([10, 7, -5, 1.5]);
      expectConsistent({ ...page.body, opening_balance: 0, entries: seen });
    });

    it('writes CSV pages that join into one file, linking to the next page', async () => {
      const query = 'from=2025-01-01T00:00:00Z&to=2025-03-01T00:00:00Z&format=csv';
      const first = await statement(alice, accountId, `${query}&limit=2`);
      expect(first.status, first.text).to.equal(200);
      expect(first.headers.get('content-type')).to.equal('text/csv; charset=utf-8');
      expect(first.headers.get('content-disposition')).to.equal(
        `attachment; filename="statement-${accountId}-2025-01-01-2025-03-01.csv"`,
      );
      const link = /^<\?([^>]+)>; rel="next"$/.exec(first.headers.get('link') ?? '');
      expect(link, first.headers.get('link') ?? 'no Link').to.not.equal(null);
      const second = await statement(alice, accountId, (link as RegExpExecArray)[1]);
      expect(second.status, second.text).to.equal(200);
      expect(second.headers.get('link')).to.equal(null);
      const rows = [...first.text.split('\r\n'), ...second.text.split('\r\n').slice(1)]
        .filter(Boolean)
        .map((row) => row.split(','));
      expect(rows[0]).to.deep.equal([
        'created_at',
        'entry_id',
        'transaction_id',
        'type',
        'counterparty_account_id',
        'amount',
        'balance',
        'currency',
        'reference',
        'metadata',
      ]);
      expect(rows.slice(1).map((r) => [r[3], r[5], r[6]])).to.deep.equal([
        ['opening_balance', '', '0.00'],
        ['', '10.00', '10.00'],
        ['', '-3.00', '7.00'],
        ['', '-12.00', '-5.00'],
        ['', '6.50', '1.50'],
        ['closing_balance', '', '1.50'],
      ]);
      const whole = await statement(alice, accountId, query);
      expect(whole.text.split('\r\n').filter(Boolean)).to.deep.equal(rows.map((r) => r.join(',')));
    });

    it('refuses bad periods, pages and formats with 400 VALIDATION_ERROR naming the field', async () => {
      const other = await ledger.openAccount(alice);
      await book(other.id, '2025-01-01T00:00:00Z', [['2025-01-10T00:00:00Z', 5]]);
      const foreignEntry = (
        await statement(alice, other.id, 'from=2025-01-01T00:00:00Z&to=2025-02-01T00:00:00Z')
      ).body.entries[0].id as string;
      const cases: [string, string][] = [
        ['from=2025-01-01', 'from'],
        ['from=2025-01-01T00:00:00', 'from'],
        ['to=yesterday', 'to'],
        ['from=2025-02-01T00:00:00Z&to=2025-01-01T00:00:00Z', 'from'],
        ['from=2999-01-01T00:00:00Z', 'from'],
        ['limit=0', 'limit'],
        ['limit=1001', 'limit'],
        ['format=xml', 'format'],
        ['starting_after=abc', 'starting_after'],
        [
          `from=2025-01-01T00:00:00Z&to=2025-02-01T00:00:00Z&starting_after=${foreignEntry}`,
          'starting_after',
        ],
        ['starting_after=999999999999', 'starting_after'],
        ['starting_after=9999999999999999999', 'starting_after'],
      ];
      for (const [query, field] of cases) {
        const response = await statement(alice, accountId, query);
        expect(response.status, query).to.equal(400);
        expect(response.headers.get('content-type'), query).to.match(/^application\/problem\+json/);
        expect(response.body.code, query).to.equal('VALIDATION_ERROR');
        expect(
          response.body.errors.map((e: { field: string }) => e.field),
          query,
        ).to.include(field);
      }
      const balance = await ledger.call('GET', `/account/${accountId}/balance?at=not-a-time`, {
        user: alice,
      });
      expect(balance.status).to.equal(400);
      expect(balance.body.errors[0].field).to.equal('at');
    });
  });

  it('finds the same balances summing from the opening of the account or back from its balance', async () => {
    const { id } = await ledger.openAccount(alice);
    const day = 86_400_000;
    const ago = (days: number) => new Date(Date.now() - days * day).toISOString();
    // A long-lived account: a period near its opening sums from there, one near now back from the balance.
    const moves: [string, number][] = [
      ['2024-01-02T00:00:00Z', 5000],
      ['2024-01-03T00:00:00Z', -1250],
      ['2024-06-01T00:00:00Z', 300],
      [ago(20), -2000],
      [ago(3), 777],
      [ago(1), -26],
    ];
    await book(id, '2024-01-01T00:00:00Z', moves);
    const before = (moment: string) =>
      moves.filter(([at]) => new Date(at) < new Date(moment)).reduce((sum, [, amount]) => sum + amount, 0) /
      100;
    const edges = [
      '2024-01-01T00:00:00Z',
      '2024-01-03T00:00:00Z',
      '2024-03-01T00:00:00Z',
      ago(30),
      ago(2),
      ago(0.5),
    ];
    for (const from of edges) {
      for (const to of edges.filter((edge) => new Date(edge) >= new Date(from))) {
        const query = `from=${encodeURIComponent(from)}&to=${encodeURIComponent(to)}`;
        const response = await statement(alice, id, query);
        expect(response.status, response.text).to.equal(200);
        expect([response.body.opening_balance, response.body.closing_balance], query).to.deep.equal([
          before(from),
          before(to),
        ]);
        expectConsistent(response.body);
      }
      const at = await ledger.call('GET', `/account/${id}/balance?at=${encodeURIComponent(from)}`, {
        user: alice,
      });
      expect(at.body.balance, from).to.equal(before(from));
    }
  });

  it('refuses another user the statement and the past balance exactly as it refuses the balance', async () => {
    const account = await ledger.openAccount(alice);
    await ledger.fund(alice, account.id, 42.42);
    const mallory = ledger.newUser();
    const paths = [
      `/account/${account.id}/balance`,
      `/account/${account.id}/balance?at=2030-01-01T00:00:00Z`,
      `/account/${account.id}/statement`,
      `/account/${account.id}/statement?format=csv&from=2000-01-01T00:00:00Z`,
    ];
    for (const path of paths) {
      const response = await ledger.call('GET', path, { user: mallory });
      expect(response.status, path).to.equal(403);
      expect(response.body.code, path).to.equal('ACCESS_DENIED');
      expect(response.text, path).to.not.include('42.42');
      expect((await ledger.call('GET', path)).status, path).to.equal(401);
    }
    const missing = await ledger.call('GET', `/account/${randomUUID()}/statement`, { user: mallory });
    expect(missing.status).to.equal(404);
    expect((await ledger.call('GET', '/account/not-a-uuid/statement', { user: mallory })).status).to.equal(
      404,
    );

    const admin = ledger.newUser('admin');
    const read = await ledger.call('GET', `/account/${account.id}/statement`, { user: admin });
    expect(read.status, read.text).to.equal(200);
    expect(read.body.closing_balance).to.equal(42.42);
  });

  it('reads each page from one snapshot: opening + entries = closing while transfers settle', async () => {
    const bob = ledger.newUser();
    const a = await ledger.openAccount(bob);
    const b = await ledger.openAccount(bob);
    // From long before the accounts the statement sums from their opening; from after it, back from the balance.
    const from = '2000-01-01T00:00:00Z';
    const sinceOpened = encodeURIComponent(new Date().toISOString());
    await ledger.fund(bob, a.id, 1000);
    await ledger.fund(bob, b.id, 1000);

    let moving = true;
    const transfers = (async () => {
      const sent: ApiResponse[] = [];
      for (let round = 0; round < 40; round += 1) {
        sent.push(
          ...(await Promise.all(
            [a, b, a, b, a].map((source, i) =>
              ledger.call('POST', `/account/${source.id}/transfer`, {
                user: bob,
                body: {
                  to_account_id: (source === a ? b : a).id,
                  amount: 1 + ((round + i) % 7),
                  currency: 'USD',
                },
              }),
            ),
          )),
        );
      }
      moving = false;
      return sent;
    })();

    let statements = 0;
    let movedWhileReading = 0;
    let lastClosing: number | null = null;
    while (moving) {
      const [ofA, ofB] = await Promise.all([
        statement(bob, a.id, `from=${from}&limit=1000`),
        statement(bob, b.id, `from=${sinceOpened}&limit=1000&format=csv`),
      ]);
      expect(ofA.status, ofA.text).to.equal(200);
      expectConsistent(ofA.body);
      expect(ofA.body.has_more).to.equal(false);
      if (lastClosing !== null && lastClosing !== ofA.body.closing_balance) movedWhileReading += 1;
      lastClosing = ofA.body.closing_balance;
      const rows = ofB.text
        .split('\r\n')
        .filter(Boolean)
        .slice(1)
        .map((row) => row.split(','));
      let balance = cents(Number(rows[0]![6]));
      for (const row of rows.slice(1, -1)) {
        balance += cents(Number(row[5]));
        expect(cents(Number(row[6]))).to.equal(balance);
      }
      expect(cents(Number(rows.at(-1)![6]))).to.equal(balance);
      statements += 1;
    }
    const sent = await transfers;
    expect(sent.every((r) => r.status === 202 || r.status === 422)).to.equal(true);
    expect(statements).to.be.greaterThan(5);
    expect(movedWhileReading, 'statements taken while balances moved').to.be.greaterThan(0);

    const pending = () => ledger.call('GET', '/transactions?status=pending&limit=1', { user: bob });
    await eventually(pending, (r) => r.body.pagination.total === 0, { timeoutMs: 30_000 });
    for (const account of [a, b]) {
      for (const start of [from, sinceOpened]) {
        const final = (await statement(bob, account.id, `from=${start}&limit=1000`)).body as StatementBody;
        expectConsistent(final);
        expect(final.closing_balance).to.equal((await ledger.balanceOf(bob, account.id)).balance);
      }
    }
  });
});
