import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { expect } from 'chai';
import type { Knex } from '@payments/service-kit';
import { eventually } from '@payments/testkit';
import { useLedgerHarness, type TestUser } from './support/ledger-harness.js';

const auditScript = fileURLToPath(new URL('../scripts/audit.ts', import.meta.url));

describe('ledger audit and database backstops', function () {
  this.timeout(60_000);
  let knex: Knex;
  let alice: TestUser;
  let accountId: string;

  const ledger = useLedgerHarness();
  before(async () => {
    knex = ledger.db;
    alice = ledger.newUser();
    accountId = (await ledger.openAccount(alice)).id;
    await ledger.fund(alice, accountId, 25);
  });

  const runScript = () =>
    promisify(execFile)(process.execPath, ['--conditions=development', '--import', 'tsx', auditScript], {
      env: { ...process.env, DATABASE_URL: ledger.databaseUrl, LOG_LEVEL: 'silent' },
    }).then(
      ({ stdout }) => ({ code: 0, report: JSON.parse(stdout) }),
      (error: { code: number; stdout: string }) => ({ code: error.code, report: JSON.parse(error.stdout) }),
    );

  it('passes on consistent books, over HTTP and from the audit script', async () => {
    const audit = await ledger.audit();
    expect(audit.ok).to.equal(true);
    expect(audit.counts).to.deep.include({ entries: 2 });
    expect(audit.history_count_mismatches).to.deep.equal([]);
    const script = await runScript();
    expect(script.code).to.equal(0);
    expect(script.report.ok).to.equal(true);
  });

  it('reports an account whose balance disagrees with its entries, and the script exits 1', async () => {
    await knex('accounts').where({ id: accountId }).increment({ balance: 1, available_balance: 1 });
    try {
      const audit = await ledger.audit();
      expect(audit.ok).to.equal(false);
      expect(audit.balance_mismatches).to.deep.equal([
        { account_id: accountId, balance: '2501', entries: '2500' },
      ]);
      const script = await runScript();
      expect(script.code).to.equal(1);
    } finally {
      await knex('accounts').where({ id: accountId }).decrement({ balance: 1, available_balance: 1 });
    }
    expect((await ledger.audit()).ok).to.equal(true);
  });

  it('reports held money that no pending transaction explains', async () => {
    await knex('accounts').where({ id: accountId }).decrement({ available_balance: 5 });
    try {
      const audit = await ledger.audit();
      expect(audit.hold_mismatches).to.deep.equal([{ account_id: accountId, held: '5', pending: '0' }]);
    } finally {
      await knex('accounts').where({ id: accountId }).increment({ available_balance: 5 });
    }
  });

  it('reports a history counter that disagrees with the transactions it counts', async () => {
    const skew = (delta: number) =>
      knex('history_count_deltas').insert({
        owner_kind: 'user',
        owner_id: alice.id,
        direction: 'sent',
        type: 'deposit',
        status: 'completed',
        delta,
      });
    await skew(1);
    try {
      const audit = await ledger.audit();
      expect(audit.ok).to.equal(false);
      expect(audit.history_count_mismatches).to.deep.equal([
        {
          owner_kind: 'user',
          owner_id: alice.id,
          direction: 'sent',
          type: 'deposit',
          status: 'completed',
          counted: 2,
          actual: 1,
        },
      ]);
    } finally {
      // Compaction may have folded the skew in already: cancel it with another delta.
      await skew(-1);
    }
    expect((await ledger.audit()).ok).to.equal(true);
  });

  it('keeps entries append-only', async () => {
    let error: unknown;
    await knex('entries')
      .update({ amount: 1 })
      .catch((e: unknown) => (error = e));
    expect(String(error)).to.match(/append-only/);
    error = undefined;
    await knex('entries')
      .delete()
      .catch((e: unknown) => (error = e));
    expect(String(error)).to.match(/append-only/);
  });

  it('refuses at commit entries that do not balance', async () => {
    let error: unknown;
    await knex
      .transaction(async (trx) => {
        await trx('entries').insert({
          transaction_id: '00000000-0000-4000-8000-000000000001',
          account_id: accountId,
          amount: 100,
          currency: 'USD',
        });
      })
      .catch((e: unknown) => (error = e));
    expect(String(error)).to.match(/do not balance/);
  });

  it('refuses a negative user balance or an available balance above the balance', async () => {
    for (const change of [{ balance: -1, available_balance: -1 }, { available_balance: 1_000_000 }]) {
      let error: unknown;
      await knex('accounts')
        .where({ id: accountId })
        .update(change)
        .catch((e: unknown) => (error = e));
      expect(String(error)).to.match(/accounts_user_balances/);
    }
    expect((await ledger.audit()).ok).to.equal(true);
  });

  it('lists an account a reversal took below zero without failing, over HTTP and from the script', async () => {
    const bob = ledger.newUser();
    const bobAccount = await ledger.openAccount(bob);
    const deposit = await ledger.deposit(bob, bobAccount.id, 10);
    await ledger.confirm(deposit.body.id);
    await ledger.waitForStatus(bob, deposit.body.id, 'completed');
    const sent = await ledger.transfer(bob, bobAccount.id, accountId, 8);
    await ledger.waitForStatus(bob, sent.body.id, 'completed');
    await ledger.adjust(deposit.body.id, 'refund', 1000);
    await eventually(
      () => ledger.balanceOf(bob, bobAccount.id),
      (balance) => balance.balance < 0,
    );
    const overdrawn = [{ account_id: bobAccount.id, balance: '-800', available_balance: '-800' }];
    const audit = await ledger.audit();
    expect(audit.ok).to.equal(true);
    expect(audit.overdrawn_accounts).to.deep.equal(overdrawn);
    const script = await runScript();
    expect(script.code).to.equal(0);
    expect(script.report.overdrawn_accounts).to.deep.equal(overdrawn);
  });

  it('fails an account below zero that no reversal took there', async () => {
    const carol = ledger.newUser();
    const carolAccount = await ledger.openAccount(carol);
    // Past the balance check, as only a reversal's update may set a shortfall.
    await knex('accounts')
      .where({ id: carolAccount.id })
      .update({ reversal_shortfall: 5, balance: -5, available_balance: -5 });
    try {
      const audit = await ledger.audit();
      expect(audit.ok).to.equal(false);
      expect(audit.invalid_balances).to.deep.include({
        account_id: carolAccount.id,
        balance: '-5',
        available_balance: '-5',
      });
      expect((await runScript()).code).to.equal(1);
    } finally {
      await knex('accounts')
        .where({ id: carolAccount.id })
        .update({ balance: 0, available_balance: 0, reversal_shortfall: 0 });
    }
    expect((await ledger.audit()).ok).to.equal(true);
  });
});
