import { expect } from 'chai';
import { useSystem } from '@payments/testkit';
import { createPaymentsClient, type PaymentsClient } from '@payments/client';
import { depositConfirmed, rawApi, signUp, type ApiResponse } from '@payments/test-support';
import { loadOpenApiValidator, type OpenApiValidator } from './openapi-validator.js';
import { sleep } from './support/concurrency.js';

interface StatementBody {
  opening_balance: number;
  closing_balance: number;
  entries: { id: string; type: string | null; amount: number; balance: number; created_at: string }[];
  has_more: boolean;
}

const cents = (value: number | string) => Math.round(Number(value) * 100);

/** opening + each amount = its running balance; the last (or the opening) is the closing balance. */
function expectConsistent(body: StatementBody) {
  let balance = cents(body.opening_balance);
  for (const line of body.entries) {
    balance += cents(line.amount);
    expect(cents(line.balance)).to.equal(balance);
  }
  expect(cents(body.closing_balance)).to.equal(balance);
}

describe('statements and past balances through the gateway', function () {
  this.timeout(120_000);
  let openapi: OpenApiValidator;

  /** Every answer is checked against the OpenAPI document the gateway serves. */
  const get = async (path: string, token?: string) => {
    const response = await api.get(path, token);
    openapi.check('GET', path, response);
    return response;
  };

  const system = useSystem(
    {
      serviceEnv: {
        'provider-sandbox': { SANDBOX_ENABLED: 'false' },
        'webhook-ingest': { UNSIGNED_WEBHOOK_ENABLED: 'true' },
        ledger: { FEE_TRANSFER_FIXED: '0.10', FEE_TRANSFER_PERCENT: '0' },
      },
    },
    { admin: true, booksBalance: true },
  );
  const api = rawApi(system);

  before(async () => {
    openapi = await loadOpenApiValidator(system.gatewayUrl);
  });

  const openAccount = async (client: PaymentsClient<'1.1'>) =>
    (await client.accounts.open({ currency: 'USD' })).id;

  const transfer = async (client: PaymentsClient<'1.1'>, from: string, to: string, amount: number) =>
    (await client.money.transfer(from, { to_account_id: to, amount, currency: 'USD' })).id;

  it('states deposits and transfers with a running balance, in both versions, matching past balances', async () => {
    const { token, client } = await signUp(system.gatewayUrl);
    const main = await openAccount(client);
    const savings = await openAccount(client);
    await depositConfirmed(client, main, '250.00', 'USD');
    await sleep(20);
    const between = new Date().toISOString();
    await sleep(20);
    const moved = await transfer(client, main, savings, 100);
    await expectSettled(client, moved);

    const v11 = await get(`/v1.1/account/${main}/statement?from=2020-01-01T00:00:00Z`, token);
    expect(v11.status, v11.text).to.equal(200);
    expect(
      v11.body.entries.map((e: StatementBody['entries'][number]) => [e.type, e.amount, e.balance]),
    ).to.deep.equal([
      ['deposit', 250, 250],
      ['transfer', -100.1, 149.9],
    ]);
    expect(v11.body).to.include({
      opening_balance: 0,
      closing_balance: 149.9,
      currency: 'USD',
      account_id: main,
    });
    expect(v11.headers.get('x-api-version')).to.equal('1.1');
    const v10 = await get(`/account/${main}/statement?from=2020-01-01T00:00:00Z`, token);
    expect(v10.body).to.deep.equal({ ...v11.body, to: v10.body.to });
    expectConsistent(v10.body);

    const balance = await get(`/account/${main}/balance`, token);
    expect(balance.body.balance).to.equal(v11.body.closing_balance);
    const atBetween = await get(`/v1.1/account/${main}/balance?at=${encodeURIComponent(between)}`, token);
    expect(atBetween.status, atBetween.text).to.equal(200);
    expect(atBetween.body).to.deep.equal({ account_id: main, balance: 250, currency: 'USD', at: between });
    const fromBetween = await get(`/account/${main}/statement?from=${encodeURIComponent(between)}`, token);
    expect(fromBetween.body.opening_balance).to.equal(250);
    expect(fromBetween.body.entries).to.have.length(1);

    const received = await get(`/account/${savings}/statement`, token);
    expect(received.body.entries).to.have.length(1);
    expect(received.body.entries[0]).to.include({
      type: 'transfer',
      amount: 100,
      balance: 100,
      counterparty_account_id: main,
    });
  });

  it('pages a CSV statement through the versioned path by following its Link header', async () => {
    const { token, client } = await signUp(system.gatewayUrl);
    const account = await openAccount(client);
    for (const amount of ['1.10', '2.20', '3.30']) await depositConfirmed(client, account, amount, 'USD');

    const rows: string[] = [];
    let path = `/v1.1/account/${account}/statement?format=csv&limit=2&from=2020-01-01T00:00:00Z`;
    for (let pages = 1; ; pages += 1) {
      const page = await get(path, token);
      expect(page.status, page.text).to.equal(200);
      expect(page.headers.get('content-type')).to.equal('text/csv; charset=utf-8');
      const lines = page.text.split('\r\n').filter(Boolean);
      expect(lines[0]).to.equal(
        'created_at,entry_id,transaction_id,type,counterparty_account_id,amount,balance,currency,reference,metadata',
      );
      rows.push(...lines.slice(1));
      const next = /^<([^>]+)>; rel="next"$/.exec(page.headers.get('link') ?? '');
      if (!next) {
        expect(pages).to.equal(2);
        break;
      }
      // A relative reference: it keeps the /v1.1 prefix the client used.
      const resolved = new URL(next[1] as string, `${system.gatewayUrl}${path}`);
      expect(resolved.pathname).to.equal(`/v1.1/account/${account}/statement`);
      path = `${resolved.pathname}${resolved.search}`;
    }
    expect(rows.map((row) => row.split(',').filter((_, i) => [3, 5, 6].includes(i)))).to.deep.equal([
      ['opening_balance', '', '0.00'],
      ['deposit', '1.10', '1.10'],
      ['deposit', '2.20', '3.30'],
      ['deposit', '3.30', '6.60'],
      ['closing_balance', '', '6.60'],
    ]);
  });

  it('refuses another user’s statement and past balance as it refuses their balance; an admin may read them', async () => {
    const owner = await signUp(system.gatewayUrl);
    const account = await openAccount(owner.client);
    await depositConfirmed(owner.client, account, '77.77', 'USD');
    const mallory = await signUp(system.gatewayUrl);
    const paths = [
      `/account/${account}/balance`,
      `/v1.1/account/${account}/balance?at=2030-01-01T00:00:00Z`,
      `/v1.1/account/${account}/statement`,
      `/account/${account}/statement?format=csv&from=2000-01-01T00:00:00Z&limit=1000`,
    ];
    for (const path of paths) {
      const refused = await get(path, mallory.token);
      expect(refused.status, path).to.equal(403);
      expect(refused.body.code, path).to.equal('ACCESS_DENIED');
      expect(refused.text, path).to.not.include('77.77');
      expect((await get(path)).status, path).to.equal(401);
    }
    const admin = await createPaymentsClient({ baseUrl: system.gatewayUrl }).auth.login({
      username: system.admin.username,
      password: system.admin.password,
    });
    const read = await get(`/account/${account}/statement`, admin.token);
    expect(read.status, read.text).to.equal(200);
    expect(read.body.closing_balance).to.equal(77.77);
  });

  it('keeps every statement consistent while transfers between the accounts run', async () => {
    const { token, client } = await signUp(system.gatewayUrl);
    const a = await openAccount(client);
    const b = await openAccount(client);
    await depositConfirmed(client, a, '500.00', 'USD');
    await depositConfirmed(client, b, '500.00', 'USD');

    let running = true;
    const traffic = (async () => {
      const sent: ApiResponse[] = [];
      for (let round = 0; round < 15; round += 1) {
        sent.push(
          ...(await Promise.all(
            [a, b, a, b].map((from) =>
              api.post(
                `/account/${from}/transfer`,
                { to_account_id: from === a ? b : a, amount: 1 + (round % 5), currency: 'USD' },
                token,
              ),
            ),
          )),
        );
      }
      running = false;
      return sent;
    })();
    let taken = 0;
    while (running || taken < 3) {
      const [ofA, ofB] = await Promise.all([
        get(`/account/${a}/statement?from=2020-01-01T00:00:00Z&limit=1000`, token),
        get(`/v1.1/account/${b}/statement?limit=1000`, token),
      ]);
      expectConsistent(ofA.body);
      expectConsistent(ofB.body);
      taken += 1;
    }
    const sent = await traffic;
    expect(
      sent.every((r) => r.status === 202 || r.status === 422),
      sent.map((r) => r.status).join(),
    ).to.equal(true);
    for (const r of sent.filter((s) => s.status === 202)) await expectSettled(client, r.body.id);
    const [ofA, ofB] = await Promise.all([
      get(`/account/${a}/statement?from=2020-01-01T00:00:00Z&limit=1000`, token),
      get(`/account/${b}/statement?from=2020-01-01T00:00:00Z&limit=1000`, token),
    ]);
    expectConsistent(ofA.body);
    expectConsistent(ofB.body);
    const fees = sent.filter((r) => r.status === 202).length * 0.1;
    expect(cents(ofA.body.closing_balance + ofB.body.closing_balance)).to.equal(cents(1000 - fees));
  });

  async function expectSettled(client: PaymentsClient<'1.1'>, transactionId: string) {
    const settled = await client.transactions.waitUntilSettled(transactionId, {
      intervalMs: 50,
      waitMs: 10_000,
    });
    expect(settled.status, `transaction ${transactionId}`).to.equal('completed');
  }
});
