import { expect } from 'chai';
import { eventually } from '@payments/testkit';
import { ProviderRefusal } from '../src/provider/payment-provider.js';
import { createFakeProvider } from './support/fake-provider.js';
import { useLedgerHarness, type TestUser } from './support/ledger-harness.js';

describe('ledger: refunds asked of the payment provider', function () {
  this.timeout(60_000);
  const provider = createFakeProvider();
  let alice: TestUser;

  const ledger = useLedgerHarness({ provider }, { booksBalance: true });
  beforeEach(() => {
    alice = ledger.newUser();
    provider.behave = () => undefined;
  });

  /** A deposit of `amount` paid through the (fake) provider, completed. */
  const paidDeposit = async (amount: number) => {
    const account = await ledger.openAccount(alice);
    const accepted = await ledger.deposit(alice, account.id, amount);
    const { id } = accepted.body as { id: string };
    const shown = await eventually(
      () => ledger.call('GET', `/transaction/${id}`, { user: alice }),
      (r) => r.body?.provider_payment !== undefined,
    );
    await ledger.confirm(shown.body.provider_payment.reference, 'completed', {
      amount: amount * 100,
      currency: 'USD',
    });
    await ledger.waitForStatus(alice, id, 'completed');
    return { accountId: account.id, id };
  };
  const refund = (id: string, body: object) =>
    ledger.call('POST', `/transaction/${id}/refund`, { user: alice, body });
  const refundCalls = (refundId: string) =>
    provider.calls.filter((c) => c.call === 'createRefund' && c.request.refundId === refundId);

  it('asks again, under the same refund id, a refund whose call failed in passing, and books it once', async () => {
    const { accountId, id } = await paidDeposit(50);
    let failures = 1;
    provider.behave = (call) => {
      if (call.call === 'createRefund' && failures-- > 0) throw new Error('connect ETIMEDOUT');
    };
    const answer = await refund(id, { amount: 20 });
    expect(answer.status, answer.text).to.equal(202);
    expect(answer.body.status).to.equal('pending');
    expect(await ledger.balanceOf(alice, accountId)).to.include({ balance: 50, available_balance: 30 });

    const booked = await ledger.waitForStatus(alice, answer.body.id, 'completed', 40_000);
    expect(booked.body.amount).to.equal(20);
    expect(await ledger.balanceOf(alice, accountId)).to.include({ balance: 30, available_balance: 30 });
    const calls = refundCalls(answer.body.id);
    expect(calls.length).to.be.greaterThanOrEqual(2);
    expect(calls.every((c) => c.call === 'createRefund' && c.request.transactionId === id)).to.equal(true);
  });

  it('fails a refund the provider refuses, with its reason, and releases the hold at once', async () => {
    const { accountId, id } = await paidDeposit(40);
    provider.behave = (call) => {
      if (call.call === 'createRefund')
        throw new ProviderRefusal('Charge has been disputed', 'charge_disputed');
    };
    const answer = await refund(id, {});
    expect(answer.status, answer.text).to.equal(202);
    expect(answer.body).to.include({ status: 'failed', failure_reason: 'Charge has been disputed' });
    expect(await ledger.balanceOf(alice, accountId)).to.include({ balance: 40, available_balance: 40 });
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(refundCalls(answer.body.id)).to.have.length(1);
  });

  it('refuses a transfer, and a deposit another user owns, asking the provider nothing', async () => {
    const { id } = await paidDeposit(30);
    const mallory = ledger.newUser();
    const stolen = await ledger.call('POST', `/transaction/${id}/refund`, { user: mallory, body: {} });
    expect(stolen.status).to.equal(404);
    const account = await ledger.openAccount(alice);
    const { accountId } = await paidDeposit(10);
    const sent = await ledger.call('POST', `/account/${accountId}/transfer`, {
      user: alice,
      body: { amount: 5, currency: 'USD', to_account_id: account.id },
    });
    await ledger.waitForStatus(alice, sent.body.id, 'completed');
    const transfer = await refund(sent.body.id, {});
    expect(transfer.status).to.equal(422);
    expect(transfer.body.detail).to.match(/Only a deposit/);
    const asked = provider.calls.filter(
      (c) => c.call === 'createRefund' && [id, sent.body.id].includes(c.request.transactionId),
    );
    expect(asked).to.have.length(0);
  });
});
