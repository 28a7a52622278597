import { expect } from 'chai';
import type Stripe from 'stripe';
import { eventually, auditOf, systemBalance, useSystem } from '@payments/testkit';
import { rawApi, signUp, sandboxStripe } from '@payments/test-support';

interface CaseView {
  id: string;
  kind: string;
  status: string;
  provider_reference: string;
  transaction_id: string | null;
  provider_amount: number;
  ledger_amount: number;
}

/**
 * The second-PaymentIntent attack, through the whole system with the sandbox playing Stripe: a second PaymentIntent created
 * at the provider with a deposit's id in its metadata, and paid, while the one the ledger asked for is not.
 */
describe('a provider object moves money only for the transaction that asked for it (the sandbox plays Stripe)', function () {
  this.timeout(120_000);
  let stripe: Stripe;

  const system = useSystem(
    {
      serviceEnv: {
        'provider-sandbox': { SANDBOX_AUTO_CONFIRM: 'false' },
        ledger: { RECONCILIATION_INTERVAL_SECONDS: '0', RECONCILIATION_GRACE_SECONDS: '0' },
      },
    },
    { admin: true, booksBalance: true },
  );
  const api = rawApi(system);

  before(async () => {
    stripe = sandboxStripe(system);
  });

  const cases = async (status = 'open') => {
    const listed = await api.get('/admin/reconciliation?limit=100', system.admin.token);
    expect(listed.status, listed.text).to.equal(200);
    return (listed.body.data as CaseView[]).filter((found) => found.status === status);
  };
  /** What the sandbox holds for the platform, against what the ledger's provider-clearing account says it holds. */
  const providerBooks = async () => {
    const held = (await stripe.balance.retrieve()).available.find((b) => b.currency === 'usd')?.amount ?? 0;
    const clearing = -systemBalance(await auditOf(system.urls.ledger), 'provider_clearing', 'USD');
    return { held: BigInt(held), clearing };
  };

  it('credits nothing for a second PaymentIntent naming the deposit, finds the double capture, and refunds it', async () => {
    const before = await providerBooks();
    const { client } = await signUp(system.gatewayUrl);
    const account = (await client.accounts.open({ currency: 'USD' })).id;
    const deposit = await client.money.deposit(account, { amount: '10.00', currency: 'USD' });
    const asked = await eventually(
      () => client.transactions.get(deposit.id),
      (transaction) => transaction.provider_payment !== undefined,
    );
    const paymentIntent = asked.provider_payment?.reference as string;

    // pi_B: made at the provider by someone else, our deposit's id in its metadata, and paid.
    const foreign = await stripe.paymentIntents.create({
      amount: 1000,
      currency: 'usd',
      metadata: { transaction_id: deposit.id },
      payment_method: 'pm_card_visa',
      confirm: true,
    });
    expect(foreign.status).to.equal('succeeded');
    const opened = await eventually(
      () => cases(),
      (found) => found.some((c) => c.provider_reference === foreign.id),
    );
    expect(opened.find((c) => c.provider_reference === foreign.id)).to.include({
      kind: 'foreign_object',
      transaction_id: deposit.id,
      provider_amount: 10,
      ledger_amount: 0,
    });
    expect((await client.transactions.get(deposit.id)).status).to.equal('pending');
    expect(await client.balances.get(account)).to.include({ balance: 0 });

    // pi_A, the one the ledger asked for, completes the deposit: once, for its amount.
    await stripe.paymentIntents.confirm(paymentIntent, { payment_method: 'pm_card_visa' });
    await eventually(
      () => client.transactions.get(deposit.id),
      (transaction) => transaction.status === 'completed',
    );
    expect(await client.balances.get(account)).to.include({ balance: 10 });
    const captured = await providerBooks();
    expect(captured.held - before.held, 'the payer was charged twice').to.equal(2000n);
    expect(captured.clearing - before.clearing).to.equal(1000n);

    // Reconciliation sees the provider's whole picture of the deposit: a second capture.
    const ran = await api.post('/admin/reconciliation/runs', {}, system.admin.token);
    expect(ran.status, ran.text).to.equal(200);
    const found = (await cases()).filter((c) => c.transaction_id === deposit.id);
    expect(found).to.have.length(1);
    expect(found[0]).to.include({
      kind: 'duplicate_capture',
      provider_reference: foreign.id,
      provider_amount: 10,
      ledger_amount: 0,
    });
    const decided = await api.post(
      `/admin/reconciliation/cases/${found[0]?.id}/resolution`,
      { decision: 'refund', reason: 'the payer was charged twice for one deposit' },
      system.admin.token,
    );
    expect(decided.status, decided.text).to.equal(200);

    // Given back at the provider: the two agree again, and the user still has exactly their 10.00.
    const again = await api.post('/admin/reconciliation/runs', {}, system.admin.token);
    expect(again.status, again.text).to.equal(200);
    expect((await cases()).filter((c) => c.transaction_id === deposit.id)).to.have.length(0);
    expect(await client.balances.get(account)).to.include({ balance: 10 });
    const settled = await providerBooks();
    expect(settled.held - before.held).to.equal(1000n);
    expect(settled.clearing - before.clearing).to.equal(1000n);
    const trail = await api.get('/admin/actions?limit=100', system.admin.token);
    expect(
      (trail.body.data as { action: string; subject: string }[]).some(
        (entry) => entry.action === 'reconciliation.refund' && entry.subject.endsWith(found[0]?.id as string),
      ),
    ).to.equal(true);
  });
});
