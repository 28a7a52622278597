import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { eventually, runPayments, auditOf, systemBalance, useSystem } from '@payments/testkit';
import {
  rawApi,
  type ApiResponse,
  providerEvent,
  signUpWithAccount,
  postProviderEvent,
  type Customer,
} from '@payments/test-support';
import { loadOpenApiValidator, type OpenApiValidator } from './openapi-validator.js';

interface TransactionBody {
  id: string;
  type: string;
  status: string;
  amount: number;
  fee?: number;
  payment_id: string | null;
  original_transaction_id?: string;
  reversal_reason?: string;
}

describe('reversals end to end: refunds and disputes through the gateway', function () {
  this.timeout(120_000);
  let openapi: OpenApiValidator;
  let configHome: string;

  const system = useSystem(
    {
      serviceEnv: {
        // A 1 % deposit fee: a reversal gives back its share of it.
        ledger: { FEE_DEPOSIT_PERCENT: '1' },
        // The test plays the payment provider.
        'provider-sandbox': { SANDBOX_ENABLED: 'false' },
      },
    },
    { admin: true, booksBalance: true },
  );
  const api = rawApi(system);

  before(async () => {
    openapi = await loadOpenApiValidator(system.gatewayUrl);
    configHome = await mkdtemp(path.join(tmpdir(), 'payments-cli-reversals-'));
  });

  after(async () => {
    if (configHome) await rm(configHome, { recursive: true, force: true });
  });

  const customer = () => signUpWithAccount(system.gatewayUrl);

  const deliver = (event: object) => postProviderEvent(api, event, system.webhookSecret);
  const expect200 = (response: ApiResponse) => expect(response.status, response.text).to.equal(200);

  /** A deposit of `amount` USD, completed by a signed payment_intent.succeeded. */
  const deposit = async (owner: Customer, amount: number) => {
    const { id } = await owner.client.money.deposit(owner.accountId, { amount, currency: 'USD' });
    expect200(await deliver(providerEvent('payment_intent.succeeded', id, Math.round(amount * 100))));
    await eventually(
      () => owner.client.transactions.get(id),
      (transaction) => transaction.status === 'completed',
    );
    return id;
  };

  const charge = (depositId: string, refundedMinor: number, refundId: string) => ({
    id: `evt_${randomUUID()}`,
    object: 'event',
    type: 'charge.refunded',
    data: {
      object: {
        id: `ch_${depositId}`,
        object: 'charge',
        amount: 10000,
        amount_refunded: refundedMinor,
        currency: 'usd',
        payment_intent: depositId,
        metadata: { transaction_id: depositId },
        refunds: { object: 'list', data: [{ id: refundId, object: 'refund' }], has_more: false },
      },
    },
  });
  const dispute = (
    type: 'created' | 'closed',
    depositId: string,
    disputeId: string,
    status: string,
    amount = 10000,
  ) => ({
    id: `evt_${randomUUID()}`,
    object: 'event',
    type: `charge.dispute.${type}`,
    data: {
      object: {
        id: disputeId,
        object: 'dispute',
        amount,
        currency: 'usd',
        status,
        charge: `ch_${depositId}`,
        payment_intent: depositId,
        metadata: { transaction_id: depositId },
      },
    },
  });

  const history = async (owner: Customer, query = '', version = '1.1') => {
    const response = await api.request('GET', `/transactions${query}`, {
      token: owner.token,
      headers: { 'x-api-version': version },
    });
    openapi.check('GET', '/transactions', response);
    return response;
  };
  const reversalsOf = async (owner: Customer): Promise<TransactionBody[]> =>
    (await history(owner, '?type=reversal&limit=100')).body.data;
  const balance = (owner: Customer) => owner.client.balances.get(owner.accountId);

  it('books a partial refund and then another, each once however often delivered, linked to the deposit', async () => {
    const owner = await customer();
    const revenueBefore = systemBalance(await auditOf(system.urls.ledger), 'fee_revenue', 'USD');
    const depositId = await deposit(owner, 100);
    expect(await balance(owner)).to.include({ balance: 99 });

    const first = charge(depositId, 3000, 're_first');
    const replies = await Promise.all(Array.from({ length: 5 }, () => deliver(first)));
    replies.forEach(expect200);
    // The same refund under another event id, as a second notification of it: still once.
    expect200(await deliver(charge(depositId, 3000, 're_first')));
    await eventually(
      () => reversalsOf(owner),
      (data) => data.length === 1,
    );
    expect200(await deliver(charge(depositId, 5000, 're_second')));
    const reversals = await eventually(
      () => reversalsOf(owner),
      (data) => data.length === 2,
    );
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(await reversalsOf(owner)).to.have.length(2);

    // Newest first: 20.00 (fee share 0.20), then 30.00 (fee share 0.30).
    expect(reversals.map((t) => [t.type, t.status, t.amount, t.fee, t.payment_id])).to.deep.equal([
      ['reversal', 'completed', 20, 0.2, 're_second'],
      ['reversal', 'completed', 30, 0.3, 're_first'],
    ]);
    for (const reversal of reversals) {
      expect(reversal).to.include({ original_transaction_id: depositId, reversal_reason: 'refund' });
      const shown = await api.get(`/transaction/${reversal.id}`, owner.token);
      openapi.check('GET', '/transaction/{id}', shown);
      expect(shown.body.original_transaction_id).to.equal(depositId);
    }
    const original = await api.get(`/transaction/${depositId}`, owner.token);
    openapi.check('GET', '/transaction/{id}', original);
    expect(original.body).to.include({ status: 'completed', amount: 100 });
    expect(original.body).not.to.have.property('original_transaction_id');

    const all = await history(owner, '', '1.0');
    expect(all.body.data.map((t: { type: string }) => t.type)).to.deep.equal([
      'reversal',
      'reversal',
      'deposit',
    ]);
    const perAccount = await api.get(`/account/${owner.accountId}/transactions`, owner.token);
    openapi.check('GET', '/account/{id}/transactions', perAccount);
    expect(perAccount.body.pagination.total).to.equal(3);
    // 99.00 credited; 49.50 taken back (50.00 less its 0.50 of the fee).
    expect(await balance(owner)).to.include({ balance: 49.5, available_balance: 49.5 });
    const revenue = systemBalance(await auditOf(system.urls.ledger), 'fee_revenue', 'USD') - revenueBefore;
    expect(revenue).to.equal(50n);

    // The CLI lists and shows them.
    const env = { PAYMENTS_API_URL: system.gatewayUrl, XDG_CONFIG_HOME: configHome };
    const login = await runPayments(
      ['login', '--username', owner.username, '--password', owner.password],
      env,
    );
    expect(login.code, login.stderr).to.equal(0);
    const listed = await runPayments(['transactions', '--type', 'reversal'], env);
    expect(listed.code, listed.stderr).to.equal(0);
    expect(listed.stdout).to.match(/reversal \(refund\)\s*│\s*completed\s*│\s*20\.00/);
    const shown = await runPayments(['transaction', (reversals[0] as TransactionBody).id], env);
    expect(shown.code, shown.stderr).to.equal(0);
    expect(shown.stdout).to.include(depositId);
    expect(shown.stdout).to.match(/Reverses/);
  });

  it('holds a disputed deposit while open, refuses spending the hold, and books the loss below zero', async () => {
    const owner = await customer();
    const other = await customer();
    const depositId = await deposit(owner, 100);
    const sent = await owner.client.money.transfer(owner.accountId, {
      amount: 60,
      currency: 'USD',
      to_account_id: other.accountId,
    });
    expect(sent.status).to.equal('pending');
    await eventually(
      () => balance(owner),
      (b) => b.balance === 39,
    );

    expect200(await deliver(dispute('created', depositId, 'dp_e2e_lost', 'needs_response')));
    await eventually(
      () => balance(owner),
      (b) => b.available_balance === 0,
    );
    const [open] = await reversalsOf(owner);
    expect(open).to.include({
      status: 'pending',
      reversal_reason: 'dispute',
      original_transaction_id: depositId,
    });
    // What is held cannot leave, even all at once.
    const attempts = await Promise.all([
      ...Array.from({ length: 5 }, () =>
        api.post(`/account/${owner.accountId}/withdraw`, { amount: 1, currency: 'USD' }, owner.token),
      ),
      ...Array.from({ length: 5 }, () =>
        api.post(
          `/account/${owner.accountId}/transfer`,
          { amount: 1, currency: 'USD', to_account_id: other.accountId },
          owner.token,
        ),
      ),
    ]);
    expect(attempts.map((a) => a.body?.code)).to.deep.equal(Array(10).fill('INSUFFICIENT_FUNDS'));

    expect200(await deliver(dispute('closed', depositId, 'dp_e2e_lost', 'lost')));
    await eventually(
      () => reversalsOf(owner),
      (data) => data[0]?.status === 'completed',
    );
    // 39.00 left, 99.00 taken back: 60.00 below zero.
    expect(await balance(owner)).to.include({ balance: -60, available_balance: -60 });

    const flagged = await api.get('/admin/overdrawn-accounts?limit=100', system.admin.token);
    openapi.check('GET', '/admin/overdrawn-accounts', flagged);
    expect(flagged.body.data.find((a: { id: string }) => a.id === owner.accountId)).to.include({
      overdrawn_by: 60,
      balance: -60,
    });
    const refused = await api.get('/admin/overdrawn-accounts', owner.token);
    openapi.check('GET', '/admin/overdrawn-accounts', refused);
    expect(refused.status).to.equal(403);
    const audit = (await auditOf(system.urls.ledger)) as unknown as {
      overdrawn_accounts: { account_id: string }[];
    };
    expect(audit.overdrawn_accounts.map((a) => a.account_id)).to.include(owner.accountId);

    const withdraw = await api.post(
      `/account/${owner.accountId}/withdraw`,
      { amount: 0.01, currency: 'USD' },
      owner.token,
    );
    openapi.check('POST', '/account/{id}/withdraw', withdraw);
    expect(withdraw.status).to.equal(422);
    const deletion = await api.request(
      'DELETE',
      `/user/${(await owner.client.accounts.listPage()).data[0]?.user_id}?confirm=true`,
      { token: owner.token },
    );
    expect(deletion.status, deletion.text).to.equal(422);
  });

  it("books a refund sent while an inquiry was open once the inquiry closes in the user's favour", async () => {
    // The attack: open a bank inquiry on one's own deposit, get the deposit refunded to settle it, and keep the
    // money when the inquiry closes as warning_closed (won).
    const owner = await customer();
    const depositId = await deposit(owner, 100);
    expect200(await deliver(dispute('created', depositId, 'dp_e2e_inquiry', 'warning_needs_response')));
    await eventually(
      () => balance(owner),
      (b) => b.available_balance === 0,
    );
    expect200(await deliver(charge(depositId, 10000, 're_e2e_during_inquiry')));
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect((await reversalsOf(owner)).map((t) => t.status)).to.deep.equal(['pending']);

    expect200(await deliver(dispute('closed', depositId, 'dp_e2e_inquiry', 'warning_closed')));
    const reversals = await eventually(
      () => reversalsOf(owner),
      (data) => data.length === 2,
    );
    expect(reversals.map((t) => [t.reversal_reason, t.status, t.amount])).to.have.deep.members([
      ['dispute', 'canceled', 100],
      ['refund', 'completed', 100],
    ]);
    expect(await balance(owner)).to.include({ balance: 0, available_balance: 0 });
  });

  it('takes a dispute closed (won) before it was seen opened as nothing to hold, then or later', async () => {
    const owner = await customer();
    const depositId = await deposit(owner, 50);
    expect200(await deliver(dispute('closed', depositId, 'dp_e2e_won', 'won', 5000)));
    await eventually(
      () => reversalsOf(owner),
      (data) => data.length === 1,
    );
    expect200(await deliver(dispute('created', depositId, 'dp_e2e_won', 'needs_response', 5000)));
    await new Promise((resolve) => setTimeout(resolve, 500));
    const [won] = await reversalsOf(owner);
    expect(won).to.include({ status: 'canceled', reversal_reason: 'dispute' });
    expect(await balance(owner)).to.include({ balance: 49.5, available_balance: 49.5 });
  });

  it('refunds a payment captured after its deposit was canceled, from the late payment it was credited as', async () => {
    const owner = await customer();
    const { id: depositId } = await owner.client.money.deposit(owner.accountId, {
      amount: 100,
      currency: 'USD',
    });
    expect200(
      await deliver(
        providerEvent('payment_intent.canceled', depositId, 10000, 'usd', { status: 'canceled' }),
      ),
    );
    await eventually(
      () => owner.client.transactions.get(depositId),
      (transaction) => transaction.status === 'canceled',
    );
    expect200(await deliver(providerEvent('payment_intent.succeeded', depositId, 10000)));
    await eventually(
      () => balance(owner),
      (found) => found.balance === 99,
    );
    expect200(await deliver(charge(depositId, 4000, 're_e2e_late')));
    const reversals = await eventually(
      () => reversalsOf(owner),
      (data) => data.some((t) => t.reversal_reason === 'refund'),
    );
    expect(reversals.find((t) => t.reversal_reason === 'refund')).to.include({
      status: 'completed',
      amount: 40,
      original_transaction_id: depositId,
    });
    // 100 credited less its 1 % fee, less 40 refunded with its share of the fee given back.
    expect(await balance(owner)).to.include({ balance: 59.4, available_balance: 59.4 });
  });
});
