import { expect } from 'chai';
import { DEVELOPMENT_SERVICE_TOKEN, serviceAuthorization } from '@payments/service-kit';
import { eventually } from '@payments/testkit';
import { createFakeProvider } from './support/fake-provider.js';
import { aCustomer, useLedgerHarness, type TestUser } from './support/ledger-harness.js';

describe("ledger: a provider request is made no more once its idempotency keys outlived the provider's memory", function () {
  this.timeout(60_000);
  const provider = createFakeProvider();

  const ledger = useLedgerHarness({ provider }, { booksBalance: true });
  beforeEach(() => {
    provider.behave = () => undefined;
  });

  /** A user with 100 USD and a linked payout account. */
  const customer = () => aCustomer(ledger, { payoutAccount: true });
  const withdraw = async (user: TestUser, accountId: string, amount: number) => {
    const accepted = await ledger.withdraw(user, accountId, amount);
    expect(accepted.status, accepted.text).to.equal(202);
    return accepted.body.id as string;
  };
  const requestOf = (id: string) => ledger.db('provider_payments').where({ transaction_id: id }).first();
  const down = () =>
    Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:3005'), { code: 'ECONNREFUSED' });
  /** Ages a phase's keys as if first used `hours` ago, and makes the request due now if it waits to be tried again. */
  const age = (id: string, phase: 'create' | 'undo', hours: number) =>
    ledger
      .db('provider_payments')
      .where({ transaction_id: id })
      .update({
        [`${phase}_keys_first_used_at`]: ledger.db.raw(`now() - ? * interval '1 hour'`, [hours]),
        next_attempt_at: ledger.db.raw('CASE WHEN next_attempt_at IS NULL THEN NULL ELSE now() END'),
      });
  const casesOf = (id: string) =>
    ledger.db('reconciliation_cases').where({ transaction_id: id, kind: 'request_expired' });
  /** The value of `ledger_provider_calls_total` for one call and outcome. */
  const callsCounted = async (call: string, outcome: string) => {
    const response = await fetch(`${ledger.url}/metrics`, {
      headers: serviceAuthorization(DEVELOPMENT_SERVICE_TOKEN),
    });
    const line = (await response.text())
      .split('\n')
      .find(
        (found) =>
          found.startsWith('ledger_provider_calls_total{') &&
          found.includes(`call="${call}"`) &&
          found.includes(`outcome="${outcome}"`),
      );
    return line ? Number(line.split(' ').at(-1)) : 0;
  };

  it('stops a payout still failing a day after its first call, opens a request_expired case, and keeps the hold', async () => {
    provider.behave = (call) => {
      if (call.call === 'createPayout') throw down();
    };
    const { user, account } = await customer();
    const id = await withdraw(user, account.id, 30);
    const tried = await eventually(
      () => requestOf(id),
      (row) => row?.last_error !== null && row?.attempts >= 1,
    );
    expect(tried.create_keys_first_used_at).to.be.instanceOf(Date);
    // Not yet past Stripe's 24 hours and the margin: it is tried again.
    await age(id, 'create', 12);
    await eventually(
      () => requestOf(id),
      (row) => row.attempts > tried.attempts,
    );
    expect((await requestOf(id)).state).to.equal('requested');

    await age(id, 'create', 24);
    const expired = await eventually(
      () => requestOf(id),
      (row) => row.state === 'expired',
    );
    expect(expired).to.include({ next_attempt_at: null, reference: null });
    const made = provider.callsAbout(id).length;
    expect(
      await casesOf(id).select(
        'provider_reference',
        'currency',
        'provider_amount',
        'ledger_amount',
        'status',
      ),
    ).to.deep.equal([
      {
        provider_reference: id,
        currency: 'USD',
        provider_amount: '0',
        ledger_amount: '3000',
        status: 'open',
      },
    ]);
    // Left for an operator as it stands: pending, its funds still held.
    const shown = await ledger.call('GET', `/transaction/${id}`, { user });
    expect(shown.body.status).to.equal('pending');
    expect(await ledger.balanceOf(user, account.id)).to.include({ balance: 100, available_balance: 70 });
    expect(await callsCounted('create_payout', 'expired')).to.equal(1);
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    expect(provider.callsAbout(id)).to.have.length(made);
  });

  it("counts a failed payout's reversal from its own first call, not from the payout's", async () => {
    const { user, account } = await customer();
    const id = await withdraw(user, account.id, 20);
    await eventually(
      () => requestOf(id),
      (row) => row?.state === 'created',
    );
    provider.behave = (call) => {
      if (call.call === 'reversePayout') throw down();
    };
    // The payout was made two days ago and failed at the bank only now: its transfer is still taken back.
    await age(id, 'create', 48);
    await ledger.confirm(id, 'failed', { movement: 'payout' });
    await ledger.waitForStatus(user, id, 'failed');
    const reversing = await eventually(
      () => requestOf(id),
      (row) => row.undo_keys_first_used_at !== null && row.last_error !== null,
    );
    expect(reversing.state).to.equal('created');
    const reversals = () => provider.callsAbout(id).filter((call) => call.call === 'reversePayout');
    expect(reversals()).to.have.length.greaterThan(0);

    await age(id, 'undo', 24);
    await eventually(
      () => requestOf(id),
      (row) => row.state === 'expired',
    );
    const made = reversals().length;
    expect(await casesOf(id).select('provider_reference', 'provider_amount', 'ledger_amount')).to.deep.equal([
      { provider_reference: `tr_${id.replaceAll('-', '')}`, provider_amount: '0', ledger_amount: '2000' },
    ]);
    expect(await ledger.balanceOf(user, account.id)).to.include({ balance: 100, available_balance: 100 });
    expect(await callsCounted('reverse_transfer', 'expired')).to.equal(1);
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    expect(reversals()).to.have.length(made);
  });

  it('fails the withdrawal and releases its hold once an admin finds the provider made nothing, in the trail', async () => {
    provider.behave = (call) => {
      if (call.call === 'createPayout') throw down();
    };
    const { user, account } = await customer();
    const id = await withdraw(user, account.id, 25);
    await eventually(
      () => requestOf(id),
      (row) => row?.attempts >= 1,
    );
    await age(id, 'create', 24);
    await eventually(
      () => requestOf(id),
      (row) => row.state === 'expired',
    );
    const [found] = await casesOf(id).select('id');
    const admin = ledger.newUser('admin');
    const booked = await ledger.call('POST', `/admin/reconciliation/cases/${found.id}/resolution`, {
      user: admin,
      body: { decision: 'book', reason: 'as the provider says' },
    });
    expect(booked.status, booked.text).to.equal(409);
    const decided = await ledger.call('POST', `/admin/reconciliation/cases/${found.id}/resolution`, {
      user: admin,
      body: { decision: 'nothing_owed', reason: 'no transfer with this transfer_group at Stripe' },
    });
    expect(decided.status, decided.text).to.equal(200);
    const shown = await ledger.call('GET', `/transaction/${id}`, { user });
    expect(shown.body).to.include({ status: 'failed' });
    expect(shown.body.failure_reason).to.include('never made it');
    expect(await ledger.balanceOf(user, account.id)).to.include({ balance: 100, available_balance: 100 });
    const trail = await ledger.call('GET', '/admin/actions?limit=100', { user: admin });
    const entry = (trail.body.data as { subject: string; detail: Record<string, unknown> }[]).find(
      (action) => action.subject === `reconciliation_case:${found.id}`,
    );
    expect(entry?.detail).to.include({ transaction_status: 'failed' });
  });
});
