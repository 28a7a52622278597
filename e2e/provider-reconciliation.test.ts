import { expect } from 'chai';
import type Stripe from 'stripe';
import { eventually, auditOf, systemBalance, useSystem } from '@payments/testkit';
import { rawApi, signUp, sandboxStripe } from '@payments/test-support';

interface Forgotten {
  id: string;
  type: string;
  object_id: string;
  transaction_id: string | null;
}

/**
 * The provider's notifications get lost (the sandbox "forgets" every money-moving event here) while its own
 * records stay right: reconciliation reads those records, finds each mismatch, and an admin's decision books it,
 * once; in the end the provider's books equal the ledger's provider-clearing account.
 */
describe("reconciliation with the provider's records, when its events are lost (the sandbox plays Stripe)", function () {
  this.timeout(120_000);
  let stripe: Stripe;

  const system = useSystem(
    {
      serviceEnv: {
        'provider-sandbox': {
          SANDBOX_AUTO_CONFIRM: 'false',
          SANDBOX_FORGET_EVENTS: '1',
          SANDBOX_FORGET_EVENT_TYPES: 'payment_intent.succeeded,charge.refunded,payout.paid',
        },
        ledger: { RECONCILIATION_INTERVAL_SECONDS: '0', RECONCILIATION_GRACE_SECONDS: '0' },
      },
    },
    { admin: true, booksBalance: true },
  );
  const api = rawApi(system);

  before(async () => {
    stripe = sandboxStripe(system);
  });

  const forgotten = async (): Promise<Forgotten[]> => {
    const answer = await rawApi(system.urls['provider-sandbox']).get(
      '/sandbox/forgotten-events',
      system.sandboxApiKey,
    );
    expect(answer.status).to.equal(200);
    return (answer.body as { data: Forgotten[] }).data;
  };
  const forgottenFor = (transactionId: string, type: string) =>
    eventually(forgotten, (events) =>
      events.some((e) => e.transaction_id === transactionId && e.type === type),
    );
  /** Runs reconciliation and answers the open case of a transaction (exactly one). */
  const caseOf = async (transactionId: string) => {
    const ran = await api.post('/admin/reconciliation/runs', {}, system.admin.token);
    expect(ran.status, ran.text).to.equal(200);
    const listed = await api.get('/admin/reconciliation?limit=100', system.admin.token);
    const cases = (listed.body.data as { kind: string; id: string; transaction_id: string }[]).filter(
      (item) => item.transaction_id === transactionId,
    );
    expect(cases, listed.text).to.have.length(1);
    return cases[0] as { kind: string; id: string } & Record<string, unknown>;
  };
  const book = async (caseId: string) => {
    const decided = await api.post(
      `/admin/reconciliation/cases/${caseId}/resolution`,
      { decision: 'book', reason: "as the provider's records say" },
      system.admin.token,
    );
    expect(decided.status, decided.text).to.equal(200);
  };

  it('finds each lost event in the records, and each decision books it once: a capture, a refund, a payout', async () => {
    const { client } = await signUp(system.gatewayUrl);
    const account = (await client.accounts.open({ currency: 'USD' })).id;
    const status = (id: string) => client.transactions.get(id);
    const balance = () => client.balances.get(account);

    // Paid at the provider; payment_intent.succeeded never arrives.
    const deposit = await client.money.deposit(account, { amount: 100, currency: 'USD' });
    expect(deposit.status).to.equal('pending');
    const depositId = deposit.id;
    const shown = await eventually(
      () => status(depositId),
      (transaction) => transaction.provider_payment !== undefined,
    );
    const reference = shown.provider_payment?.reference as string;
    await stripe.paymentIntents.confirm(reference, { payment_method: 'pm_card_visa' });
    await forgottenFor(depositId, 'payment_intent.succeeded');
    expect((await status(depositId)).status).to.equal('pending');
    const captured = await caseOf(depositId);
    expect(captured).to.include({ kind: 'captured_not_credited', provider_amount: 100, ledger_amount: 0 });
    await book(captured.id);
    expect((await status(depositId)).status).to.equal('completed');
    expect(await balance()).to.include({ balance: 100 });

    // Refunded in part at the provider; charge.refunded never arrives.
    await stripe.refunds.create({ payment_intent: reference, amount: 1_000 });
    await forgottenFor(depositId, 'charge.refunded');
    const refunded = await caseOf(depositId);
    expect(refunded).to.include({ kind: 'credited_not_captured', provider_amount: 90, ledger_amount: 100 });
    await book(refunded.id);
    expect(await balance()).to.include({ balance: 90 });

    // Paid out to the bank; payout.paid never arrives.
    await client.payoutAccount.link();
    const withdrawal = await client.money.withdraw(account, { amount: 30, currency: 'USD' });
    expect(withdrawal.status).to.equal('pending');
    const withdrawalId = withdrawal.id;
    await forgottenFor(withdrawalId, 'payout.paid');
    expect((await status(withdrawalId)).status).to.equal('pending');
    const paidOut = await caseOf(withdrawalId);
    expect(paidOut).to.include({ kind: 'paid_out_still_held', provider_amount: 30, ledger_amount: 0 });
    await book(paidOut.id);
    expect((await status(withdrawalId)).status).to.equal('completed');
    expect(await balance()).to.include({ balance: 60, available_balance: 60 });

    // Nothing more to find, every decision in the trail, and the provider's books equal the ledger's.
    const again = await api.post('/admin/reconciliation/runs', {}, system.admin.token);
    expect(again.body).to.include({ mismatches: 0 });
    const trail = await api.get('/admin/actions?limit=100', system.admin.token);
    const decided = new Set([captured.id, refunded.id, paidOut.id].map((id) => `reconciliation_case:${id}`));
    expect((trail.body.data as { subject: string }[]).filter((a) => decided.has(a.subject))).to.have.length(
      3,
    );
    const held = (await stripe.balance.retrieve()).available.find((b) => b.currency === 'usd')?.amount ?? 0;
    const clearing = -systemBalance(await auditOf(system.urls.ledger), 'provider_clearing', 'USD');
    expect(BigInt(held)).to.equal(clearing);
  });
});
