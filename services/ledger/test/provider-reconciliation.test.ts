import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { toMinorUnits, type ReconciliationDecision } from '@payments/contracts';
import { aPaymentRecord, aPayoutRecord } from '@payments/test-support';
import { eventually } from '@payments/testkit';
import { ProviderRefusal } from '../src/provider/payment-provider.js';
import { createFakeProvider } from './support/fake-provider.js';
import { useLedgerHarness, type TestUser } from './support/ledger-harness.js';

const compact = (id: string) => id.replaceAll('-', '');

describe("ledger: reconciliation with the payment provider's own records", function () {
  this.timeout(60_000);
  const provider = createFakeProvider();
  let admin: TestUser;

  const ledger = useLedgerHarness(
    {
      provider,
      env: { RECONCILIATION_INTERVAL_SECONDS: '0', RECONCILIATION_GRACE_SECONDS: '0' },
    },
    { booksBalance: true },
  );
  before(async () => {
    admin = ledger.newUser('admin');
  });
  beforeEach(() => {
    provider.records = [];
  });

  const run = async () => {
    const answer = await ledger.call('POST', '/admin/reconciliation/runs', { user: admin });
    expect(answer.status, answer.text).to.equal(200);
    return answer.body;
  };
  const openCases = async () =>
    (
      (await ledger.call('GET', '/admin/reconciliation?limit=100', { user: admin })).body.data as {
        kind: string;
        id: string;
        transaction_id: string;
      }[]
    ).filter((item) => item.kind !== 'unconfirmed_withdrawal');
  const caseOf = async (transactionId: string) => {
    const found = (await openCases()).filter((item) => item.transaction_id === transactionId);
    expect(found, `one open case for ${transactionId}`).to.have.length(1);
    return found[0] as { kind: string; id: string } & Record<string, unknown>;
  };
  const decide = (caseId: string, decision: ReconciliationDecision, reason = 'checked with the provider') =>
    ledger.call('POST', `/admin/reconciliation/cases/${caseId}/resolution`, {
      user: admin,
      body: { decision, reason },
    });
  const pendingDeposit = async (user: TestUser, amount: number) => {
    const account = await ledger.openAccount(user);
    const accepted = await ledger.deposit(user, account.id, amount);
    expect(accepted.status, accepted.text).to.equal(202);
    await eventually(
      () => ledger.db('provider_payments').where({ transaction_id: accepted.body.id }).first(),
      (row) => row?.state === 'created',
    );
    return { account, id: accepted.body.id as string };
  };

  /** A user with 100 USD and a linked payout account, whose withdrawal of `amount` the provider was asked to pay. */
  const payoutMade = async (amount: number) => {
    const user = ledger.newUser();
    const account = await ledger.openAccount(user);
    await ledger.fund(user, account.id, 100);
    expect((await ledger.call('POST', '/payout-account', { user })).status).to.equal(201);
    const accepted = await ledger.withdraw(user, account.id, amount);
    expect(accepted.status).to.equal(202);
    const id = accepted.body.id as string;
    await eventually(
      () => ledger.db('provider_payments').where({ transaction_id: id }).first(),
      (row) => row?.state === 'created',
    );
    return { user, account, id };
  };

  it('finds a capture never credited, and an admin booking it credits the deposit once, in the trail', async () => {
    const user = ledger.newUser();
    const { account, id } = await pendingDeposit(user, 25);
    provider.records = [aPaymentRecord(id, 2500)];

    const summary = await run();
    expect(summary).to.include({ mismatches: 1, opened: 1 });
    const found = await caseOf(id);
    expect(found).to.include({
      kind: 'captured_not_credited',
      status: 'open',
      provider_reference: `pi_${compact(id)}`,
      currency: 'USD',
      provider_amount: 25,
      ledger_amount: 0,
    });
    // Only an admin sees or decides it.
    expect((await ledger.call('GET', '/admin/reconciliation', { user })).status).to.equal(403);
    expect((await ledger.call('POST', '/admin/reconciliation/runs', { user })).status).to.equal(403);
    const byUser = await ledger.call('POST', `/admin/reconciliation/cases/${found.id}/resolution`, {
      user,
      body: { decision: 'book', reason: 'mine' },
    });
    expect(byUser.status).to.equal(403);

    // Decided twice at once: the same decision, booked once.
    const answers = await Promise.all([decide(found.id, 'book'), decide(found.id, 'book')]);
    for (const answer of answers) {
      expect(answer.status, answer.text).to.equal(200);
      expect(answer.body).to.include({ status: 'resolved', decision: 'book', resolved_by: admin.id });
    }
    await ledger.waitForStatus(user, id, 'completed');
    expect(await ledger.balanceOf(user, account.id)).to.include({ balance: 25, available_balance: 25 });

    // The provider's event arriving after all changes nothing, and the next run finds nothing new.
    await ledger.confirm(id, 'completed', { amount: 2500, currency: 'USD' });
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(await ledger.balanceOf(user, account.id)).to.include({ balance: 25 });
    expect(await run()).to.include({ mismatches: 0, opened: 0 });

    const trail = await ledger.call('GET', '/admin/actions?limit=100', { user: admin });
    const entries = (trail.body.data as { subject: string }[]).filter(
      (entry) => entry.subject === `reconciliation_case:${found.id}`,
    );
    expect(entries).to.have.length(1);
    expect(entries[0]).to.include({
      actor: admin.id,
      action: 'reconciliation.book',
      reason: 'checked with the provider',
    });
    expect((await ledger.call('GET', '/admin/actions', { user })).status).to.equal(403);
    // The trail cannot be rewritten, even from the ledger's own connection.
    let refused: unknown = null;
    await ledger
      .db('admin_actions')
      .update({ reason: 'nothing happened' })
      .catch((error: unknown) => {
        refused = error;
      });
    expect(String(refused)).to.match(/append-only/);
  });

  it('finds a capture never credited whose dispute took it all back, and booking it ends the deposit', async () => {
    // Net, provider and books agree (nothing kept, nothing credited); the deposit would wait forever.
    const user = ledger.newUser();
    const { account, id } = await pendingDeposit(user, 20);
    provider.records = [
      aPaymentRecord(id, 2000, {
        disputes: [{ id: 'dp_lost', amount: toMinorUnits(2000), outcome: 'lost' }],
      }),
    ];
    await run();
    const found = await caseOf(id);
    expect(found).to.include({ kind: 'captured_not_credited', provider_amount: 20, ledger_amount: 0 });
    const decided = await decide(found.id, 'book');
    expect(decided.status, decided.text).to.equal(200);
    await ledger.waitForStatus(user, id, 'completed');
    expect(await ledger.balanceOf(user, account.id)).to.include({ balance: 0, available_balance: 0 });
    const history = (await ledger.call('GET', `/account/${account.id}/transactions`, { user })).body.data;
    expect(history.filter((t: { type: string; status: string }) => t.type === 'reversal')).to.have.length(1);
    expect(await run()).to.include({ mismatches: 0 });
  });

  it('finds a refund the ledger never heard of, and booking it reverses that much of the deposit', async () => {
    const user = ledger.newUser();
    const account = await ledger.openAccount(user);
    await ledger.fund(user, account.id, 40);
    const [deposit] = (await ledger.call('GET', `/account/${account.id}/transactions`, { user })).body.data;
    provider.records = [aPaymentRecord(deposit.id, 4000, { refunded: toMinorUnits(1_000) })];
    await run();
    const found = await caseOf(deposit.id);
    expect(found).to.include({ kind: 'credited_not_captured', provider_amount: 30, ledger_amount: 40 });
    expect((await decide(found.id, 'book')).status).to.equal(200);
    expect(await ledger.balanceOf(user, account.id)).to.include({ balance: 30 });
    const history = (await ledger.call('GET', `/account/${account.id}/transactions`, { user })).body.data;
    expect(history.filter((t: { type: string }) => t.type === 'reversal')).to.have.length(1);
  });

  it('finds a dispute the provider decided while the deposit still holds it, and booking it releases the hold', async () => {
    const user = ledger.newUser();
    const account = await ledger.openAccount(user);
    await ledger.fund(user, account.id, 50);
    const [deposit] = (await ledger.call('GET', `/account/${account.id}/transactions`, { user })).body.data;
    await ledger.adjust(deposit.id, 'dispute_opened', 2000, { reference: 'dp_won' });
    await eventually(
      () => ledger.balanceOf(user, account.id),
      (balance) => balance.available_balance === 30,
    );
    // Won at the provider; the ledger never heard.
    provider.records = [
      aPaymentRecord(deposit.id, 5000, {
        disputes: [{ id: 'dp_won', amount: toMinorUnits(2000), outcome: 'won' }],
      }),
    ];
    await run();
    const found = await caseOf(deposit.id);
    expect(found).to.include({ kind: 'dispute_still_held', provider_amount: 0, ledger_amount: 20 });
    expect((await decide(found.id, 'book')).status).to.equal(200);
    expect(await ledger.balanceOf(user, account.id)).to.include({ balance: 50, available_balance: 50 });
  });

  it('finds a payout paid while its withdrawal still holds the money, and booking it debits the withdrawal', async () => {
    const { user, account, id } = await payoutMade(30);
    provider.records = [aPayoutRecord(id, 3000)];
    await run();
    const found = await caseOf(id);
    expect(found).to.include({ kind: 'paid_out_still_held', provider_amount: 30, ledger_amount: 0 });
    expect((await decide(found.id, 'book')).status).to.equal(200);
    await ledger.waitForStatus(user, id, 'completed');
    expect(await ledger.balanceOf(user, account.id)).to.include({ balance: 70, available_balance: 70 });
  });

  it("finds a failed payout's transfer never taken back, and booking it asks the provider to take it back", async () => {
    const { user, account, id } = await payoutMade(20);
    await ledger.confirm(id, 'failed', { movement: 'payout' });
    await ledger.waitForStatus(user, id, 'failed');
    const reversals = () => provider.callsAbout(id).filter((c) => c.call === 'reversePayout');
    await eventually(
      async () => reversals(),
      (calls) => calls.length === 1,
    );
    // The provider's records say the transfer was never reversed.
    provider.records = [aPayoutRecord(id, 2000, { status: 'failed', failureReason: 'account closed' })];
    await run();
    const found = await caseOf(id);
    expect(found).to.include({ kind: 'transfer_not_reversed', provider_amount: 20, ledger_amount: 0 });
    // Found days later: the reversal's first key is older than the provider keeps it, and it is asked for anew.
    await ledger
      .db('provider_payments')
      .where({ transaction_id: id })
      .update({ undo_keys_first_used_at: ledger.db.raw(`now() - interval '30 hours'`) });
    expect((await decide(found.id, 'book')).status).to.equal(200);
    await eventually(
      async () => reversals(),
      (calls) => calls.length === 2,
    );
    expect(await ledger.balanceOf(user, account.id)).to.include({ balance: 100 });
  });

  it("tells the records of a removed user apart from money unknown to the ledger, comparing the user's deposit as kept", async () => {
    const user = ledger.newUser();
    // Confirmed only once the provider made its payment, as a real webhook would be: a deposit that ended before
    // its payment was asked for has no payment at the provider to be kept for.
    const { account, id: depositId } = await pendingDeposit(user, 10);
    await ledger.confirm(depositId, 'completed');
    await ledger.waitForStatus(user, depositId, 'completed');
    expect((await ledger.call('POST', '/payout-account', { user })).status).to.equal(201);
    const withdrawal = await ledger.withdraw(user, account.id, 10);
    await ledger.confirm(withdrawal.body.id, 'completed', { movement: 'payout' });
    await ledger.waitForStatus(user, withdrawal.body.id, 'completed');
    const removal = await ledger.call('POST', `/internal/users/${user.id}/removal`);
    expect(removal.status, removal.text).to.equal(200);
    provider.records = [aPaymentRecord(depositId, 1000), aPayoutRecord(withdrawal.body.id, 1000)];
    // The withdrawal's history left with the user; the deposit is kept, for what the provider may take back later.
    expect(await run()).to.include({ checked: 2, removed: 1, agreed: 1, mismatches: 0 });
  });

  it('takes a payment naming a deposit that ended before the provider was asked for foreign money, never for its own', async () => {
    const user = ledger.newUser();
    const account = await ledger.openAccount(user);
    await ledger.fund(user, account.id, 10);
    const [deposit] = (await ledger.call('GET', `/account/${account.id}/transactions`, { user })).body.data;
    // As when a stand-in confirmation completes a deposit before the provider worker reaches it: nothing is made.
    await ledger
      .db('provider_payments')
      .where({ transaction_id: deposit.id })
      .update({ state: 'skipped', reference: null });
    // Someone else's payment names the deposit, for its very amount: the books must not call that agreement.
    provider.records = [aPaymentRecord(deposit.id, 1000, { reference: 'pi_never_asked_for' })];
    await run();
    const found = await caseOf(deposit.id);
    expect(found).to.include({
      kind: 'foreign_object',
      provider_reference: 'pi_never_asked_for',
      provider_amount: 10,
      ledger_amount: 0,
    });
    const booked = await decide(found.id, 'book');
    expect(booked.status, booked.text).to.equal(422);
    expect(await ledger.balanceOf(user, account.id)).to.include({ balance: 10 });
  });

  it('records that nothing is owed for money unknown to the ledger; another decision after it is a 409', async () => {
    provider.records = [
      aPaymentRecord('00000000-0000-4000-8000-000000000000', 500, {
        reference: 'pi_elsewhere',
        transactionId: null,
      }),
    ];
    await run();
    const found = (await openCases()).find((item) => item.kind === 'unknown_to_ledger');
    expect(found).to.include({ transaction_id: null, provider_reference: 'pi_elsewhere' });
    const id = (found as { id: string }).id;
    const booked = await decide(id, 'book');
    expect(booked.status).to.equal(422);
    expect(booked.body).to.include({ code: 'BUSINESS_RULE_VIOLATION' });
    const settled = await decide(id, 'nothing_owed', 'another app of ours on the same Stripe account');
    expect(settled.status, settled.text).to.equal(200);
    expect((await decide(id, 'nothing_owed', 'again')).status).to.equal(200);
    expect((await decide(id, 'book')).status).to.equal(409);
    // Decided: the same mismatch seen again stays decided, off the list.
    await run();
    expect((await openCases()).some((item) => item.id === id)).to.equal(false);
    const shown = await ledger.call('GET', `/admin/reconciliation/cases/${id}`, { user: admin });
    expect(shown.body).to.include({ status: 'resolved', decision: 'nothing_owed' });
  });

  it("refuses a reason too short, and a decision the provider's records do not explain", async () => {
    const user = ledger.newUser();
    const account = await ledger.openAccount(user);
    await ledger.fund(user, account.id, 10);
    const [deposit] = (await ledger.call('GET', `/account/${account.id}/transactions`, { user })).body.data;
    // The provider never captured it: nothing of its records can be booked to make the two agree.
    provider.records = [aPaymentRecord(deposit.id, 1000, { captured: toMinorUnits(0) })];
    await run();
    const found = await caseOf(deposit.id);
    expect(found).to.include({ kind: 'credited_not_captured' });
    const tooShort = await decide(found.id, 'book', 'no');
    expect(tooShort.status).to.equal(400);
    expect(tooShort.body).to.include({ code: 'VALIDATION_ERROR' });
    const refused = await decide(found.id, 'book');
    expect(refused.status).to.equal(409);
    expect(await ledger.balanceOf(user, account.id)).to.include({ balance: 10 });
    expect((await openCases()).some((item) => item.id === found.id)).to.equal(true);
  });

  it('keeps one open case per reference: the mismatch as it stands, the earlier one over', async () => {
    const user = ledger.newUser();
    const { id } = await pendingDeposit(user, 25);
    provider.records = [aPaymentRecord(id, 2500)];
    await run();
    const first = await caseOf(id);
    provider.records = [aPaymentRecord(id, 2500, { refunded: toMinorUnits(500) })];
    await run();
    const now = await caseOf(id);
    expect(now.id).to.not.equal(first.id);
    expect(now).to.include({ kind: 'captured_not_credited', provider_amount: 20, ledger_amount: 0 });
    const earlier = await ledger.call('GET', `/admin/reconciliation/cases/${first.id}`, { user: admin });
    expect(earlier.body).to.include({ status: 'cleared' });
    expect((await decide(now.id, 'book')).status).to.equal(200);
    expect(
      (
        await ledger.balanceOf(
          user,
          (await ledger.call('GET', `/transaction/${id}`, { user })).body.account_id,
        )
      ).balance,
    ).to.equal(20);
  });

  it('clears a case once the late event makes the two agree, and reports the open ones as CSV', async () => {
    const user = ledger.newUser();
    const { id } = await pendingDeposit(user, 12);
    provider.records = [aPaymentRecord(id, 1200)];
    await run();
    const found = await caseOf(id);
    const report = await ledger.call('GET', '/admin/reconciliation?format=csv', { user: admin });
    expect(report.status).to.equal(200);
    expect(report.headers.get('content-type')).to.match(/^text\/csv/);
    const lines = report.text.trim().split('\r\n');
    expect(lines[0]).to.equal(
      'kind,case_id,status,transaction_id,provider_reference,currency,provider_amount,ledger_amount,found_at',
    );
    expect(lines.some((line) => line.startsWith(`captured_not_credited,${found.id},open,${id},`))).to.equal(
      true,
    );
    expect(lines.find((line) => line.includes(found.id))).to.include(',USD,12.00,0.00,');

    await ledger.confirm(id, 'completed', { amount: 1200, currency: 'USD' });
    await ledger.waitForStatus(user, id, 'completed');
    expect(await run()).to.include({ cleared: 1 });
    const shown = await ledger.call('GET', `/admin/reconciliation/cases/${found.id}`, { user: admin });
    expect(shown.body).to.include({ status: 'cleared' });
    expect((await decide(found.id, 'book')).status).to.equal(409);
  });

  it('pages the queue by cursor, withdrawals then cases, none skipped or repeated while items come and go', async () => {
    /** A withdrawal handed to the provider that outlived its hold expiry. */
    const flagged = async () => {
      const { id } = await payoutMade(1);
      await ledger
        .db('transactions')
        .where({ id })
        .update({ reconciliation_required_at: ledger.db.fn.now() });
      return id;
    };
    const opened = async () => {
      const id = randomUUID();
      await ledger.db('reconciliation_cases').insert({
        id,
        kind: 'unknown_to_ledger',
        provider_reference: `po_${compact(id)}`,
        currency: 'USD',
        provider_amount: 100,
        ledger_amount: 0,
      });
      return id;
    };
    const list = (query: string) => ledger.call('GET', `/admin/reconciliation?${query}`, { user: admin });
    const waiting = [await flagged(), await flagged(), await opened(), await opened()];

    const seen: { id: string; kind: string }[] = [];
    const arrived: string[] = [];
    const settled = new Set<string>();
    let page = await list('limit=2');
    for (let pages = 0; pages < 100; pages += 1) {
      expect(page.status, page.text).to.equal(200);
      const items = page.body.data as { id: string; kind: string }[];
      seen.push(...items);
      if (!page.body.has_more) break;
      const last = items.at(-1) as { id: string; kind: string };
      if (pages === 0) {
        // While the operator reads: a withdrawal and a case join the queue (offset would skip the one ahead).
        arrived.push(await flagged(), await opened());
      } else if (last.kind !== 'unconfirmed_withdrawal') {
        // The operator settles the page's last case: the list moves up, and the cursor still marks its place.
        await ledger.db('reconciliation_cases').where({ id: last.id }).update({ status: 'cleared' });
        settled.add(last.id);
      }
      page = await list(`limit=2&starting_after=${last.id}`);
    }
    expect(page.body.has_more).to.equal(false);
    const ids = seen.map((item) => item.id);
    expect(new Set(ids).size, 'no item read twice').to.equal(ids.length);
    expect(ids).to.include.members([...waiting, ...arrived]);
    expect(settled.size).to.be.above(0);
    const kinds = seen.map((item) => item.kind === 'unconfirmed_withdrawal');
    expect(kinds.lastIndexOf(true), 'withdrawals first').to.be.below(kinds.indexOf(false));

    // The previous page: the two still waiting just before the last page's first item.
    const first = (page.body.data as { id: string }[])[0]?.id as string;
    const still = ids.filter((id) => !settled.has(id));
    const back = await list(`limit=2&ending_before=${first}`);
    expect(back.status, back.text).to.equal(200);
    expect((back.body.data as { id: string }[]).map((item) => item.id)).to.deep.equal(
      still.slice(still.indexOf(first) - 2, still.indexOf(first)),
    );
    expect(back.body.has_more).to.equal(still.indexOf(first) > 2);

    // A cursor names an item of this queue, and does not mix with an offset.
    for (const query of [
      `starting_after=${randomUUID()}`,
      `ending_before=${(await ledger.openAccount(ledger.newUser())).id}`,
      `offset=2&starting_after=${waiting[0]}`,
      `starting_after=${waiting[0]}&ending_before=${waiting[1]}`,
    ]) {
      const refused = await list(query);
      expect(refused.status, query).to.equal(400);
      expect(refused.body.code).to.equal('VALIDATION_ERROR');
    }
  });

  describe("the provider's whole picture of a transaction", () => {
    afterEach(() => {
      provider.behave = () => undefined;
    });

    it('finds a second capture for one deposit, refunds it at the provider once, and then agrees', async () => {
      const user = ledger.newUser();
      const { account, id } = await pendingDeposit(user, 10);
      await ledger.confirm(`pi_${compact(id)}`, 'completed', {
        transaction_id: id,
        amount: 1000,
        currency: 'USD',
      });
      await ledger.waitForStatus(user, id, 'completed');
      const second = aPaymentRecord(id, 1000, { reference: 'pi_second_capture' });
      provider.records = [aPaymentRecord(id, 1000), second];
      expect(await run()).to.include({ mismatches: 1, agreed: 1 });
      const found = await caseOf(id);
      expect(found).to.include({
        kind: 'duplicate_capture',
        provider_reference: 'pi_second_capture',
        provider_amount: 10,
        ledger_amount: 0,
      });
      // The books never took it in: nothing to book, and the user is not credited twice.
      expect((await decide(found.id, 'book')).status).to.equal(422);
      expect((await decide(found.id, 'reverse')).status).to.equal(422);
      const answers = await Promise.all([decide(found.id, 'refund'), decide(found.id, 'refund')]);
      for (const answer of answers) expect(answer.body, answer.text).to.include({ decision: 'refund' });
      const refunds = provider.calls.filter((c) => c.call === 'refundPayment');
      expect(refunds.every((c) => 'reference' in c && c.reference === 'pi_second_capture')).to.equal(true);
      expect(new Set(refunds.map((c) => ('idempotencyKey' in c ? c.idempotencyKey : '')))).to.have.length(1);
      expect(await ledger.balanceOf(user, account.id)).to.include({ balance: 10 });

      provider.records = [aPaymentRecord(id, 1000), { ...second, refunded: toMinorUnits(1000) }];
      expect(await run()).to.include({ mismatches: 0 });
      const trail = await ledger.call('GET', '/admin/actions?limit=100', { user: admin });
      expect(
        (trail.body.data as { action: string; subject: string }[]).filter(
          (entry) => entry.subject === `reconciliation_case:${found.id}`,
        ),
      ).to.have.length(1);
    });

    it("never refunds through reconciliation the payment the ledger asked for (that money is the user's)", async () => {
      const user = ledger.newUser();
      const { id } = await pendingDeposit(user, 15);
      provider.records = [aPaymentRecord(id, 1500)];
      await run();
      const found = await caseOf(id);
      expect(found).to.include({ kind: 'captured_not_credited' });
      expect((await decide(found.id, 'refund')).status).to.equal(422);
      const refunded = provider.calls.some(
        (c) => c.call === 'refundPayment' && c.reference === `pi_${compact(id)}`,
      );
      expect(refunded).to.equal(false);
    });

    it('finds a second transfer for one withdrawal and takes it back from the connected account', async () => {
      const { user, account, id } = await payoutMade(30);
      await ledger.confirm(`po_${compact(id)}`, 'completed', {
        transaction_id: id,
        movement: 'payout',
        amount: 3000,
        currency: 'USD',
        account: (await ledger.call('GET', '/payout-account', { user })).body.account,
      });
      await ledger.waitForStatus(user, id, 'completed');
      provider.records = [
        aPayoutRecord(id, 3000),
        aPayoutRecord(id, 3000, { reference: 'tr_second', payout: null, status: 'open' }),
      ];
      await run();
      const found = await caseOf(id);
      expect(found).to.include({
        kind: 'duplicate_transfer',
        provider_reference: 'tr_second',
        provider_amount: 30,
        ledger_amount: 0,
      });
      expect((await decide(found.id, 'reverse')).status).to.equal(200);
      const reversed = provider.calls.some((c) => c.call === 'reverseTransfer' && c.transfer === 'tr_second');
      expect(reversed).to.equal(true);
      expect(await ledger.balanceOf(user, account.id)).to.include({ balance: 70 });
    });

    it('finds a payout that paid another amount than its transfer moved', async () => {
      const { id } = await payoutMade(25);
      provider.records = [aPayoutRecord(id, 2500, { payoutAmount: toMinorUnits(2000) })];
      await run();
      expect(await caseOf(id)).to.include({
        kind: 'payout_amount_differs',
        provider_amount: 20,
        ledger_amount: 25,
      });
    });

    it('finds money left on the connected account after a refused payout whose reversal failed', async () => {
      const user = ledger.newUser();
      const account = await ledger.openAccount(user);
      await ledger.fund(user, account.id, 100);
      expect((await ledger.call('POST', '/payout-account', { user })).status).to.equal(201);
      provider.behave = (call) => {
        if (call.call === 'createPayout')
          throw new ProviderRefusal('Payouts are not enabled for this account');
      };
      const accepted = await ledger.withdraw(user, account.id, 20);
      const id = accepted.body.id as string;
      await ledger.waitForStatus(user, id, 'failed');
      provider.behave = () => undefined;
      // The transfer went through before the payout was refused, and taking it back failed.
      provider.records = [aPayoutRecord(id, 2000, { payout: null, status: 'open' })];
      await run();
      const found = await caseOf(id);
      expect(found).to.include({ kind: 'transfer_not_reversed', provider_amount: 20, ledger_amount: 0 });
      expect((await decide(found.id, 'book')).status).to.equal(200);
      await eventually(
        async () => provider.callsAbout(id).filter((c) => c.call === 'reversePayout'),
        (calls) => calls.length === 1,
      );
      expect(await ledger.balanceOf(user, account.id)).to.include({ balance: 100 });
    });

    it('finds a payment naming a transaction of another type (a transfer), and records nothing owed', async () => {
      const user = ledger.newUser();
      const from = await ledger.openAccount(user);
      const to = await ledger.openAccount(user);
      await ledger.fund(user, from.id, 10);
      const transfer = await ledger.transfer(user, from.id, to.id, 5);
      expect(transfer.status, transfer.text).to.equal(202);
      await ledger.waitForStatus(user, transfer.body.id, 'completed');
      provider.records = [aPaymentRecord(transfer.body.id, 500, { reference: 'pi_naming_a_transfer' })];
      await run();
      const found = await caseOf(transfer.body.id);
      expect(found).to.include({ kind: 'foreign_object', provider_amount: 5, ledger_amount: 0 });
      expect((await decide(found.id, 'nothing_owed', 'a test payment of ours')).status).to.equal(200);
    });
  });
});
