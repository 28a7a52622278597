import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { DEVELOPMENT_SERVICE_TOKEN, serviceAuthorization } from '@payments/service-kit';
import { eventually } from '@payments/testkit';
import { useLedgerHarness, type LedgerHarness, type TestUser } from './support/ledger-harness.js';

/** The reversals of a deposit as the ledger stored them, oldest first. */
async function reversalsOf(ledger: LedgerHarness, depositId: string) {
  const rows: { id: string; status: string; amount: string; fee: string; reversal_reason: string }[] =
    await ledger.db('transactions').where({ original_transaction_id: depositId }).orderBy('created_at');
  return rows.map((row) => ({ ...row, amount: Number(row.amount), fee: Number(row.fee) }));
}

/** Waits until the outbox has nothing left to publish, then a moment more for the consumer's in-flight work. */
async function quiesce(ledger: LedgerHarness) {
  await eventually(
    async () =>
      (await ledger.db('outbox').whereNull('published_at').count<{ count: string }[]>('*'))[0]?.count,
    (count) => Number(count) === 0,
  );
  await new Promise((resolve) => setTimeout(resolve, 200));
}

describe('ledger reversals (memory bus)', () => {
  let alice: TestUser;
  let admin: TestUser;

  const ledger = useLedgerHarness({}, { booksBalance: true });
  before(async () => {
    admin = ledger.newUser('admin');
  });
  beforeEach(() => {
    alice = ledger.newUser();
  });

  const fundedDeposit = async (user: TestUser, amount: number) => {
    const account = await ledger.openAccount(user);
    const deposit = await ledger.deposit(user, account.id, amount);
    await ledger.confirm(deposit.body.id);
    await ledger.waitForStatus(user, deposit.body.id, 'completed');
    return { account, depositId: deposit.body.id as string };
  };

  /** Waits until alice's account shows what `settled` asks of its balance. */
  const waitForBalance = (
    accountId: string,
    settled: (balance: Awaited<ReturnType<LedgerHarness['balanceOf']>>) => boolean,
  ) => eventually(() => ledger.balanceOf(alice, accountId), settled);

  const waitForReversals = (depositId: string, count: number) =>
    eventually(
      () => reversalsOf(ledger, depositId),
      (rows) => rows.length >= count && rows.every((row) => row.status !== 'pending'),
    );

  it('reverses a full refund as a new completed reversal linked to the deposit, which stays completed', async () => {
    const { account, depositId } = await fundedDeposit(alice, 100);
    await ledger.adjust(depositId, 'refund', 10000, { reference: 're_1' });
    const [reversal] = await waitForReversals(depositId, 1);
    expect(reversal).to.include({ status: 'completed', amount: 10000, reversal_reason: 'refund' });

    const shown = await ledger.call('GET', `/transaction/${reversal?.id}`, { user: alice });
    expect(shown.status).to.equal(200);
    expect(shown.body).to.include({
      type: 'reversal',
      status: 'completed',
      amount: 100,
      original_transaction_id: depositId,
      reversal_reason: 'refund',
      payment_id: 're_1',
    });
    expect((await ledger.call('GET', `/transaction/${depositId}`, { user: alice })).body.status).to.equal(
      'completed',
    );
    const history = await ledger.call('GET', `/account/${account.id}/transactions`, { user: alice });
    expect(history.body.data.map((t: { type: string }) => t.type)).to.deep.equal(['reversal', 'deposit']);
    expect(history.body.pagination.total).to.equal(2);
    const reversalsOnly = await ledger.call('GET', `/transactions?type=reversal`, { user: alice });
    expect(reversalsOnly.body.data).to.have.length(1);
    expect(await ledger.balanceOf(alice, account.id)).to.include({ balance: 0, available_balance: 0 });

    const entries: { account_id: string; amount: string }[] = await ledger
      .db('entries')
      .where({ transaction_id: reversal?.id })
      .select('account_id', 'amount');
    const clearing = await ledger
      .db('accounts')
      .where({ kind: 'system', system_code: 'provider_clearing', currency: 'USD' })
      .first('id');
    expect(entries.map((e) => [e.account_id, Number(e.amount)])).to.have.deep.members([
      [account.id, -10000],
      [clearing.id, 10000],
    ]);
    const announced: { event: { type: string; data: Record<string, unknown> } }[] = await ledger
      .db('outbox')
      .whereRaw(`event ->> 'type' = 'TransactionReversed'`)
      .whereRaw(`event -> 'data' ->> 'original_transaction_id' = ?`, [depositId]);
    expect(announced.map((row) => row.event.data)).to.deep.equal([
      {
        transaction_id: reversal?.id,
        original_transaction_id: depositId,
        account_id: account.id,
        user_id: alice.id,
        amount: 10000,
        currency: 'USD',
        reason: 'refund',
      },
    ]);
    // Not a payment the provider confirms: webhook-ingest's lookup does not find it.
    expect((await ledger.call('GET', `/internal/payments/${reversal?.id}`)).status).to.equal(404);
  });

  it('reverses a partial refund and then the next one by the difference in the refunded total', async () => {
    const { account, depositId } = await fundedDeposit(alice, 100);
    await ledger.adjust(depositId, 'refund', 3000);
    await waitForReversals(depositId, 1);
    await ledger.adjust(depositId, 'refund', 5000);
    const reversals = await waitForReversals(depositId, 2);
    expect(reversals.map((r) => r.amount)).to.deep.equal([3000, 2000]);
    expect((await ledger.balanceOf(alice, account.id)).balance).to.equal(50);
  });

  it('takes a refund once when it is delivered many times at once, under one or many event ids', async () => {
    const { account, depositId } = await fundedDeposit(alice, 100);
    const eventId = randomUUID();
    await Promise.all([
      ...Array.from({ length: 10 }, () => ledger.adjust(depositId, 'refund', 4000, { eventId })),
      ...Array.from({ length: 10 }, () => ledger.adjust(depositId, 'refund', 4000)),
    ]);
    await waitForReversals(depositId, 1);
    await quiesce(ledger);
    expect((await reversalsOf(ledger, depositId)).map((r) => r.amount)).to.deep.equal([4000]);
    expect((await ledger.balanceOf(alice, account.id)).balance).to.equal(60);
  });

  it('ignores an older refunded total that arrives after a newer one', async () => {
    const { account, depositId } = await fundedDeposit(alice, 100);
    await ledger.adjust(depositId, 'refund', 7000);
    await waitForReversals(depositId, 1);
    await ledger.adjust(depositId, 'refund', 2500);
    await quiesce(ledger);
    expect((await reversalsOf(ledger, depositId)).map((r) => r.amount)).to.deep.equal([7000]);
    expect((await ledger.balanceOf(alice, account.id)).balance).to.equal(30);
  });

  it('never reverses more than the deposit, whatever the refunds and disputes report', async () => {
    const { account, depositId } = await fundedDeposit(alice, 100);
    await ledger.adjust(depositId, 'dispute_lost', 6000, { reference: 'dp_cap' });
    await waitForReversals(depositId, 1);
    await ledger.adjust(depositId, 'refund', 999_999);
    await waitForReversals(depositId, 2);
    await ledger.adjust(depositId, 'refund', 2_000_000);
    await ledger.adjust(depositId, 'dispute_lost', 10000, { reference: 'dp_other' });
    await quiesce(ledger);
    const reversals = await reversalsOf(ledger, depositId);
    expect(reversals.map((r) => r.amount)).to.deep.equal([6000, 4000]);
    expect((await ledger.balanceOf(alice, account.id)).balance).to.equal(0);
  });

  it('holds a disputed amount while the dispute is open, and releases it when the dispute is won', async () => {
    const { account, depositId } = await fundedDeposit(alice, 100);
    await ledger.adjust(depositId, 'dispute_opened', 6000, { reference: 'dp_won' });
    await waitForBalance(account.id, (b) => b.available_balance === 40);
    expect(await ledger.balanceOf(alice, account.id)).to.include({ balance: 100, available_balance: 40 });
    const [open] = await reversalsOf(ledger, depositId);
    expect(open).to.include({ status: 'pending', amount: 6000, reversal_reason: 'dispute' });

    // The held money cannot leave: not by a withdrawal, not by a transfer.
    const withdraw = await ledger.withdraw(alice, account.id, 41);
    expect(withdraw.status).to.equal(422);
    expect(withdraw.body.code).to.equal('INSUFFICIENT_FUNDS');
    const other = await ledger.openAccount(ledger.newUser());
    const transfer = await ledger.transfer(alice, account.id, other.id, 41);
    expect(transfer.status).to.equal(422);

    await ledger.adjust(depositId, 'dispute_won', 6000, { reference: 'dp_won' });
    await waitForReversals(depositId, 1);
    expect(await ledger.balanceOf(alice, account.id)).to.include({ balance: 100, available_balance: 100 });
    const [won] = await reversalsOf(ledger, depositId);
    expect(won?.status).to.equal('canceled');
    expect(await ledger.db('entries').where({ transaction_id: won?.id })).to.have.length(0);
  });

  it('books a lost dispute as a completed reversal, releasing its hold', async () => {
    const { account, depositId } = await fundedDeposit(alice, 100);
    await ledger.adjust(depositId, 'dispute_opened', 10000, { reference: 'dp_lost' });
    await waitForBalance(account.id, (b) => b.available_balance === 0);
    await ledger.adjust(depositId, 'dispute_lost', 10000, { reference: 'dp_lost' });
    const [lost] = await waitForReversals(depositId, 1);
    expect(lost).to.include({ status: 'completed', amount: 10000 });
    expect(await ledger.balanceOf(alice, account.id)).to.include({ balance: 0, available_balance: 0 });
    // A repeat of either end, or a late opening, changes nothing.
    await ledger.adjust(depositId, 'dispute_opened', 10000, { reference: 'dp_lost' });
    await ledger.adjust(depositId, 'dispute_won', 10000, { reference: 'dp_lost' });
    await quiesce(ledger);
    expect(await reversalsOf(ledger, depositId)).to.have.length(1);
    expect(await ledger.balanceOf(alice, account.id)).to.include({ balance: 0, available_balance: 0 });
  });

  describe('a refund that comes while a dispute is open', () => {
    it('is booked once the dispute is won, and only once', async () => {
      const { account, depositId } = await fundedDeposit(alice, 100);
      await ledger.adjust(depositId, 'dispute_opened', 10000, { reference: 'dp_then_refund' });
      await waitForBalance(account.id, (b) => b.available_balance === 0);
      // The dispute leaves the refund no room now: together they never reverse more than the deposit.
      await ledger.adjust(depositId, 'refund', 10000, { reference: 're_during_dispute' });
      await quiesce(ledger);
      expect((await reversalsOf(ledger, depositId)).map((r) => [r.reversal_reason, r.status])).to.deep.equal([
        ['dispute', 'pending'],
      ]);

      // The payer has the money back through the refund; winning the dispute must not hand it to the user too.
      await ledger.adjust(depositId, 'dispute_won', 10000, { reference: 'dp_then_refund' });
      const reversals = await waitForReversals(depositId, 2);
      expect(reversals.map((r) => [r.reversal_reason, r.status, r.amount])).to.have.deep.members([
        ['dispute', 'canceled', 10000],
        ['refund', 'completed', 10000],
      ]);
      expect(await ledger.balanceOf(alice, account.id)).to.include({ balance: 0, available_balance: 0 });

      // Repeats of the refund and of the dispute's end change nothing.
      await ledger.adjust(depositId, 'refund', 10000, { reference: 're_during_dispute' });
      await ledger.adjust(depositId, 'dispute_won', 10000, { reference: 'dp_then_refund' });
      await quiesce(ledger);
      expect(await reversalsOf(ledger, depositId)).to.have.length(2);
      expect(await ledger.balanceOf(alice, account.id)).to.include({ balance: 0, available_balance: 0 });
    });

    it('books what a partial dispute left no room for once it is won', async () => {
      const { account, depositId } = await fundedDeposit(alice, 100);
      await ledger.adjust(depositId, 'dispute_opened', 6000, { reference: 'dp_partial' });
      await waitForBalance(account.id, (b) => b.available_balance === 40);
      await ledger.adjust(depositId, 'refund', 10000, { reference: 're_full' });
      await waitForBalance(account.id, (b) => b.balance === 60);
      await ledger.adjust(depositId, 'dispute_won', 6000, { reference: 'dp_partial' });
      await waitForBalance(account.id, (b) => b.balance === 0);
      await quiesce(ledger);
      const reversals = await reversalsOf(ledger, depositId);
      expect(reversals.map((r) => [r.reversal_reason, r.status, r.amount])).to.have.deep.members([
        ['dispute', 'canceled', 6000],
        ['refund', 'completed', 4000],
        ['refund', 'completed', 6000],
      ]);
      expect(await ledger.balanceOf(alice, account.id)).to.include({ balance: 0, available_balance: 0 });
    });

    it('is not booked on top of a dispute that is lost', async () => {
      const { account, depositId } = await fundedDeposit(alice, 100);
      await ledger.adjust(depositId, 'dispute_opened', 10000, { reference: 'dp_lost_too' });
      await waitForBalance(account.id, (b) => b.available_balance === 0);
      await ledger.adjust(depositId, 'refund', 10000, { reference: 're_and_lost' });
      await quiesce(ledger);
      await ledger.adjust(depositId, 'dispute_lost', 10000, { reference: 'dp_lost_too' });
      await waitForReversals(depositId, 1);
      await quiesce(ledger);
      expect((await reversalsOf(ledger, depositId)).map((r) => [r.reversal_reason, r.status])).to.deep.equal([
        ['dispute', 'completed'],
      ]);
      expect(await ledger.balanceOf(alice, account.id)).to.include({ balance: 0, available_balance: 0 });
    });
  });

  it('takes a dispute closed before it was seen opened in its final state; the late opening holds nothing', async () => {
    const lost = await fundedDeposit(alice, 100);
    await ledger.adjust(lost.depositId, 'dispute_lost', 2500, { reference: 'dp_early_lost' });
    await waitForReversals(lost.depositId, 1);
    await ledger.adjust(lost.depositId, 'dispute_opened', 2500, { reference: 'dp_early_lost' });

    const won = await fundedDeposit(alice, 100);
    await ledger.adjust(won.depositId, 'dispute_won', 2500, { reference: 'dp_early_won' });
    await waitForReversals(won.depositId, 1);
    await ledger.adjust(won.depositId, 'dispute_opened', 2500, { reference: 'dp_early_won' });
    await quiesce(ledger);

    expect((await reversalsOf(ledger, lost.depositId)).map((r) => r.status)).to.deep.equal(['completed']);
    expect(await ledger.balanceOf(alice, lost.account.id)).to.include({ balance: 75, available_balance: 75 });
    expect((await reversalsOf(ledger, won.depositId)).map((r) => r.status)).to.deep.equal(['canceled']);
    expect(await ledger.balanceOf(alice, won.account.id)).to.include({
      balance: 100,
      available_balance: 100,
    });
  });

  it('waits for a deposit still pending, and reverses it once it completes', async () => {
    const account = await ledger.openAccount(alice);
    const deposit = await ledger.deposit(alice, account.id, 20);
    await ledger.adjust(deposit.body.id, 'refund', 500);
    await new Promise((resolve) => setTimeout(resolve, 150));
    await ledger.confirm(deposit.body.id);
    const [reversal] = await waitForReversals(deposit.body.id, 1);
    expect(reversal?.amount).to.equal(500);
    expect((await ledger.balanceOf(alice, account.id)).balance).to.equal(15);
  });

  it('ignores adjustments of what is not a completed deposit of that currency', async () => {
    const account = await ledger.openAccount(alice);
    const failed = await ledger.deposit(alice, account.id, 20);
    await ledger.confirm(failed.body.id, 'failed');
    await ledger.waitForStatus(alice, failed.body.id, 'failed');
    const { depositId } = await fundedDeposit(alice, 10);
    await ledger.adjust(failed.body.id, 'refund', 2000);
    await ledger.adjust(depositId, 'refund', 1000, { currency: 'EUR' });
    await ledger.adjust(randomUUID(), 'refund', 1000);
    await ledger.adjust('ch_not_a_uuid', 'refund', 1000);
    await quiesce(ledger);
    expect(await reversalsOf(ledger, failed.body.id)).to.have.length(0);
    expect(await reversalsOf(ledger, depositId)).to.have.length(0);
  });

  describe('when the user no longer has the money', () => {
    it('lets a reversal take the balance below zero, flags the account, and refuses every way to spend', async () => {
      const bob = ledger.newUser();
      const bobAccount = await ledger.openAccount(bob);
      const { account, depositId } = await fundedDeposit(alice, 100);
      const sent = await ledger.transfer(alice, account.id, bobAccount.id, 80);
      await ledger.waitForStatus(alice, sent.body.id, 'completed');
      await ledger.adjust(depositId, 'refund', 10000);
      await waitForReversals(depositId, 1);
      expect(await ledger.balanceOf(alice, account.id)).to.include({ balance: -80, available_balance: -80 });

      const audit = (await ledger.audit()) as { ok: boolean; overdrawn_accounts: { account_id: string }[] };
      expect(audit.ok).to.equal(true);
      expect(audit.overdrawn_accounts.map((a) => a.account_id)).to.include(account.id);
      const flagged = await ledger.call('GET', '/admin/overdrawn-accounts', { user: admin });
      expect(flagged.status).to.equal(200);
      expect(flagged.body.data).to.deep.include.members([
        { ...(await ledger.call('GET', `/account/${account.id}`, { user: alice })).body, overdrawn_by: 80 },
      ]);
      expect((await ledger.call('GET', '/admin/overdrawn-accounts', { user: alice })).status).to.equal(403);
      const metrics = await (
        await fetch(`${ledger.url}/metrics`, { headers: serviceAuthorization(DEVELOPMENT_SERVICE_TOKEN) })
      ).text();
      expect(metrics).to.match(/^ledger_accounts_overdrawn_by_reversal(\{[^}]*\})? [1-9]/m);

      // The attack: spend from a negative balance, at once and many times over.
      const attempts = await Promise.all([
        ...Array.from({ length: 10 }, () => ledger.withdraw(alice, account.id, 1)),
        ...Array.from({ length: 10 }, () => ledger.transfer(alice, account.id, bobAccount.id, 0.01)),
      ]);
      expect(attempts.map((a) => a.status)).to.deep.equal(Array(20).fill(422));
      // A deposit makes it up; only what is above zero may be spent again.
      await ledger.fund(alice, account.id, 100);
      expect(await ledger.balanceOf(alice, account.id)).to.include({ balance: 20, available_balance: 20 });
      const tooMuch = await ledger.withdraw(alice, account.id, 21);
      expect(tooMuch.status).to.equal(422);
      const flaggedAfter = await ledger.call('GET', '/admin/overdrawn-accounts?limit=100', { user: admin });
      expect(flaggedAfter.body.data.map((a: { id: string }) => a.id)).not.to.include(account.id);
    });

    it('holds what is left of a disputed amount, and books the rest below zero if the dispute is lost', async () => {
      const bob = ledger.newUser();
      const bobAccount = await ledger.openAccount(bob);
      const { account, depositId } = await fundedDeposit(alice, 100);
      const sent = await ledger.transfer(alice, account.id, bobAccount.id, 70);
      await ledger.waitForStatus(alice, sent.body.id, 'completed');
      await ledger.adjust(depositId, 'dispute_opened', 10000, { reference: 'dp_short' });
      await waitForBalance(account.id, (b) => b.available_balance === 0);
      expect(await ledger.balanceOf(alice, account.id)).to.include({ balance: 30, available_balance: 0 });
      const [open] = await reversalsOf(ledger, depositId);
      expect(await ledger.db('transactions').where({ id: open?.id }).first('held_amount')).to.deep.equal({
        held_amount: '3000',
      });
      await ledger.adjust(depositId, 'dispute_lost', 10000, { reference: 'dp_short' });
      await waitForReversals(depositId, 1);
      expect(await ledger.balanceOf(alice, account.id)).to.include({ balance: -70, available_balance: -70 });
    });

    it('refuses at the database any other way below zero', async () => {
      const { account } = await fundedDeposit(alice, 10);
      let refused: unknown;
      try {
        await ledger.db('accounts').where({ id: account.id }).update({ balance: -1, available_balance: -1 });
      } catch (error) {
        refused = error;
      }
      expect((refused as { constraint?: string })?.constraint).to.equal('accounts_user_balances');
    });
  });
});

describe('ledger reversals with two ledger processes over RabbitMQ', function () {
  this.timeout(60_000);
  let alice: TestUser;

  const ledger = useLedgerHarness({ transport: 'amqp', instances: 2 });
  before(async () => {
    alice = ledger.newUser();
  });

  const shuffle = <T>(items: T[]) =>
    items
      .map((item) => ({ item, order: Math.random() }))
      .sort((a, b) => a.order - b.order)
      .map(({ item }) => item);

  it('takes effect once per refunded total and per dispute, whatever the copies, order and consumer', async () => {
    const account = await ledger.openAccount(alice);
    const deposits: string[] = [];
    for (let i = 0; i < 3; i += 1) {
      const deposit = await ledger.deposit(alice, account.id, 100);
      await ledger.confirm(deposit.body.id);
      await ledger.waitForStatus(alice, deposit.body.id, 'completed');
      deposits.push(deposit.body.id);
    }
    const [refunded, lost, won] = deposits as [string, string, string];
    const sameEvent = randomUUID();
    const publications = shuffle([
      // A refund redelivered 20 times under one event id, and partial refunds up to 80.00 in any order.
      ...Array.from(
        { length: 20 },
        () => () => ledger.adjust(refunded, 'refund', 2000, { eventId: sameEvent }),
      ),
      ...[1000, 2000, 5000, 8000, 8000, 5000].map((total) => () => ledger.adjust(refunded, 'refund', total)),
      // A lost dispute told as opened and lost, each many times, the close possibly first.
      ...Array.from(
        { length: 8 },
        () => () => ledger.adjust(lost, 'dispute_opened', 6000, { reference: 'dp_amqp_lost' }),
      ),
      ...Array.from(
        { length: 8 },
        () => () => ledger.adjust(lost, 'dispute_lost', 6000, { reference: 'dp_amqp_lost' }),
      ),
      ...Array.from(
        { length: 8 },
        () => () => ledger.adjust(won, 'dispute_opened', 6000, { reference: 'dp_amqp_won' }),
      ),
      ...Array.from(
        { length: 8 },
        () => () => ledger.adjust(won, 'dispute_won', 6000, { reference: 'dp_amqp_won' }),
      ),
    ]);
    await Promise.all(publications.map((publish) => publish()));
    // Every refunded total was published, so the refunds add up to the largest; each dispute has one reversal.
    const settled = await eventually(
      async () => ({
        refunds: await reversalsOf(ledger, refunded),
        lost: await reversalsOf(ledger, lost),
        won: await reversalsOf(ledger, won),
      }),
      (r) =>
        r.refunds.reduce((sum, t) => sum + t.amount, 0) === 8000 &&
        r.lost.some((t) => t.status === 'completed') &&
        r.won.some((t) => t.status === 'canceled'),
      { timeoutMs: 30_000 },
    );
    await quiesce(ledger);
    const final = {
      refunds: await reversalsOf(ledger, refunded),
      lost: await reversalsOf(ledger, lost),
      won: await reversalsOf(ledger, won),
    };
    expect(final.refunds.reduce((sum, t) => sum + t.amount, 0)).to.equal(8000);
    expect(final.refunds.every((t) => t.status === 'completed')).to.equal(true);
    expect(final.lost.map((t) => [t.status, t.amount])).to.deep.equal([['completed', 6000]]);
    expect(final.won.map((t) => [t.status, t.amount])).to.deep.equal([['canceled', 6000]]);
    expect(settled.refunds.length).to.be.at.least(1);
    // 300 deposited, 80 refunded, 60 lost in a dispute; the won dispute holds nothing any more.
    expect(await ledger.balanceOf(alice, account.id)).to.include({ balance: 160, available_balance: 160 });
    const announced = await ledger
      .db('outbox')
      .whereRaw(`event ->> 'type' = 'TransactionReversed'`)
      .whereRaw(`event -> 'data' ->> 'account_id' = ?`, [account.id])
      .count<{ count: string }[]>('*');
    expect(Number(announced[0]?.count)).to.equal(final.refunds.length + 1);
    expect(await ledger.audit()).to.include({ ok: true });
  });
});
