import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import type { ProcessSystem } from '@payments/infra';
import {
  eventually,
  findInfrastructure,
  tapEvents,
  type EventTap,
  expectBooksBalance,
  systemBalance,
  useSystem,
} from '@payments/testkit';
import type { PaymentsClient } from '@payments/client';
import { rawApi, signUp, type ApiResponse } from '@payments/test-support';
import { inPool, sleep } from './support/concurrency.js';
import { startCopy } from './support/system-copies.js';

const V1_1 = { 'x-api-version': '1.1' };
/** How long the provider sandbox waits before confirming a deposit or payout. */
const SANDBOX_DELAY_MS = 1000;
const IN_FLIGHT = 50;

interface Owner {
  token: string;
  accountId: string;
  client: PaymentsClient<'1.1'>;
}

describe('ledger end to end: money moves exactly, whatever the concurrency', function () {
  this.timeout(90_000);
  let tap: EventTap;

  const system = useSystem(
    {
      serviceEnv: {
        // Transfers cost 0.05 + 1 %; deposits and withdrawals are free, so their sums stay round.
        ledger: { FEE_TRANSFER_FIXED: '0.05', FEE_TRANSFER_PERCENT: '1' },
        'provider-sandbox': { SANDBOX_DELAY_MS: String(SANDBOX_DELAY_MS) },
      },
    },
    { booksBalance: true, beforeStop: () => tap?.close() },
  );
  const api = rawApi(system);

  before(async () => {
    // The tap binds to every routing key and publishes as it likes: the administrator, not a service's user.
    const { amqpUrl } = await findInfrastructure();
    tap = await tapEvents(amqpUrl, system.environment('ledger').AMQP_NAMESPACE as string);
  });

  const openAccount = async ({ client }: Pick<Owner, 'client'>, currency = 'USD') =>
    (await client.accounts.open({ currency })).id;

  /** A user with an account and a payout account linked, so that they may withdraw. */
  const newOwner = async (currency = 'USD'): Promise<Owner> => {
    const { token, client } = await signUp(system.gatewayUrl);
    await client.payoutAccount.link();
    return { token, client, accountId: await openAccount({ client }, currency) };
  };

  const balanceOf = async ({ client, accountId }: Owner) => client.balances.get(accountId);

  const settled = ({ client }: Owner, transactionId: string) =>
    eventually(
      () => client.transactions.get(transactionId),
      (transaction) => transaction.status !== 'pending',
      { timeoutMs: 20_000 },
    );

  /** A deposit the provider sandbox confirms; resolves once it is completed. */
  const fund = async (owner: Owner, amount: number | string, currency = 'USD') => {
    const accepted = await owner.client.money.deposit(owner.accountId, { amount, currency });
    const done = await settled(owner, accepted.id);
    expect(done.status, JSON.stringify(done)).to.equal('completed');
  };

  const expectProblem = (response: ApiResponse, status: number, code: string, field?: string) => {
    expect(response.status, response.text).to.equal(status);
    expect(response.headers.get('content-type')).to.match(/^application\/problem\+json/);
    expect(response.body.code, response.text).to.equal(code);
    if (field) {
      expect(
        (response.body.errors as { field: string }[]).map((e) => e.field),
        response.text,
      ).to.include(field);
    }
  };

  describe('validation', () => {
    let usd: Owner;
    let jpy: string;
    let kwd: string;

    before(async () => {
      usd = await newOwner();
      jpy = await openAccount(usd, 'JPY');
      kwd = await openAccount(usd, 'KWD');
      await fund(usd, 100);
    });

    const money = (operation: string, accountId: string, body: object) =>
      api.post(`/account/${accountId}/${operation}`, body, usd.token);

    it('refuses more decimals than the currency allows with 422 naming amount, per ISO 4217 exponent', async () => {
      const cases: [string, number | string, string][] = [
        [usd.accountId, 10.001, 'USD'],
        [usd.accountId, '0.005', 'USD'],
        [jpy, 10.5, 'JPY'],
        [jpy, '1.1', 'JPY'],
        [kwd, '1.0005', 'KWD'],
      ];
      for (const [accountId, amount, currency] of cases) {
        for (const operation of ['deposit', 'withdraw']) {
          expectProblem(
            await money(operation, accountId, { amount, currency }),
            422,
            'INVALID_AMOUNT',
            'amount',
          );
        }
      }
      // The exponent is the limit, not fewer: three decimals are fine in KWD, none in JPY.
      const kwdDeposit = await money('deposit', kwd, { amount: '1.005', currency: 'KWD' });
      expect(kwdDeposit.status, kwdDeposit.text).to.equal(202);
      expect(kwdDeposit.body.amount).to.equal(1.005);
      const jpyDeposit = await money('deposit', jpy, { amount: 1500, currency: 'JPY' });
      expect(jpyDeposit.status, jpyDeposit.text).to.equal(202);
      expect(jpyDeposit.body.amount).to.equal(1500);
    });

    it('refuses zero, negative, non-numeric and too large amounts with 422 naming amount', async () => {
      const other = await newOwner();
      const amounts = [0, '0.00', -5, '-0.01', 'NaN', 'ten', '1e3', 1_000_000.01, '99999999999'];
      for (const amount of amounts) {
        expectProblem(
          await money('deposit', usd.accountId, { amount, currency: 'USD' }),
          422,
          'INVALID_AMOUNT',
          'amount',
        );
        expectProblem(
          await money('withdraw', usd.accountId, { amount, currency: 'USD' }),
          422,
          'INVALID_AMOUNT',
          'amount',
        );
        expectProblem(
          await money('transfer', usd.accountId, { amount, currency: 'USD', to_account_id: other.accountId }),
          422,
          'INVALID_AMOUNT',
          'amount',
        );
      }
      // The maximum itself is allowed.
      expect((await money('deposit', usd.accountId, { amount: 1_000_000, currency: 'USD' })).status).to.equal(
        202,
      );
    });

    it('refuses a currency other than the account’s with 422 INVALID_CURRENCY', async () => {
      const other = await newOwner();
      for (const [operation, extra] of [
        ['deposit', {}],
        ['withdraw', {}],
        ['transfer', { to_account_id: other.accountId }],
      ] as const) {
        const response = await money(operation, usd.accountId, { amount: 1, currency: 'EUR', ...extra });
        expectProblem(response, 422, 'INVALID_CURRENCY');
      }
      expectProblem(await api.post('/account', { currency: 'XYZ' }, usd.token), 422, 'INVALID_CURRENCY');
    });

    it('answers a transfer to a malformed id 400, to an unknown account 404, to the same account 422', async () => {
      const transfer = (to: string) =>
        money('transfer', usd.accountId, { amount: 1, currency: 'USD', to_account_id: to });
      expectProblem(await transfer('not-a-uuid'), 400, 'VALIDATION_ERROR', 'to_account_id');
      expectProblem(await transfer(randomUUID()), 404, 'RESOURCE_NOT_FOUND');
      expectProblem(await transfer(usd.accountId), 422, 'BUSINESS_RULE_VIOLATION', 'to_account_id');
      const before = await balanceOf(usd);
      expect(before.available_balance).to.equal(before.balance);
    });

    it('answers invalid pagination, filters and date ranges 400', async () => {
      const paths = [
        '/accounts?limit=0',
        '/accounts?limit=101',
        '/accounts?limit=ten',
        '/accounts?offset=-1',
        '/transactions?limit=0',
        '/transactions?offset=x',
        '/transactions?from=2024-02-30',
        '/transactions?to=20240101',
        '/transactions?from=2024-05-02&to=2024-05-01',
        '/transactions?type=gift',
        '/transactions?status=done',
        '/transactions?account_id=nope',
        `/account/${usd.accountId}/transactions?limit=1000`,
        `/account/${usd.accountId}/transactions?from=yesterday`,
      ];
      for (const path of paths) expectProblem(await api.get(path, usd.token), 400, 'VALIDATION_ERROR');
      const valid = await api.get(
        `/account/${usd.accountId}/transactions?limit=1&offset=0&from=2020-01-01&to=2099-12-31`,
        usd.token,
      );
      expect(valid.status, valid.text).to.equal(200);
      expect(valid.body.data).to.have.length(1);
      expect(valid.body.pagination).to.include({ limit: 1, offset: 0 });
    });
  });

  it('refuses a withdrawal above the available balance with 422 and changes nothing', async () => {
    const owner = await newOwner();
    await fund(owner, 50);
    const history = () => owner.client.transactions.historyPage(owner.accountId);
    const before = { balance: await balanceOf(owner), total: (await history()).pagination.total };

    expectProblem(
      await api.post(`/account/${owner.accountId}/withdraw`, { amount: 50.01, currency: 'USD' }, owner.token),
      422,
      'INSUFFICIENT_FUNDS',
    );
    expect(await balanceOf(owner)).to.deep.equal(before.balance);
    expect((await history()).pagination.total).to.equal(before.total);

    // A pending withdrawal holds its funds: what is left available is the limit now.
    const held = await api.post(
      `/account/${owner.accountId}/withdraw`,
      { amount: 30, currency: 'USD' },
      owner.token,
    );
    expect(held.status, held.text).to.equal(202);
    expect(await balanceOf(owner)).to.include({ balance: 50, available_balance: 20 });
    expectProblem(
      await api.post(`/account/${owner.accountId}/withdraw`, { amount: 20.01, currency: 'USD' }, owner.token),
      422,
      'INSUFFICIENT_FUNDS',
    );
    expect((await history()).pagination.total).to.equal(before.total + 1);
    expect((await settled(owner, held.body.id)).status).to.equal('completed');
    expect(await balanceOf(owner)).to.include({ balance: 20, available_balance: 20 });
  });

  describe('a client of the contract alone, who never heard of payout accounts', () => {
    /** A fresh user with an account and a deposit the sandbox paid, and no payout account. */
    const specClient = async (amount: number): Promise<Owner> => {
      const { token, client } = await signUp(system.gatewayUrl);
      const owner = { token, client, accountId: await openAccount({ client }) };
      await fund(owner, amount);
      return owner;
    };
    const withdraw = (owner: Owner, amount: number) =>
      api.post(`/account/${owner.accountId}/withdraw`, { amount, currency: 'USD' }, owner.token);

    it('withdraws: 202, then completed once the sandbox paid it out to the payout account linked on the way', async () => {
      const owner = await specClient(100);
      const accepted = await withdraw(owner, 30);
      expect(accepted.status, accepted.text).to.equal(202);
      expect(accepted.headers.get('location')).to.equal(`/transaction/${accepted.body.id}`);
      expect(accepted.body).to.include({ type: 'withdrawal', status: 'pending', amount: 30 });
      expect((await settled(owner, accepted.body.id)).status).to.equal('completed');
      expect(await balanceOf(owner)).to.include({ balance: 70, available_balance: 70 });
      expect((await api.get('/payout-account', owner.token)).body.account).to.match(/^acct_/);
    });

    it('is refused 422 INSUFFICIENT_FUNDS over its balance, with nothing held, recorded or linked', async () => {
      const owner = await specClient(50);
      const history = () => owner.client.transactions.historyPage(owner.accountId);
      const before = (await history()).pagination.total;
      expectProblem(await withdraw(owner, 50.01), 422, 'INSUFFICIENT_FUNDS');
      expect(await balanceOf(owner)).to.include({ balance: 50, available_balance: 50 });
      expect((await history()).pagination.total).to.equal(before);
      expect((await api.get('/payout-account', owner.token)).status).to.equal(404);
    });

    it('withdraws five times at once while its payout account is linked, and is paid what its balance covers', async () => {
      const owner = await specClient(30);
      const answers = await Promise.all(Array.from({ length: 5 }, () => withdraw(owner, 10)));
      const accepted = answers.filter((a) => a.status === 202);
      expect(accepted).to.have.length(3);
      expect(answers.filter((a) => a.status === 422).map((a) => a.body.code)).to.deep.equal([
        'INSUFFICIENT_FUNDS',
        'INSUFFICIENT_FUNDS',
      ]);
      const outcomes = await Promise.all(accepted.map((a) => settled(owner, a.body.id)));
      expect(outcomes.map((o) => o.status)).to.deep.equal(['completed', 'completed', 'completed']);
      expect(await balanceOf(owner)).to.include({ balance: 0, available_balance: 0 });
      expect((await api.get('/payout-account', owner.token)).status).to.equal(200);
    });
  });

  it('accepts exactly 10 of 200 concurrent withdrawals of 10 against 100, and ends at 0 once paid out', async () => {
    const owner = await newOwner();
    await fund(owner, 100);
    const answers = await inPool(Array.from({ length: 200 }), IN_FLIGHT, () =>
      api.post(`/account/${owner.accountId}/withdraw`, { amount: 10, currency: 'USD' }, owner.token),
    );
    const accepted = answers.filter((a) => a.status === 202);
    const refused = answers.filter((a) => a.status === 422);
    expect(accepted).to.have.length(10);
    expect(refused).to.have.length(190);
    expect(new Set(refused.map((r) => r.body.code))).to.deep.equal(new Set(['INSUFFICIENT_FUNDS']));
    // All of it is held at once; the sandbox may already have paid some of it out.
    expect((await balanceOf(owner)).available_balance).to.equal(0);

    const outcomes = await Promise.all(accepted.map((a) => settled(owner, a.body.id)));
    expect(outcomes.map((o) => o.status)).to.deep.equal(Array(10).fill('completed'));
    expect(await balanceOf(owner)).to.include({ balance: 0, available_balance: 0 });
    const withdrawals = await owner.client.transactions.historyPage(owner.accountId, {
      type: 'withdrawal',
      limit: 100,
    });
    expect(withdrawals.pagination.total).to.equal(10);
  });

  describe('1,000 concurrent transfers among 10 accounts, two ledger processes consuming', () => {
    let secondLedger: ProcessSystem;
    const owners: Owner[] = [];
    const START_MINOR = 100_000; // 1,000.00 USD each

    before(async () => {
      secondLedger = await startCopy(system, 'ledger');
      for (let i = 0; i < 10; i += 1) owners.push(await newOwner());
      await Promise.all(owners.map((owner) => fund(owner, START_MINOR / 100)));
    });

    after(async () => {
      if (system.failures > 0 && secondLedger) console.error(secondLedger.logs());
      await secondLedger?.stop();
    });

    it('settles every accepted transfer exactly once, keeps the total and lets no balance go negative', async () => {
      expect(await tap.consumers('ledger.events')).to.equal(2);
      const expected = owners.map(() => BigInt(START_MINOR));
      const plan = Array.from({ length: 1000 }, () => {
        const from = Math.floor(Math.random() * 10);
        const to = (from + 1 + Math.floor(Math.random() * 9)) % 10;
        return { from, to, minor: 100 + Math.floor(Math.random() * 9900) };
      });
      const answers = await inPool(plan, IN_FLIGHT, ({ from, to, minor }) => {
        const source = owners[from] as Owner;
        return api.post(
          `/account/${source.accountId}/transfer`,
          { amount: minor / 100, currency: 'USD', to_account_id: (owners[to] as Owner).accountId },
          source.token,
          V1_1,
        );
      });

      const unexpected = answers.filter(
        (a) => a.status !== 202 && !(a.status === 422 && a.body?.code === 'INSUFFICIENT_FUNDS'),
      );
      expect(unexpected.map((a) => `${a.status} ${a.text}`)).to.deep.equal([]);
      const accepted: { id: string; from: number }[] = [];
      let fees = 0n;
      answers.forEach((answer, index) => {
        if (answer.status !== 202) return;
        const { from, to, minor } = plan[index] as (typeof plan)[number];
        const fee = BigInt(Math.round(answer.body.fee * 100));
        expected[from] = (expected[from] as bigint) - BigInt(minor) - fee;
        expected[to] = (expected[to] as bigint) + BigInt(minor);
        fees += fee;
        accepted.push({ id: answer.body.id, from });
      });
      expect(accepted.length).to.be.greaterThan(500);

      const minorBalances = async () =>
        Promise.all(owners.map(async (owner) => BigInt(Math.round((await balanceOf(owner)).balance * 100))));
      const finalBalances = await eventually(minorBalances, (b) => b.every((v, i) => v === expected[i]), {
        timeoutMs: 40_000,
        intervalMs: 250,
      });
      expect(finalBalances.map(String)).to.deep.equal(expected.map(String));
      for (const owner of owners) {
        const balance = await balanceOf(owner);
        expect(balance.balance).to.be.at.least(0);
        expect(balance.available_balance).to.equal(balance.balance);
      }
      // Money moved between users or into fee revenue; none appeared or vanished.
      const total = finalBalances.reduce((sum, b) => sum + b, 0n);
      expect(total + fees).to.equal(BigInt(START_MINOR * owners.length));

      const statuses = await inPool(
        accepted,
        IN_FLIGHT,
        async ({ id, from }) => (await (owners[from] as Owner).client.transactions.get(id)).status,
      );
      expect(new Set(statuses)).to.deep.equal(new Set(['completed']));
      const report = await expectBooksBalance(system.urls.ledger);
      expect(systemBalance(report, 'fee_revenue', 'USD') >= fees).to.equal(true);
    });
  });

  it('credits once when the same PaymentProcessed event is delivered five times at once', async () => {
    const owner = await newOwner();
    const accepted = await owner.client.money.deposit(owner.accountId, { amount: 42.42, currency: 'USD' });
    expect(accepted.status).to.equal('pending');
    const transactionId = accepted.id;
    // What webhook-ingest would publish, sent five times before the sandbox's own confirmation is due.
    const event = JSON.stringify({
      id: randomUUID(),
      type: 'PaymentProcessed',
      version: 1,
      occurred_at: new Date().toISOString(),
      correlation_id: `five-times-${transactionId}`,
      data: {
        transaction_id: transactionId,
        payment_id: transactionId,
        status: 'completed',
        source: 'provider',
        amount: 4242,
        currency: 'USD',
        movement: 'payment',
      },
    });
    await Promise.all(Array.from({ length: 5 }, () => tap.publishRaw('payment.processed', event)));
    expect((await settled(owner, transactionId)).status).to.equal('completed');
    // Let the duplicates and the sandbox's later confirmation arrive; none may credit again.
    await sleep(SANDBOX_DELAY_MS + 1000);
    expect(await balanceOf(owner)).to.include({ balance: 42.42, available_balance: 42.42 });
    const completions = tap.events.filter(
      (e) => e.type === 'TransactionCompleted' && e.data.transaction_id === transactionId,
    );
    expect(completions).to.have.length(1);
  });

  it('replays a repeated Idempotency-Key and refuses the same key with another body', async () => {
    const owner = await newOwner();
    const receiver = await newOwner();
    await fund(owner, 100);
    const key = randomUUID();
    const deposit = (amount: number) =>
      api.post(`/account/${owner.accountId}/deposit`, { amount, currency: 'USD' }, owner.token, {
        'idempotency-key': key,
      });
    const first = await deposit(12.5);
    expect(first.status, first.text).to.equal(202);
    expect(first.headers.get('idempotent-replayed')).to.equal(null);
    const again = await deposit(12.5);
    expect(again.status).to.equal(202);
    expect(again.headers.get('idempotent-replayed')).to.equal('true');
    expect(again.body.id).to.equal(first.body.id);
    expectProblem(await deposit(13), 409, 'CONFLICT');

    // Ten requests at once under one new key: one transfer, one hold, ten identical answers.
    const transferKey = randomUUID();
    const transfers = await Promise.all(
      Array.from({ length: 10 }, () =>
        api.post(
          `/account/${owner.accountId}/transfer`,
          { amount: 10, currency: 'USD', to_account_id: receiver.accountId },
          owner.token,
          { 'idempotency-key': transferKey },
        ),
      ),
    );
    expect(transfers.map((t) => t.status)).to.deep.equal(Array(10).fill(202));
    expect(new Set(transfers.map((t) => t.body.id)).size).to.equal(1);
    expect(transfers.filter((t) => t.headers.get('idempotent-replayed') === 'true')).to.have.length(9);
    expect((await settled(owner, transfers[0]?.body.id)).status).to.equal('completed');
    expect(await balanceOf(receiver)).to.include({ balance: 10 });
    // 100 (funding) + 12.50 (the deposit, once the sandbox confirms it) − 10 − fee (0.05 + 0.10).
    await settled(owner, first.body.id);
    expect(await balanceOf(owner)).to.include({ balance: 102.35, available_balance: 102.35 });
  });

  it('shows fee, exchange rate and converted amount in v1.1 and omits them in v1.0', async () => {
    const owner = await newOwner();
    const eur = await openAccount(owner, 'EUR');
    await fund(owner, 200);
    const transfer = (headers: Record<string, string> = {}) =>
      api.post(
        `/account/${owner.accountId}/transfer`,
        { amount: 10, currency: 'USD', to_account_id: eur },
        owner.token,
        headers,
      );

    const v11 = await transfer(V1_1);
    expect(v11.status, v11.text).to.equal(202);
    expect(v11.body.fee).to.equal(0.15);
    expect(v11.body.exchange_rate).to.be.a('number').greaterThan(0);
    expect(v11.body.converted_amount).to.be.a('number').greaterThan(0);
    expect(v11.body.converted_amount).to.be.closeTo(10 * v11.body.exchange_rate, 0.01);

    const v10 = await transfer();
    expect(v10.status, v10.text).to.equal(202);
    for (const field of ['fee', 'exchange_rate', 'converted_amount'])
      expect(v10.body).not.to.have.property(field);

    expect((await settled(owner, v11.body.id)).status).to.equal('completed');
    expect((await settled(owner, v10.body.id)).status).to.equal('completed');
    const shown11 = await api.request('GET', `/transaction/${v11.body.id}`, {
      token: owner.token,
      headers: V1_1,
    });
    expect(shown11.body).to.include({ fee: 0.15, exchange_rate: v11.body.exchange_rate });
    const shown10 = await api.get(`/transaction/${v11.body.id}`, owner.token);
    expect(shown10.body).not.to.have.property('fee');
    expect(shown10.body).not.to.have.property('converted_amount');

    const deposit = await api.post(
      `/account/${owner.accountId}/deposit`,
      { amount: 1, currency: 'USD' },
      owner.token,
      V1_1,
    );
    expect(deposit.body).to.include({ fee: 0 });
    expect(deposit.body).not.to.have.property('exchange_rate');
    await settled(owner, deposit.body.id);

    const credited = await owner.client.balances.get(eur);
    expect(credited.balance).to.be.closeTo(2 * v11.body.converted_amount, 0.001);
    expect(await balanceOf(owner)).to.include({ balance: 180.7 }); // 200 − 2 × (10 + 0.15) + 1
  });
});
