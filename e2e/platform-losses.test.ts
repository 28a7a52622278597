import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import type Stripe from 'stripe';
import { eventually, auditOf, expectBooksBalance, systemBalance, useSystem } from '@payments/testkit';
import { createPaymentsClient, type PaymentsClient } from '@payments/client';
import {
  rawApi,
  nowSeconds,
  signUpWithAccount,
  postProviderEvent,
  type Customer,
  sandboxStripe,
} from '@payments/test-support';
import { loadOpenApiValidator, type OpenApiValidator } from './openapi-validator.js';

interface PlatformLoss {
  id: string;
  deposit_id: string;
  reason: 'refund' | 'dispute';
  currency: string;
  amount: number;
  fee: number;
  loss: number;
  provider_reference: string;
  booked_at: string;
}

interface Exposure {
  currency: string;
  overdrawn_accounts: number;
  overdrawn_total: number;
  losses: number;
  losses_total: number;
}

interface Report {
  data: { id: string; overdrawn_by: number }[];
  by_currency: Exposure[];
  platform_losses: PlatformLoss[];
}

/**
 * Money the provider takes back from a user who can no longer pay it, through the started system with the sandbox
 * playing Stripe: a user is paid out everything and deleted; then the platform refunds one of their deposits at the
 * sandbox and the cardholder wins a dispute of another. Nobody is left to owe it: each is booked once against the
 * platform loss account, shown to admins next to what live users owe, and the provider's books still equal the
 * ledger's.
 *
 * The sandbox raises a dispute only when a payment is made (Stripe's `pm_card_createDispute`), so here it never
 * sends its dispute events: the test delivers the opening itself once the user is gone (a late notification, as
 * Stripe's come weeks later), and the close is found by reconciliation and booked by an admin.
 */
describe("platform losses: a deleted user's deposit refunded or lost in a dispute at the provider", function () {
  this.timeout(180_000);
  let stripe: Stripe;
  let openapi: OpenApiValidator;
  let admin: PaymentsClient<'1.1'>;

  const system = useSystem(
    {
      serviceEnv: {
        // A 1 % deposit fee: what is taken back gives back its share of it.
        ledger: {
          FEE_DEPOSIT_PERCENT: '1',
          RECONCILIATION_INTERVAL_SECONDS: '0',
          RECONCILIATION_GRACE_SECONDS: '0',
        },
        'provider-sandbox': {
          SANDBOX_AUTO_CONFIRM: 'false',
          SANDBOX_DUPLICATE_DELIVERY: 'true',
          SANDBOX_FORGET_EVENTS: '1',
          SANDBOX_FORGET_EVENT_TYPES: 'charge.dispute.created,charge.dispute.closed',
        },
      },
    },
    { admin: true, booksBalance: true },
  );
  const api = rawApi(system);

  before(async () => {
    openapi = await loadOpenApiValidator(system.gatewayUrl);
    stripe = sandboxStripe(system);
    admin = createPaymentsClient({
      baseUrl: system.gatewayUrl,
      credentials: { username: system.admin.username, password: system.admin.password },
    });
  });

  const customer = () => signUpWithAccount(system.gatewayUrl, { payoutAccount: true });
  const settled = (who: Customer, id: string, status: string) =>
    eventually(
      () => who.client.transactions.get(id),
      (transaction) => transaction.status === status,
      { timeoutMs: 20_000 },
    );
  /** A deposit paid at the sandbox with Stripe's test payment method `method`; its id and PaymentIntent. */
  const paidDeposit = async (who: Customer, amount: number, method = 'pm_card_visa') => {
    const { id } = await who.client.money.deposit(who.accountId, { amount, currency: 'USD' });
    const shown = await eventually(
      () => who.client.transactions.get(id),
      (transaction) => transaction.provider_payment?.client_secret !== undefined,
    );
    const reference = (shown.provider_payment as { reference: string }).reference;
    await stripe.paymentIntents.confirm(reference, { payment_method: method });
    await settled(who, id, 'completed');
    return { id, reference };
  };
  const withdraw = async (who: Customer, amount: number) => {
    const { id } = await who.client.money.withdraw(who.accountId, { amount, currency: 'USD' });
    await settled(who, id, 'completed');
  };
  const report = async (): Promise<Report> => {
    const answer = await api.get('/admin/overdrawn-accounts?limit=100', system.admin.token);
    openapi.check('GET', '/admin/overdrawn-accounts', answer);
    expect(answer.status, answer.text).to.equal(200);
    return answer.body as Report;
  };
  const lossesOn = async (depositIds: string[]) =>
    (await report()).platform_losses.filter((loss) => depositIds.includes(loss.deposit_id));
  /** What the provider's books and the ledger say the platform holds at the provider, once they agree. */
  const providerAndLedger = () =>
    eventually(
      async () => {
        const held =
          (await stripe.balance.retrieve()).available.find((b) => b.currency === 'usd')?.amount ?? 0;
        const clearing = systemBalance(await auditOf(system.urls.ledger), 'provider_clearing', 'USD');
        return [BigInt(held), -clearing] as const;
      },
      ([atProvider, inLedger]) => atProvider === inLedger,
      { timeoutMs: 15_000 },
    );
  /** Posts a Stripe event about `object` to /webhook/provider, signed as the provider signs. */
  const deliver = async (type: string, object: unknown) => {
    const body = JSON.stringify({
      id: `evt_${randomUUID().replaceAll('-', '')}`,
      object: 'event',
      type,
      created: nowSeconds(),
      data: { object },
    });
    const answer = await postProviderEvent(api, body, system.webhookSecret);
    expect(answer.status, answer.text).to.equal(200);
  };

  it('books a refund and a lost dispute of a deleted user once each as platform losses, and the books still agree', async () => {
    const leaver = await customer();
    const refunded = await paidDeposit(leaver, 30);
    // The cardholder disputes this one at once; the ledger hears of it only after the user is gone.
    const disputed = await paidDeposit(leaver, 20, 'pm_card_createDispute');
    const [dispute] = (await stripe.disputes.list({ payment_intent: disputed.reference })).data;
    expect(dispute).to.include({ status: 'needs_response', amount: 2000 });
    // 30.00 and 20.00 less their 1 % fees: everything goes out, and the user leaves.
    await withdraw(leaver, 49.5);
    await leaver.client.users.delete(leaver.userId, { confirm: true });
    const gone = await api.get(`/v1.1/account/${leaver.accountId}`, system.admin.token);
    expect(gone.status).to.equal(404);

    // A live user who spent their deposit before its refund: their shortfall stays theirs, below zero.
    const stayer = await customer();
    const spent = await paidDeposit(stayer, 10);
    await withdraw(stayer, 9.9);

    const lossBefore = systemBalance(await auditOf(system.urls.ledger), 'platform_loss', 'USD');
    await stripe.refunds.create({ payment_intent: refunded.reference, amount: 1000 });
    await eventually(
      () => lossesOn([refunded.id]),
      (losses) => losses.length === 1,
    );
    await stripe.refunds.create({ payment_intent: refunded.reference });
    await stripe.refunds.create({ payment_intent: spent.reference });
    await deliver('charge.dispute.created', dispute);
    await eventually(
      () => lossesOn([refunded.id]),
      (losses) => losses.length === 2,
    );
    await eventually(
      () => stayer.client.balances.get(stayer.accountId),
      (balance) => balance.balance === -9.9,
    );
    // The opening held nothing and booked nothing: there is no account left to hold.
    expect(await lossesOn([disputed.id])).to.deep.equal([]);

    // The dispute is lost at the provider, and its event never arrives: reconciliation finds it.
    const closed = await stripe.disputes.close(dispute!.id);
    expect(closed.status).to.equal('lost');
    await admin.admin.reconciliation.run();
    const cases = await admin.admin.reconciliation.listPage({ limit: 100 });
    const found = cases.data.filter(
      (item) => item.kind !== 'unconfirmed_withdrawal' && item.transaction_id === disputed.id,
    );
    expect(found, JSON.stringify(cases.data)).to.have.length(1);
    expect(found[0]).to.include({ kind: 'credited_not_captured', provider_amount: 0, ledger_amount: 20 });
    const decided = await admin.admin.reconciliation.resolveCase(found[0]!.id, {
      decision: 'book',
      reason: "the cardholder won a dispute of a deleted user's deposit",
    });
    expect(decided).to.include({ status: 'resolved', decision: 'book' });
    // The close notified late, after the decision: nothing more is booked.
    await deliver('charge.dispute.closed', closed);

    await new Promise((resolve) => setTimeout(resolve, 1_000));
    const losses = await lossesOn([refunded.id, disputed.id]);
    expect(
      losses.map((loss) => [loss.deposit_id, loss.reason, loss.amount, loss.fee, loss.loss]),
    ).to.have.deep.members([
      [refunded.id, 'refund', 10, 0.1, 9.9],
      [refunded.id, 'refund', 20, 0.2, 19.8],
      [disputed.id, 'dispute', 20, 0.2, 19.8],
    ]);
    expect(losses.find((loss) => loss.reason === 'dispute')?.provider_reference).to.equal(dispute!.id);

    const shown = await report();
    expect(shown.data.map((account) => account.id)).to.include(stayer.accountId);
    expect(shown.by_currency).to.deep.include({
      currency: 'USD',
      overdrawn_accounts: 1,
      overdrawn_total: 9.9,
      losses: 3,
      losses_total: 49.5,
    });

    const audit = await expectBooksBalance(system.urls.ledger);
    expect(systemBalance(audit, 'platform_loss', 'USD') - lossBefore).to.equal(-4950n);
    expect(audit.platform_losses).to.deep.equal([
      { currency: 'USD', count: 3, amount: '5000', loss: '4950' },
    ]);
    expect(audit.misbooked_losses).to.deep.equal([]);
    const [atProvider, inLedger] = await providerAndLedger();
    expect(atProvider).to.equal(inLedger);
    // Reconciliation now finds the provider's records and the books in agreement.
    expect(await admin.admin.reconciliation.run()).to.include({ mismatches: 0 });
  });
});
