import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import type { Knex } from '@payments/service-kit';
import { eventually } from '@payments/testkit';
import { runAudit } from '../src/data/audit.js';
import {
  compactHistoryCounts,
  countHistory,
  HISTORY_COMPACTION_LOCK,
  type HistoryOwner,
} from '../src/data/history-counts.js';
import type { HistoryFilter } from '../src/domain/history.js';
import { TRANSACTION_STATUSES, TRANSACTION_TYPES } from '../src/domain/transaction.js';
import type { AuditReport } from '../src/use-cases/maintenance.js';
import { useLedgerHarness, type TestUser } from './support/ledger-harness.js';

/** A date range that holds every transaction: the history then counts rows instead of reading counters. */
const EVERYTHING = 'from=2000-01-01';

/** Each filter alone and every type with every status. */
const FILTERS = [
  '',
  ...TRANSACTION_TYPES.map((type) => `type=${type}`),
  ...TRANSACTION_STATUSES.map((status) => `status=${status}`),
  ...TRANSACTION_TYPES.flatMap((type) =>
    TRANSACTION_STATUSES.map((status) => `type=${type}&status=${status}`),
  ),
];

describe('ledger history totals (history counters)', function () {
  this.timeout(60_000);
  let knex: Knex;

  const ledger = useLedgerHarness({}, { booksBalance: true });
  before(async () => {
    knex = ledger.db;
  });

  const total = async (user: TestUser, query: string, path = '/transactions') => {
    const response = await ledger.call('GET', `${path}?${query}`, { user });
    expect(response.status, `${path}?${query}`).to.equal(200);
    return response.body.pagination.total as number;
  };

  /** Over HTTP, for every filter: the total the counters give equals counting the rows. */
  const expectTotalsExact = async (user: TestUser, accountIds: string[]) => {
    const paths = ['/transactions', ...accountIds.map((id) => `/account/${id}/transactions`)];
    for (const path of paths) {
      for (const filter of FILTERS) {
        const counted = await total(user, filter, path);
        expect(counted, `${path}?${filter}`).to.equal(await total(user, `${filter}&${EVERYTHING}`, path));
      }
    }
  };

  const funded = async (user: TestUser, amount: number) => {
    const account = await ledger.openAccount(user);
    await ledger.fund(user, account.id, amount);
    return account;
  };

  const transfer = async (user: TestUser, from: string, to: string, amount: number) => {
    const response = await ledger.transfer(user, from, to, amount);
    expect(response.status).to.equal(202);
    await ledger.waitForStatus(user, response.body.id, 'completed');
    return response.body.id as string;
  };

  const insertPendingDeposits = (user: TestUser, accountId: string, count: number) =>
    knex.raw(
      `INSERT INTO transactions (id, account_id, user_id, type, amount, currency)
       SELECT gen_random_uuid(), ?, ?, 'deposit', 100, 'USD' FROM generate_series(1, ?)`,
      [accountId, user.id, count],
    );

  it('counts sent transactions, a failure, and a received transfer once it completes', async () => {
    const alice = ledger.newUser();
    const bob = ledger.newUser();
    const aliceUsd = await funded(alice, 50);
    const aliceSpare = await ledger.openAccount(alice);
    const bobUsd = await ledger.openAccount(bob);
    const failed = await ledger.deposit(alice, aliceUsd.id, 7);
    await ledger.confirm(failed.body.id, 'failed');
    await ledger.waitForStatus(alice, failed.body.id, 'failed');
    await transfer(alice, aliceUsd.id, bobUsd.id, 10);
    // Between her own accounts: sent by her, received by the other account, once in her own history.
    await transfer(alice, aliceUsd.id, aliceSpare.id, 5);

    expect(await total(alice, '')).to.equal(4);
    expect(await total(alice, 'status=failed')).to.equal(1);
    expect(await total(alice, 'type=transfer&status=completed')).to.equal(2);
    expect(await total(alice, '', `/account/${aliceSpare.id}/transactions`)).to.equal(1);
    expect(await total(bob, '')).to.equal(1);
    expect(await total(bob, 'type=transfer&status=completed', `/account/${bobUsd.id}/transactions`)).to.equal(
      1,
    );
    await expectTotalsExact(alice, [aliceUsd.id, aliceSpare.id]);
    await expectTotalsExact(bob, [bobUsd.id]);
  });

  it('follows one statement inserting, then completing and failing, many transfers', async () => {
    const alice = ledger.newUser();
    const bob = ledger.newUser();
    const aliceUsd = await ledger.openAccount(alice);
    const bobUsd = await ledger.openAccount(bob);
    const ids = [randomUUID(), randomUUID(), randomUUID()];
    // Rolled back: these transfers hold no money, so they must not outlive the test.
    await knex
      .transaction(async (trx) => {
        await trx.raw(
          `INSERT INTO transactions (id, account_id, user_id, type, amount, currency,
                                     counterparty_account_id, counterparty_user_id)
           SELECT id, ?, ?, 'transfer', 100, 'USD', ?, ? FROM unnest(?::uuid[]) id`,
          [aliceUsd.id, alice.id, bobUsd.id, bob.id, ids],
        );
        const user = (who: TestUser): HistoryOwner => ({ kind: 'user', id: who.id });
        const account = (id: string): HistoryOwner => ({ kind: 'account', id });
        expect(await countHistory(trx, user(alice), { status: 'pending' })).to.equal(3);
        expect(await countHistory(trx, user(bob), {})).to.equal(0);

        await trx.raw(
          `UPDATE transactions t
           SET status = v.status, completed_at = CASE WHEN v.status = 'completed' THEN now() END
           FROM (VALUES (?::uuid, 'completed'), (?::uuid, 'completed'), (?::uuid, 'failed')) v (id, status)
           WHERE t.id = v.id`,
          ids,
        );
        const expected: [HistoryOwner, HistoryFilter, number][] = [
          [user(alice), {}, 3],
          [user(alice), { status: 'pending' }, 0],
          [user(alice), { status: 'completed' }, 2],
          [user(alice), { type: 'transfer', status: 'failed' }, 1],
          [account(aliceUsd.id), {}, 3],
          [user(bob), {}, 2],
          [account(bobUsd.id), { type: 'transfer' }, 2],
          [account(bobUsd.id), { status: 'failed' }, 0],
        ];
        for (const [owner, filter, count] of expected) {
          expect(await countHistory(trx, owner, filter), JSON.stringify([owner, filter])).to.equal(count);
        }
        throw new Error('roll back');
      })
      .catch((error: Error) => expect(error.message).to.equal('roll back'));
    expect(await total(alice, '')).to.equal(0);
    expect(await total(bob, '')).to.equal(0);
  });

  it('drops a deleted user from the totals, keeps the other side, and compacts to no rows', async () => {
    const alice = ledger.newUser();
    const bob = ledger.newUser();
    const aliceUsd = await funded(alice, 30);
    const bobUsd = await funded(bob, 30);
    await transfer(alice, aliceUsd.id, bobUsd.id, 10);
    await transfer(bob, bobUsd.id, aliceUsd.id, 4);
    const payout = await ledger.withdraw(alice, aliceUsd.id, 24);
    await ledger.confirm(payout.body.id, 'completed', { movement: 'payout' });
    await ledger.waitForStatus(alice, payout.body.id, 'completed');
    expect(await total(alice, '')).to.equal(4);
    expect(await total(bob, '')).to.equal(3);

    const removed = await ledger.call('POST', `/internal/users/${alice.id}/removal`);
    expect(removed.status).to.equal(200);
    expect((await ledger.call('GET', `/account/${aliceUsd.id}`, { user: alice })).status).to.equal(404);
    expect(await total(alice, '')).to.equal(0);
    expect(await total(bob, '')).to.equal(3);
    await expectTotalsExact(bob, [bobUsd.id]);
    // The maintenance loop folds the deltas in and drops the counters that reached zero.
    const aliceRows = () =>
      knex
        .select('owner_id')
        .from('history_counts')
        .where({ owner_kind: 'user', owner_id: alice.id })
        .unionAll((q) => {
          q.select('owner_id').from('history_count_deltas').where({ owner_id: alice.id });
        });
    const left = await eventually(aliceRows, (rows) => rows.length === 0);
    expect(left).to.deep.equal([]);
  });

  it('stays exact in every snapshot while inserts and compactions run concurrently', async () => {
    const alice = ledger.newUser();
    const account = await funded(alice, 10);
    let writing = true;
    const writers = Array.from({ length: 4 }, async (_, writer) => {
      for (let batch = 1; batch <= 15; batch += 1) await insertPendingDeposits(alice, account.id, writer + 1);
    });
    const deposits = Array.from({ length: 10 }, () => ledger.deposit(alice, account.id, 1));
    // Small batches so that compaction commits many times while the writers are busy.
    const compactor = (async () => {
      let folded = 0;
      while (writing) folded += await compactHistoryCounts(knex, 3);
      return folded;
    })();
    // The audit compares counters with counted rows in one statement, so in one snapshot.
    const audits: AuditReport[] = [];
    const auditor = (async () => {
      while (writing) audits.push(await runAudit(knex));
    })();
    const [accepted] = await Promise.all([Promise.all(deposits), ...writers]);
    writing = false;
    expect(accepted.map((response) => response.status)).to.deep.equal(deposits.map(() => 202));
    expect(await compactor).to.be.greaterThan(0);
    await auditor;

    expect(audits.length).to.be.greaterThan(0);
    for (const audit of audits) expect(audit.historyCountMismatches).to.deep.equal([]);
    const expected = 1 + 15 * (1 + 2 + 3 + 4) + 10;
    expect(await total(alice, '')).to.equal(expected);
    expect(await total(alice, 'type=deposit&status=pending')).to.equal(expected - 1);
    await expectTotalsExact(alice, [account.id]);
  });

  it('skips a compaction while another one holds the lock', async () => {
    const alice = ledger.newUser();
    const account = await ledger.openAccount(alice);
    const pendingDeltas = async () =>
      Number(
        (await knex('history_count_deltas').where({ owner_id: alice.id }).count<{ count: string }[]>('*'))[0]
          ?.count,
      );
    await knex.transaction(async (trx) => {
      await trx.raw('SELECT pg_advisory_xact_lock(hashtextextended(?, 0))', [HISTORY_COMPACTION_LOCK]);
      await insertPendingDeposits(alice, account.id, 5);
      expect(await compactHistoryCounts(knex, 1_000)).to.equal(0);
      expect(await pendingDeltas()).to.equal(1);
      expect(await total(alice, '')).to.equal(5);
    });
    expect(await eventually(pendingDeltas, (count) => count === 0)).to.equal(0);
    expect(await total(alice, '')).to.equal(5);
    expect(await total(alice, '', `/account/${account.id}/transactions`)).to.equal(5);
  });

  it('counts a date range row by row, since the counters know no dates', async () => {
    const alice = ledger.newUser();
    const account = await funded(alice, 10);
    await knex.raw(
      `INSERT INTO transactions (id, account_id, user_id, type, amount, currency, created_at)
       VALUES (gen_random_uuid(), ?, ?, 'deposit', 100, 'USD', '2001-06-15T12:00:00Z')`,
      [account.id, alice.id],
    );
    expect(await total(alice, '')).to.equal(2);
    expect(await total(alice, 'type=deposit')).to.equal(2);
    expect(await total(alice, 'from=2002-01-01&type=deposit')).to.equal(1);
    expect(await total(alice, 'to=2001-06-15&status=pending')).to.equal(1);
    expect(
      await total(alice, 'from=2001-06-16&to=2001-12-31', `/account/${account.id}/transactions`),
    ).to.equal(0);
  });
});
