import { expect } from 'chai';
import { eventually } from '@payments/testkit';
import { createFakeProvider } from './support/fake-provider.js';
import { useLedgerHarness, type TestUser } from './support/ledger-harness.js';

describe('ledger: a deposit that names its payment method', function () {
  this.timeout(30_000);
  const provider = createFakeProvider();
  const ledger = useLedgerHarness({ provider });
  let alice: TestUser;
  let accountId: string;

  beforeEach(async () => {
    alice = ledger.newUser();
    accountId = (await ledger.openAccount(alice)).id;
  });

  const deposit = (body: Record<string, unknown>) =>
    ledger.call('POST', `/account/${accountId}/deposit`, { user: alice, body: { currency: 'USD', ...body } });
  const requestOf = async (id: string) => {
    const calls = await eventually(
      async () => provider.paymentsOf(id),
      (made) => made.length > 0,
    );
    return calls[0]?.call === 'createPayment' ? calls[0].request : null;
  };

  it('asks the provider to pay with it, and without one asks for a payment to confirm later', async () => {
    const paid = await deposit({ amount: 10, payment_method: 'pm_card_visa' });
    expect(paid.status, paid.text).to.equal(202);
    expect(await requestOf(paid.body.id)).to.include({ paymentMethod: 'pm_card_visa' });
    const plain = await deposit({ amount: 10 });
    expect(await requestOf(plain.body.id)).not.to.have.property('paymentMethod');
  });

  it('keeps a deposit whose card was declined pending, its payment recorded for another method', async () => {
    const accepted = await deposit({ amount: 10, payment_method: 'pm_card_chargeDeclined' });
    const id = accepted.body.id as string;
    const row = await eventually(
      () => ledger.db('provider_payments').where({ transaction_id: id }).first(),
      (found) => found?.state === 'created',
    );
    expect(row).to.include({ payment_method: 'pm_card_chargeDeclined', last_error: null });
    const shown = await ledger.call('GET', `/transaction/${id}`, { user: alice });
    // The reason comes with the provider's event; its answer alone changes nothing.
    expect(shown.body).to.include({ status: 'pending', failure_reason: null });
    expect(shown.body.provider_payment).to.include({ reference: row.reference });
    expect(await ledger.balanceOf(alice, accountId)).to.include({ balance: 0 });
  });

  it('refuses a payment_method of the wrong shape, on its own field, making nothing', async () => {
    for (const bad of ['visa', 'pm_', 'pm_card visa', 'pm_card\u0000', 7]) {
      const refused = await deposit({ amount: 10, payment_method: bad });
      expect(refused.status, refused.text).to.equal(400);
      expect(refused.body.code).to.equal('VALIDATION_ERROR');
      expect(refused.body.errors.map((e: { field: string }) => e.field)).to.include('payment_method');
    }
    expect(await ledger.db('transactions').where({ account_id: accountId })).to.deep.equal([]);
  });
});

describe('ledger: a deposit that names a payment method where no provider pays', function () {
  this.timeout(30_000);
  const ledger = useLedgerHarness({});

  it('refuses it with 422 BUSINESS_RULE_VIOLATION and makes nothing', async () => {
    const alice = ledger.newUser();
    const { id } = await ledger.openAccount(alice);
    const refused = await ledger.call('POST', `/account/${id}/deposit`, {
      user: alice,
      body: { amount: 10, currency: 'USD', payment_method: 'pm_card_visa' },
    });
    expect(refused.status, refused.text).to.equal(422);
    expect(refused.body.code).to.equal('BUSINESS_RULE_VIOLATION');
    expect(await ledger.db('transactions').where({ account_id: id })).to.deep.equal([]);
  });
});
