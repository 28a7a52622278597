import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import type Stripe from 'stripe';
import { eventually, runPayments, useSystem } from '@payments/testkit';
import {
  rawApi,
  sandboxStripe,
  signUpWithAccount,
  type ApiResponse,
  type Customer,
} from '@payments/test-support';
import { loadOpenApiValidator, type OpenApiValidator } from './openapi-validator.js';

interface TransactionBody {
  id: string;
  type: string;
  status: string;
  amount: number;
  original_transaction_id?: string;
  reversal_reason?: string;
  refund_reason?: string | null;
  failure_reason: string | null;
}

/**
 * Refunds asked for through the API (POST /transaction/{id}/refund), through the real system: the ledger asks the
 * sandbox (Stripe's API) for a Refund on the deposit's PaymentIntent, and books it through the reversal path when
 * the answer or Stripe's events confirm it, whichever comes first.
 */
describe('refunds through the API, end to end with the provider sandbox', function () {
  this.timeout(120_000);
  let stripe: Stripe;
  let openapi: OpenApiValidator;
  let configHome: string;

  // Each deposit is paid here, with the test card the case needs.
  const system = useSystem(
    { serviceEnv: { 'provider-sandbox': { SANDBOX_AUTO_CONFIRM: 'false' } } },
    { admin: true, booksBalance: true },
  );
  const api = rawApi(system);

  before(async () => {
    stripe = sandboxStripe(system);
    openapi = await loadOpenApiValidator(system.gatewayUrl);
    configHome = await mkdtemp(path.join(tmpdir(), 'payments-cli-refunds-'));
  });

  after(async () => {
    if (configHome) await rm(configHome, { recursive: true, force: true });
  });

  const customer = () => signUpWithAccount(system.gatewayUrl);

  /** A deposit of `amount` USD paid at the sandbox with `card`, completed; resolves with it and its PaymentIntent. */
  const paidDeposit = async (owner: Customer, amount: number, card = 'pm_card_visa') => {
    const { id } = await owner.client.money.deposit(owner.accountId, { amount, currency: 'USD' });
    const shown = await eventually(
      () => owner.client.transactions.get(id),
      (t) => t.provider_payment?.client_secret !== undefined,
    );
    const intent = shown.provider_payment!.reference;
    await stripe.paymentIntents.confirm(intent, { payment_method: card });
    await eventually(
      () => owner.client.transactions.get(id),
      (t) => t.status === 'completed',
    );
    return { id, intent };
  };

  const refund = async (
    token: string,
    depositId: string,
    body: object = {},
    key: string = randomUUID(),
  ): Promise<ApiResponse> => {
    const response = await api.post(`/transaction/${depositId}/refund`, body, token, {
      'Idempotency-Key': key,
    });
    openapi.check('POST', '/transaction/{id}/refund', response);
    return response;
  };
  const expect202 = (response: ApiResponse) => expect(response.status, response.text).to.equal(202);
  const balance = (owner: Customer) => owner.client.balances.get(owner.accountId);
  const reversalsOf = async (owner: Customer): Promise<TransactionBody[]> =>
    (await owner.client.transactions.listPage({ type: 'reversal', limit: 100 })).data as TransactionBody[];
  const settledRefund = (owner: Customer, id: string) =>
    eventually(
      () => owner.client.transactions.get(id),
      (t) => t.status !== 'pending',
    );
  const providerRefunds = async (intent: string) =>
    (await stripe.refunds.list({ payment_intent: intent, limit: 100 })).data;
  /** Long enough for every event the sandbox sends about a refund to have been booked, if it booked anything. */
  const settle = () => new Promise((resolve) => setTimeout(resolve, 1_500));

  it('refunds in part, then the rest, each booked once through the reversal path, as Stripe Refunds', async () => {
    const owner = await customer();
    const { id, intent } = await paidDeposit(owner, 100);

    const partial = await refund(owner.token, id, { amount: 30, reason: 'requested_by_customer' });
    expect202(partial);
    expect(partial.headers.get('location')).to.equal(`/transaction/${partial.body.id}`);
    expect(partial.body).to.include({
      type: 'reversal',
      reversal_reason: 'refund',
      original_transaction_id: id,
      amount: 30,
      refund_reason: 'requested_by_customer',
    });
    expect(await settledRefund(owner, partial.body.id)).to.include({
      status: 'completed',
      refund_reason: 'requested_by_customer',
    });
    const rest = await refund(owner.token, id);
    expect202(rest);
    expect(rest.body).to.include({ amount: 70, refund_reason: null });
    expect(await settledRefund(owner, rest.body.id)).to.include({ status: 'completed', refund_reason: null });
    await settle();

    expect(await balance(owner)).to.include({ balance: 0, available_balance: 0 });
    const reversals = await reversalsOf(owner);
    expect(reversals.map((t) => [t.id, t.status, t.amount, t.refund_reason])).to.have.deep.members([
      [partial.body.id, 'completed', 30, 'requested_by_customer'],
      [rest.body.id, 'completed', 70, null],
    ]);
    // Only a refund carries a refund reason: the deposit it reverses does not.
    const deposit = await api.get(`/transaction/${id}`, owner.token);
    openapi.check('GET', '/transaction/{id}', deposit);
    expect(deposit.body).to.not.have.property('refund_reason');
    const shown = await api.get(`/transaction/${partial.body.id}`, owner.token);
    openapi.check('GET', '/transaction/{id}', shown);
    expect(shown.body).to.include({ refund_reason: 'requested_by_customer' });
    const atProvider = await providerRefunds(intent);
    expect(atProvider.map((r) => [r.amount, r.reason, r.metadata?.refund_id])).to.have.deep.members([
      [3000, 'requested_by_customer', partial.body.id],
      [7000, null, rest.body.id],
    ]);

    // Nothing is left: a third refund is refused, and asks the provider for nothing.
    const none = await refund(owner.token, id);
    expect(none.status).to.equal(422);
    expect(none.body.code).to.equal('BUSINESS_RULE_VIOLATION');
    expect(await providerRefunds(intent)).to.have.length(2);
  });

  it('refuses more than is left, bad input, and what is not a completed card deposit, holding nothing', async () => {
    const owner = await customer();
    const { id, intent } = await paidDeposit(owner, 20);

    const over = await refund(owner.token, id, { amount: 25 });
    expect(over.status).to.equal(422);
    expect(over.headers.get('content-type')).to.match(/^application\/problem\+json/);
    expect(over.body).to.include({ code: 'BUSINESS_RULE_VIOLATION' });
    expect(over.body.detail).to.match(/At most 20\.00 USD/);
    for (const [body, status, code] of [
      [{ amount: -5 }, 422, 'INVALID_AMOUNT'],
      [{ amount: '1.001' }, 422, 'INVALID_AMOUNT'],
      [{ reason: 'changed_my_mind' }, 400, 'VALIDATION_ERROR'],
      [{ amount: 5, extra: true }, 400, 'VALIDATION_ERROR'],
    ] as const) {
      const refused = await refund(owner.token, id, body);
      expect(refused.status, JSON.stringify(body)).to.equal(status);
      expect(refused.body.code).to.equal(code);
      expect(refused.text).not.to.match(/select|insert|at .*\.ts/i);
    }
    const pending = await owner.client.money.deposit(owner.accountId, { amount: 5, currency: 'USD' });
    const notYet = await refund(owner.token, pending.id);
    expect(notYet.status).to.equal(422);
    expect(notYet.body.detail).to.match(/completed deposit/);
    expect((await refund(owner.token, randomUUID())).status).to.equal(404);

    expect(await balance(owner)).to.include({ balance: 20, available_balance: 20 });
    expect(await reversalsOf(owner)).to.have.length(0);
    expect(await providerRefunds(intent)).to.have.length(0);
  });

  it('never lets concurrent refunds add up to more than the deposit captured', async () => {
    const owner = await customer();
    const { id, intent } = await paidDeposit(owner, 100);
    const answers = await Promise.all(
      Array.from({ length: 6 }, () => refund(owner.token, id, { amount: 30 })),
    );
    const accepted = answers.filter((r) => r.status === 202);
    const refused = answers.filter((r) => r.status === 422);
    expect(accepted).to.have.length(3);
    expect(refused).to.have.length(3);
    for (const r of refused) expect(r.body.code).to.equal('BUSINESS_RULE_VIOLATION');
    for (const r of accepted) await settledRefund(owner, r.body.id);
    await settle();
    expect(await balance(owner)).to.include({ balance: 10, available_balance: 10 });
    const atProvider = await providerRefunds(intent);
    expect(atProvider.reduce((sum, r) => sum + r.amount, 0)).to.equal(9000);
    expect((await reversalsOf(owner)).filter((t) => t.status === 'completed')).to.have.length(3);
  });

  it("refuses an owner whose balance does not cover the refund (422), holding nothing, and another user's (404)", async () => {
    const owner = await customer();
    const other = await customer();
    const { id, intent } = await paidDeposit(owner, 50);
    await owner.client.money.transfer(owner.accountId, {
      to_account_id: other.accountId,
      amount: 45,
      currency: 'USD',
    });
    await eventually(
      () => balance(owner),
      (b) => b.balance === 5,
    );

    const poor = await refund(owner.token, id, { amount: 10 });
    expect(poor.status).to.equal(422);
    expect(poor.body.code).to.equal('INSUFFICIENT_FUNDS');
    expect(await balance(owner)).to.include({ balance: 5, available_balance: 5 });

    const stolen = await refund(other.token, id, { amount: 5 });
    expect(stolen.status).to.equal(404);
    expect(stolen.body.code).to.equal('RESOURCE_NOT_FOUND');
    // Nor can the other user refund into their own balance what they were sent.
    expect(await balance(other)).to.include({ balance: 45, available_balance: 45 });
    expect(await reversalsOf(owner)).to.have.length(0);
    expect(await providerRefunds(intent)).to.have.length(0);

    // What the balance covers is refunded.
    const covered = await refund(owner.token, id, { amount: 5 });
    expect202(covered);
    expect(await settledRefund(owner, covered.body.id)).to.include({ status: 'completed' });
    expect(await balance(owner)).to.include({ balance: 0, available_balance: 0 });
  });

  it("lets an admin refund a user's deposit, on the record in the admin trail", async () => {
    const owner = await customer();
    const { id, intent } = await paidDeposit(owner, 40);
    const answer = await refund(system.admin.token, id, { amount: 15, reason: 'fraudulent' });
    expect202(answer);
    expect(await settledRefund(owner, answer.body.id)).to.include({ status: 'completed', amount: 15 });
    expect(await balance(owner)).to.include({ balance: 25 });
    const [atProvider] = await providerRefunds(intent);
    expect(atProvider).to.include({ amount: 1500, reason: 'fraudulent' });

    const trail = await api.get(`/admin/actions?owner=${owner.userId}&limit=100`, system.admin.token);
    expect(trail.status, trail.text).to.equal(200);
    const entries = trail.body.data as { actor: string; action: string; subject: string; reason: string }[];
    expect(entries.find((e) => e.action === 'transaction.refund')).to.include({
      actor: system.admin.id,
      subject: `transaction:${id}`,
      reason: 'fraudulent',
    });
    // An owner's own refund is no admin action.
    await refund(owner.token, id, { amount: 1 });
    const after = await api.get(`/admin/actions?owner=${owner.userId}&limit=100`, system.admin.token);
    expect(
      after.body.data.filter((e: { action: string }) => e.action === 'transaction.refund'),
    ).to.have.length(1);
  });

  it('holds the amount while the provider works on the refund, and releases it when the refund fails', async () => {
    const owner = await customer();
    const { id, intent } = await paidDeposit(owner, 60, 'pm_card_refundFail');
    const answer = await refund(owner.token, id, { amount: 40 });
    expect202(answer);
    expect(answer.body.status).to.equal('pending');
    expect(await balance(owner)).to.include({ balance: 60, available_balance: 20 });

    const failed = await settledRefund(owner, answer.body.id);
    expect(failed.status).to.equal('failed');
    expect(failed.failure_reason).to.match(/could not refund/);
    await settle();
    expect(await balance(owner)).to.include({ balance: 60, available_balance: 60 });
    const [atProvider] = await providerRefunds(intent);
    expect(atProvider).to.include({ status: 'failed', amount: 4000 });
    // What failed is refundable again.
    const again = await refund(owner.token, id);
    expect202(again);
    expect(again.body.amount).to.equal(60);
  });

  it('books a refund once when the answer and the provider’s events race (pending, then confirmed by event)', async () => {
    const owner = await customer();
    const paid = await Promise.all([paidDeposit(owner, 30), paidDeposit(owner, 30, 'pm_card_pendingRefund')]);
    const answers = await Promise.all(paid.map(({ id }) => refund(owner.token, id, { amount: 10 })));
    answers.forEach(expect202);
    // The visa refund is succeeded in the answer and in its events at once; the pending one only in a later event.
    for (const answer of answers) {
      expect(await settledRefund(owner, answer.body.id)).to.include({ status: 'completed' });
    }
    await settle();
    expect(await balance(owner)).to.include({ balance: 40, available_balance: 40 });
    const reversals = await reversalsOf(owner);
    expect(reversals.map((t) => [t.status, t.amount])).to.deep.equal([
      ['completed', 10],
      ['completed', 10],
    ]);
  });

  it('replays a refund retried with its Idempotency-Key, and refuses the key with another body (409)', async () => {
    const owner = await customer();
    const { id, intent } = await paidDeposit(owner, 50);
    const key = randomUUID();
    const first = await refund(owner.token, id, { amount: 20 }, key);
    expect202(first);
    const replays = await Promise.all([
      refund(owner.token, id, { amount: 20 }, key),
      refund(owner.token, id, { amount: 20 }, key),
    ]);
    for (const replay of replays) {
      expect202(replay);
      expect(replay.headers.get('idempotent-replayed')).to.equal('true');
      expect(replay.body.id).to.equal(first.body.id);
    }
    const conflict = await refund(owner.token, id, { amount: 25 }, key);
    expect(conflict.status).to.equal(409);
    expect(conflict.body.code).to.equal('CONFLICT');
    await settledRefund(owner, first.body.id);
    await settle();
    expect(await providerRefunds(intent)).to.have.length(1);
    expect(await balance(owner)).to.include({ balance: 30 });
  });

  it('refunds from the CLI: payments refund TRANSACTION [AMOUNT] --reason, waiting for the provider', async () => {
    const owner = await customer();
    const { id, intent } = await paidDeposit(owner, 30);
    const env = { PAYMENTS_API_URL: system.gatewayUrl, XDG_CONFIG_HOME: configHome };
    const login = await runPayments(
      ['login', '--username', owner.username, '--password', owner.password],
      env,
    );
    expect(login.code, login.stderr).to.equal(0);

    const partial = await runPayments(['refund', id, '12.50', '--reason', 'duplicate'], env);
    expect(partial.code, partial.stderr).to.equal(0);
    expect(partial.stdout).to.match(
      new RegExp(`Refunded 12\\.50 USD of deposit ${id}: refund \\S+ completed`),
    );
    const over = await runPayments(['refund', id, '50'], env);
    expect(over.code).to.equal(5);
    expect(over.stderr).to.match(/At most 17\.50 USD/);
    const badReason = await runPayments(['refund', id, '--reason', 'because'], env);
    expect(badReason.code).to.equal(2);
    const rest = await runPayments(['refund', id, '--json'], env);
    expect(rest.code, rest.stderr).to.equal(0);
    expect(JSON.parse(rest.stdout).transaction).to.include({ status: 'completed', amount: 17.5 });

    expect(await balance(owner)).to.include({ balance: 0 });
    const atProvider = await providerRefunds(intent);
    expect(atProvider.map((r) => [r.amount, r.reason])).to.have.deep.members([
      [1250, 'duplicate'],
      [1750, null],
    ]);
  });
});
