import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import pg from 'pg';
import { eventually, useSystem } from '@payments/testkit';
import { rawApi, signUpWithAccount, type ApiResponse, type Customer } from '@payments/test-support';
import { loadOpenApiValidator, type OpenApiValidator } from './openapi-validator.js';

interface UserExposure {
  user_id: string;
  currency: string;
  exposure: number;
  deposits_in_window: number;
  balance: number;
}
interface Exposure {
  window_days: number;
  since: string;
  by_currency: { currency: string; exposure: number; exposed_users: number; deposits_in_window: number }[];
  data: UserExposure[];
  has_more: boolean;
}

/**
 * GET /admin/chargeback-exposure through the real system (ADR 0127): card deposits paid at the sandbox, money
 * withdrawn through it, a deposit moved out of the dispute window in the ledger's database, a refund through the API.
 */
describe('the chargeback exposure, end to end', function () {
  this.timeout(150_000);
  let openapi: OpenApiValidator;

  const system = useSystem(
    { serviceEnv: { 'provider-sandbox': { SANDBOX_DELAY_MS: '200' } } },
    { admin: true, booksBalance: true },
  );
  const api = rawApi(system);

  before(async () => {
    openapi = await loadOpenApiValidator(system.gatewayUrl);
  });

  const exposure = async (query = '', token = system.admin.token): Promise<ApiResponse> => {
    const response = await api.get(`/admin/chargeback-exposure${query}`, token);
    openapi.check('GET', '/admin/chargeback-exposure', response);
    return response;
  };
  const read = async (query = '') => {
    const response = await exposure(query);
    expect(response.status, response.text).to.equal(200);
    return response.body as Exposure;
  };
  const rowOf = (report: Exposure, who: Customer) => report.data.find((row) => row.user_id === who.userId);
  const completed = (who: Customer, id: string) =>
    eventually(
      () => who.client.transactions.get(id),
      (t) => t.status !== 'pending',
    );
  const cardDeposit = async (who: Customer, amount: number) => {
    const response = await api.post(
      `/account/${who.accountId}/deposit`,
      { amount, currency: 'USD', payment_method: 'pm_card_visa' },
      who.token,
    );
    expect(response.status, response.text).to.equal(202);
    expect((await completed(who, response.body.id as string)).status).to.equal('completed');
    return response.body.id as string;
  };
  const withdraw = async (who: Customer, amount: number) => {
    const { id } = await who.client.money.withdraw(who.accountId, { amount, currency: 'USD' });
    expect((await completed(who, id)).status).to.equal('completed');
  };

  let alice: Customer;
  let bob: Customer;
  let carol: Customer;
  let dave: Customer;

  before(async () => {
    const customer = () => signUpWithAccount(system.gatewayUrl);
    [alice, bob, carol, dave] = await Promise.all([customer(), customer(), customer(), customer()]);
  });

  it('shows a user who deposited by card and withdrew, and not one who kept the money', async () => {
    await cardDeposit(alice, 100);
    await withdraw(alice, 80);
    await cardDeposit(bob, 50);

    const report = await read();
    expect(report.window_days).to.equal(120);
    expect(rowOf(report, alice)).to.deep.equal({
      user_id: alice.userId,
      currency: 'USD',
      exposure: 80,
      deposits_in_window: 100,
      balance: 20,
    });
    expect(rowOf(report, bob)).to.equal(undefined);
    expect(report.by_currency).to.deep.equal([
      { currency: 'USD', exposure: 80, exposed_users: 1, deposits_in_window: 150 },
    ]);
  });

  it('leaves out a deposit older than the dispute window', async () => {
    const old = await cardDeposit(carol, 40);
    await withdraw(carol, 40);
    expect(rowOf(await read(), carol)?.exposure).to.equal(40);

    const db = new pg.Client({ connectionString: system.environment('ledger').DATABASE_URL });
    await db.connect();
    try {
      await db.query(
        `UPDATE transactions SET created_at = now() - interval '200 days', completed_at = now() - interval '200 days'
         WHERE id = $1`,
        [old],
      );
    } finally {
      await db.end();
    }
    expect(rowOf(await read(), carol)).to.equal(undefined);
  });

  it('counts a refunded deposit no more', async () => {
    await cardDeposit(dave, 50);
    const refunded = await cardDeposit(dave, 30);
    await withdraw(dave, 70);
    expect(rowOf(await read(), dave)).to.include({ exposure: 70, deposits_in_window: 80, balance: 10 });

    const refund = await api.post(`/transaction/${refunded}/refund`, { amount: 10 }, dave.token, {
      'Idempotency-Key': randomUUID(),
    });
    expect(refund.status, refund.text).to.equal(202);
    const after = await eventually(
      () => read(),
      (report) => rowOf(report, dave)?.deposits_in_window !== 80,
    );
    // 10 of the 30 refunded: D is 70, and the account holds nothing more to cover it.
    expect(rowOf(after, dave)).to.include({ exposure: 70, deposits_in_window: 70, balance: 0 });
  });

  it('ranks the largest first, bounded by limit, and filters by currency', async () => {
    const first = await read('?limit=1');
    expect(first.data.map((row) => row.user_id)).to.deep.equal([alice.userId]);
    expect(first.has_more).to.equal(true);
    expect((await read('?currency=EUR')).data).to.deep.equal([]);
  });

  it('refuses a user (403) and no token (401), and bad input (400 problem+json)', async () => {
    const refused = await exposure('', alice.token);
    expect(refused.status, refused.text).to.equal(403);
    expect(refused.body.code).to.equal('ACCESS_DENIED');
    expect(refused.text).to.not.include(alice.userId);
    expect((await api.get('/admin/chargeback-exposure')).status).to.equal(401);
    for (const query of ['?limit=0', '?limit=101', '?currency=usd', '?user=x']) {
      const bad = await exposure(query);
      expect(bad.status, query).to.equal(400);
      expect(bad.headers.get('content-type')).to.match(/^application\/problem\+json/);
      expect(bad.body.code, query).to.equal('VALIDATION_ERROR');
    }
  });
});
