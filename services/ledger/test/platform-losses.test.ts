import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { toMinorUnits } from '@payments/contracts';
import {
  createLogger,
  DEVELOPMENT_SERVICE_TOKEN,
  serviceAuthorization,
  type Knex,
} from '@payments/service-kit';
import { aPaymentRecord } from '@payments/test-support';
import { eventually } from '@payments/testkit';
import { createReversalRepository } from '../src/data/reversal-repository.js';
import type { Adjustment } from '../src/domain/reversal.js';
import { adjustDeposit } from '../src/use-cases/reversals.js';
import { createFakeProvider } from './support/fake-provider.js';
import { useLedgerHarness, type TestUser } from './support/ledger-harness.js';

const compact = (id: string) => id.replaceAll('-', '');

interface LossRow {
  id: string;
  deposit_id: string;
  reason: string;
  loss_key: string;
  amount: number;
  fee: number;
  reference: string;
}

/** The platform losses booked on a deposit, oldest first. */
async function lossesOf(db: Knex, depositId: string): Promise<LossRow[]> {
  const rows: (Omit<LossRow, 'amount' | 'fee'> & { amount: string; fee: string })[] = await db(
    'platform_losses',
  )
    .where({ deposit_id: depositId })
    .orderBy([{ column: 'created_at' }, { column: 'id' }]);
  return rows.map((row) => ({
    id: row.id,
    deposit_id: row.deposit_id,
    reason: row.reason,
    loss_key: row.loss_key,
    amount: Number(row.amount),
    fee: Number(row.fee),
    reference: row.reference,
  }));
}

describe("ledger: a removed user's deposit taken back by the provider is the platform's loss", function () {
  this.timeout(60_000);
  const provider = createFakeProvider();
  let admin: TestUser;

  const ledger = useLedgerHarness({
    provider,
    // A 1 % deposit fee: what is taken back gives back its share of it, as a reversal would.
    env: {
      FEE_DEPOSIT_PERCENT: '1',
      RECONCILIATION_INTERVAL_SECONDS: '0',
      RECONCILIATION_GRACE_SECONDS: '0',
    },
  });
  before(async () => {
    admin = ledger.newUser('admin');
  });
  beforeEach(() => {
    provider.records = [];
  });
  afterEach(async () => {
    const audit = await ledger.audit();
    expect(audit, JSON.stringify(audit)).to.include({ ok: true });
    expect(audit.misbooked_losses).to.deep.equal([]);
  });

  const systemBalance = async (code: string) => {
    const audit = await ledger.audit();
    const found = (audit.system_balances as { code: string; currency: string; balance: string }[]).find(
      (row) => row.code === code && row.currency === 'USD',
    );
    return BigInt(found?.balance ?? 0);
  };
  const systemBalances = async () => ({
    loss: await systemBalance('platform_loss'),
    fees: await systemBalance('fee_revenue'),
    clearing: await systemBalance('provider_clearing'),
  });

  /** A deposit of `amount` USD paid at the provider and credited; its id. */
  const paidDeposit = async (user: TestUser, accountId: string, amount: number) => {
    const accepted = await ledger.deposit(user, accountId, amount);
    expect(accepted.status, accepted.text).to.equal(202);
    const id = accepted.body.id as string;
    await eventually(
      () => ledger.db('provider_payments').where({ transaction_id: id }).first(),
      (row) => row?.state === 'created',
    );
    await ledger.confirm(id);
    await ledger.waitForStatus(user, id, 'completed');
    return id;
  };

  /** Pays out everything the account has, through the provider. */
  const withdrawAll = async (user: TestUser, accountId: string) => {
    const { available_balance: available } = await ledger.balanceOf(user, accountId);
    const accepted = await ledger.withdraw(user, accountId, available);
    expect(accepted.status, accepted.text).to.equal(202);
    await eventually(
      () => ledger.db('provider_payments').where({ transaction_id: accepted.body.id }).first(),
      (row) => row?.state === 'created',
    );
    await ledger.confirm(accepted.body.id, 'completed', { movement: 'payout' });
    await ledger.waitForStatus(user, accepted.body.id, 'completed');
  };

  const remove = async (user: TestUser) => {
    const removed = await ledger.call('POST', `/internal/users/${user.id}/removal`);
    expect(removed.status, removed.text).to.equal(200);
  };

  /**
   * A user who deposited `amount` USD (paid at the provider), was paid out all of it and was removed: the money
   * left, so nothing is left to take back from. Resolves with the deposit and its PaymentIntent.
   */
  const leaver = async (amount: number) => {
    const user = ledger.newUser();
    const account = await ledger.openAccount(user);
    expect((await ledger.call('POST', '/payout-account', { user })).status).to.equal(201);
    const depositId = await paidDeposit(user, account.id, amount);
    await withdrawAll(user, account.id);
    await remove(user);
    return { depositId, paymentIntent: `pi_${compact(depositId)}` };
  };

  /** Waits until the deposit has `count` losses, then a moment more, for anything booked twice to show. */
  const settledLosses = async (depositId: string, count: number) => {
    await eventually(
      () => lossesOf(ledger.db, depositId),
      (rows) => rows.length >= count,
    );
    await new Promise((resolve) => setTimeout(resolve, 300));
    return lossesOf(ledger.db, depositId);
  };

  it('books a refund against the platform loss account once however often it is delivered, linked to the deposit', async () => {
    const { depositId } = await leaver(100);
    const before = await systemBalances();
    const eventId = randomUUID();
    await ledger.adjust(depositId, 'refund', 4000, { reference: 're_once', eventId });
    await ledger.adjust(depositId, 'refund', 4000, { reference: 're_once', eventId });
    // Another notification of the same refunded total (Stripe sends several events for one refund).
    await ledger.adjust(depositId, 'refund', 4000, { reference: 're_once' });

    const losses = await settledLosses(depositId, 1);
    expect(losses).to.have.length(1);
    expect(losses[0]).to.include({
      reason: 'refund',
      loss_key: 'refund:4000',
      amount: 4000,
      fee: 40,
      reference: 're_once',
    });
    // Provider clearing gets the 40.00 back; fee revenue gives back its 0.40; the platform loses 39.60.
    const after = await systemBalances();
    expect(after.loss - before.loss).to.equal(-3960n);
    expect(after.fees - before.fees).to.equal(-40n);
    expect(after.clearing - before.clearing).to.equal(4000n);
    const entries = await ledger.db('entries').where({ transaction_id: losses[0]?.id }).count('* as n');
    expect(Number(entries[0]?.n)).to.equal(3);

    const audit = await ledger.audit();
    const totals = await ledger
      .db('platform_losses')
      .where({ currency: 'USD' })
      .select(
        ledger.db.raw('count(*)::int AS count'),
        ledger.db.raw('sum(amount)::text AS amount'),
        ledger.db.raw('sum(amount - fee)::text AS loss'),
      );
    expect(audit.platform_losses).to.deep.include({ currency: 'USD', ...totals[0] });

    const report = await ledger.call('GET', '/admin/overdrawn-accounts', { user: admin });
    expect(report.status, report.text).to.equal(200);
    expect(report.body.platform_losses).to.deep.include({
      id: losses[0]?.id,
      deposit_id: depositId,
      reason: 'refund',
      currency: 'USD',
      amount: 40,
      fee: 0.4,
      loss: 39.6,
      provider_reference: 're_once',
      booked_at: report.body.platform_losses.find((l: { id: string }) => l.id === losses[0]?.id)?.booked_at,
    });
    const usd = (
      report.body.by_currency as { currency: string; losses: number; losses_total: number }[]
    ).find((total) => total.currency === 'USD');
    expect(usd).to.include({ losses: totals[0]?.count, losses_total: Number(totals[0]?.loss) / 100 });

    const metrics = await (
      await fetch(`${ledger.url}/metrics`, { headers: serviceAuthorization(DEVELOPMENT_SERVICE_TOKEN) })
    ).text();
    expect(metrics).to.match(/^ledger_platform_losses(\{[^}]*\})? [1-9]/m);
    // The losses are part of the books: append-only, like the journal.
    const refused = await ledger
      .db('platform_losses')
      .where({ id: losses[0]?.id })
      .update({ amount: 1 })
      .catch((error: unknown) => error);
    expect(String(refused)).to.match(/append-only/);
  });

  it('books what each refunded total adds and a lost dispute named by its payment, never more than the deposit', async () => {
    const { depositId, paymentIntent } = await leaver(100);
    const step = async (
      kind: Adjustment['kind'],
      amount: number,
      reference: string,
      count: number,
      named = depositId,
    ) => {
      await ledger.adjust(named, kind, amount, { reference });
      return settledLosses(depositId, count);
    };
    await step('refund', 3000, 're_1', 1);
    // Disputes name the PaymentIntent only: the removed deposit is found by it. Opened, it holds nothing.
    expect(await step('dispute_opened', 5000, 'dp_lost', 1, paymentIntent)).to.have.length(1);
    await step('dispute_lost', 5000, 'dp_lost', 2, paymentIntent);
    expect(await step('dispute_won', 1000, 'dp_won', 2, paymentIntent)).to.have.length(2);
    // 60.00 refunded in all adds 30.00, of which only 20.00 is left of the deposit; then nothing is.
    await step('refund', 6000, 're_2', 3);
    expect(await step('refund', 10000, 're_3', 3)).to.have.length(3);

    const losses = await lossesOf(ledger.db, depositId);
    expect(losses.map((l) => [l.reason, l.loss_key, l.amount, l.fee])).to.deep.equal([
      ['refund', 'refund:3000', 3000, 30],
      ['dispute', 'dispute:dp_lost', 5000, 50],
      ['refund', 'refund:5000', 2000, 20],
    ]);
    // Taken back in full: the fee shares add up to the deposit's fee exactly.
    expect(losses.reduce((sum, l) => sum + l.fee, 0)).to.equal(100);
  });

  it('counts what was reversed before the removal: a dispute lost then is not booked again', async () => {
    const user = ledger.newUser();
    const account = await ledger.openAccount(user);
    expect((await ledger.call('POST', '/payout-account', { user })).status).to.equal(201);
    const depositId = await paidDeposit(user, account.id, 100);
    await ledger.adjust(depositId, 'dispute_lost', 2000, { reference: 'dp_early' });
    await eventually(
      () => ledger.balanceOf(user, account.id),
      (balance) => balance.balance === 79.2,
    );
    await withdrawAll(user, account.id);
    await remove(user);

    await ledger.adjust(depositId, 'dispute_lost', 2000, { reference: 'dp_early' });
    await ledger.adjust(depositId, 'refund', 10000, { reference: 're_rest' });
    const losses = await settledLosses(depositId, 1);
    expect(losses.map((l) => [l.reason, l.amount, l.fee])).to.deep.equal([['refund', 8000, 80]]);
  });

  it('books refunds of one deposit racing each other by what each total adds: never more than the largest', async () => {
    const { depositId } = await leaver(100);
    const store = createReversalRepository(ledger.db);
    const logger = createLogger('platform-losses-test', 'silent');
    const refund = (total: number) =>
      store.processEventsOnce([randomUUID()], (unit) =>
        adjustDeposit(
          unit,
          depositId,
          { kind: 'refund', amount: toMinorUnits(total), currency: 'USD', reference: `re_${total}` },
          { correlationId: `race-${total}`, logger },
        ).then(() => undefined),
      );
    await Promise.all([2000, 5000, 3000, 4000, 5000].map(refund));
    const losses = await lossesOf(ledger.db, depositId);
    expect(losses.reduce((sum, l) => sum + l.amount, 0)).to.equal(5000);
    expect(new Set(losses.map((l) => l.loss_key)).size).to.equal(losses.length);
  });

  it("leaves a live user's shortfall on their account below zero, and reports it next to the platform's losses", async () => {
    const alice = ledger.newUser();
    const bob = ledger.newUser();
    const account = await ledger.openAccount(alice);
    const bobAccount = await ledger.openAccount(bob);
    const depositId = await paidDeposit(alice, account.id, 100);
    const sent = await ledger.transfer(alice, account.id, bobAccount.id, 80);
    await ledger.waitForStatus(alice, sent.body.id, 'completed');
    await ledger.adjust(depositId, 'refund', 10000, { reference: 're_live' });
    await eventually(
      () => ledger.balanceOf(alice, account.id),
      (balance) => balance.balance === -80,
    );
    expect(await lossesOf(ledger.db, depositId)).to.deep.equal([]);

    const report = await ledger.call('GET', '/admin/overdrawn-accounts?limit=100', { user: admin });
    expect(report.body.data.map((a: { id: string }) => a.id)).to.include(account.id);
    const [owed] = await ledger
      .db('accounts')
      .where({ kind: 'user', currency: 'USD' })
      .where('available_balance', '<', 0)
      .select(ledger.db.raw('count(*)::int AS n'), ledger.db.raw('(-sum(available_balance))::int AS total'));
    const [lost] = await ledger
      .db('platform_losses')
      .where({ currency: 'USD' })
      .select(
        ledger.db.raw('count(*)::int AS n'),
        ledger.db.raw('coalesce(sum(amount - fee), 0)::int AS total'),
      );
    expect(report.body.by_currency).to.deep.include({
      currency: 'USD',
      overdrawn_accounts: owed.n,
      overdrawn_total: owed.total / 100,
      losses: lost.n,
      losses_total: lost.total / 100,
    });
  });

  it('books nothing for a deposit the ledger never had', async () => {
    const unknown = randomUUID();
    await ledger.adjust(unknown, 'refund', 500);
    await ledger.adjust(unknown, 'dispute_lost', 500, { reference: 'dp_unknown' });
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(await lossesOf(ledger.db, unknown)).to.deep.equal([]);
    expect(await ledger.bus.listDeadLetters('ledger')).to.have.length(0);
  });

  describe("reconciliation with the provider's records", () => {
    const run = async () => {
      const answer = await ledger.call('POST', '/admin/reconciliation/runs', { user: admin });
      expect(answer.status, answer.text).to.equal(200);
      return answer.body;
    };
    const openCasesOf = async (transactionId: string) =>
      (
        (await ledger.call('GET', '/admin/reconciliation?limit=100', { user: admin })).body.data as {
          kind: string;
          id: string;
          transaction_id: string;
        }[]
      ).filter((item) => item.kind !== 'unconfirmed_withdrawal' && item.transaction_id === transactionId);
    const decide = (caseId: string) =>
      ledger.call('POST', `/admin/reconciliation/cases/${caseId}/resolution`, {
        user: admin,
        body: { decision: 'book', reason: 'refunded at the provider after the user left' },
      });

    it('agrees with a removed deposit whose refund was booked as a loss', async () => {
      const { depositId } = await leaver(30);
      await ledger.adjust(depositId, 'refund', 1000, { reference: 're_agreed' });
      await settledLosses(depositId, 1);
      provider.records = [aPaymentRecord(depositId, 3000, { refunded: toMinorUnits(1000) })];
      expect(await run()).to.include({ checked: 1, agreed: 1, mismatches: 0, removed: 0 });
      expect(await openCasesOf(depositId)).to.deep.equal([]);
    });

    it('finds a refund the books never heard of, and an admin books it to the platform loss account once', async () => {
      const { depositId } = await leaver(50);
      provider.records = [aPaymentRecord(depositId, 5000, { refunded: toMinorUnits(2000) })];
      expect(await run()).to.include({ mismatches: 1, removed: 0 });
      const [found] = await openCasesOf(depositId);
      expect(found).to.include({ kind: 'credited_not_captured', provider_amount: 30, ledger_amount: 50 });
      const caseId = (found as { id: string }).id;

      const answers = await Promise.all([decide(caseId), decide(caseId)]);
      for (const answer of answers) expect(answer.status, answer.text).to.equal(200);
      const losses = await lossesOf(ledger.db, depositId);
      expect(losses.map((l) => [l.reason, l.amount, l.fee])).to.deep.equal([['refund', 2000, 20]]);

      // The provider's event arriving after the decision books nothing more, and the next run finds agreement.
      await ledger.adjust(depositId, 'refund', 2000, { reference: 're_late' });
      expect(await settledLosses(depositId, 1)).to.have.length(1);
      expect(await run()).to.include({ mismatches: 0 });
      const trail = await ledger.call('GET', '/admin/actions?limit=100', { user: admin });
      const decided = (trail.body.data as { subject: string; detail: { booked: string[] } }[]).find(
        (entry) => entry.subject === `reconciliation_case:${caseId}`,
      );
      expect(decided?.detail.booked).to.deep.equal([losses[0]?.id]);
    });
  });
});
