import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { createEvent, type EventEnvelope } from '@payments/contracts';
import type { Consumer } from '@payments/service-kit';
import { eventually } from '@payments/testkit';
import { useLedgerHarness, type TestUser } from './support/ledger-harness.js';

describe('ledger accounts', () => {
  let alice: TestUser;
  let currencyQueue: Consumer;
  const opened: EventEnvelope<'AccountOpened'>[] = [];

  const ledger = useLedgerHarness(
    { env: { MAX_ACCOUNTS_PER_USER: '3' } },
    { booksBalance: true, beforeStop: () => currencyQueue?.stop() },
  );
  before(async () => {
    currencyQueue = await ledger.bus.consume('currency', {
      AccountOpened: async (event) => {
        opened.push(event);
      },
    });
  });
  beforeEach(() => {
    alice = ledger.newUser();
  });

  const open = (body: unknown, user = alice) => ledger.call('POST', '/account', { user, body });

  it('opens an account: 201, Location, zero balances, and AccountOpened', async () => {
    const response = await open({ currency: 'USD', metadata: { nickname: 'savings' } });
    expect(response.status).to.equal(201);
    expect(response.headers.get('location')).to.equal(`/account/${response.body.id}`);
    expect(response.body).to.include({
      user_id: alice.id,
      currency: 'USD',
      balance: 0,
      available_balance: 0,
    });
    expect(response.body.metadata).to.deep.equal({ nickname: 'savings' });
    expect(response.body).to.have.all.keys(
      'id',
      'user_id',
      'currency',
      'balance',
      'available_balance',
      'metadata',
      'created_at',
      'updated_at',
    );
    const event = await eventually(
      async () => opened.find((e) => e.data.account_id === response.body.id),
      (e) => e !== undefined,
    );
    expect(event?.data).to.deep.equal({ account_id: response.body.id, user_id: alice.id, currency: 'USD' });
  });

  it('accepts a lower-case currency code and defaults metadata to an empty object', async () => {
    const response = await open({ currency: 'eur' });
    expect(response.status).to.equal(201);
    expect(response.body.currency).to.equal('EUR');
    expect(response.body.metadata).to.deep.equal({});
  });

  it('answers 422 INVALID_CURRENCY listing the supported currencies for unsupported or unknown codes', async () => {
    for (const currency of ['GBP', 'XYZ', 'dollars']) {
      const response = await open({ currency });
      expect(response.status).to.equal(422);
      expect(response.body.code).to.equal('INVALID_CURRENCY');
      expect(response.body.detail).to.include('EUR, JPY, KWD, USD');
    }
  });

  it('answers 400 VALIDATION_ERROR for a missing currency, a bad type or bad metadata', async () => {
    const deep = { a: { b: { c: { d: { e: { f: 1 } } } } } };
    for (const body of [
      {},
      { currency: 840 },
      { currency: 'USD', metadata: [1, 2] },
      { currency: 'USD', metadata: 'note' },
      { currency: 'USD', metadata: deep },
      { currency: 'USD', metadata: { note: 'x'.repeat(5000) } },
    ]) {
      const response = await open(body);
      expect(response.status, JSON.stringify(body).slice(0, 80)).to.equal(400);
      expect(response.body.code).to.equal('VALIDATION_ERROR');
    }
  });

  it('caps the accounts per user, also under concurrent requests', async () => {
    const responses = await Promise.all(Array.from({ length: 8 }, () => open({ currency: 'USD' })));
    expect(responses.filter((r) => r.status === 201)).to.have.length(3);
    const refused = responses.filter((r) => r.status === 422);
    expect(refused).to.have.length(5);
    expect(refused[0]?.body.code).to.equal('BUSINESS_RULE_VIOLATION');
  });

  it('shows an account to its owner and to an admin, 403 to anyone else', async () => {
    const account = await ledger.openAccount(alice);
    const own = await ledger.call('GET', `/account/${account.id}`, { user: alice });
    expect(own.status).to.equal(200);
    expect(own.body.id).to.equal(account.id);
    const admin = await ledger.call('GET', `/account/${account.id}`, { user: ledger.newUser('admin') });
    expect(admin.status).to.equal(200);
    const other = await ledger.call('GET', `/account/${account.id}`, { user: ledger.newUser() });
    expect(other.status).to.equal(403);
    expect(other.body.code).to.equal('ACCESS_DENIED');
  });

  it('answers 404 for an unknown or malformed account id, 401 without a token', async () => {
    for (const id of [randomUUID(), 'abc', '123']) {
      const response = await ledger.call('GET', `/account/${id}`, { user: alice });
      expect(response.status).to.equal(404);
      expect(response.body.code).to.equal('RESOURCE_NOT_FOUND');
    }
    const account = await ledger.openAccount(alice);
    expect((await ledger.call('GET', `/account/${account.id}`)).status).to.equal(401);
  });

  it('answers the balance as { account_id, balance, currency, available_balance }', async () => {
    const account = await ledger.openAccount(alice, 'KWD');
    await ledger.fund(alice, account.id, 1.5, 'KWD');
    const response = await ledger.call('GET', `/account/${account.id}/balance`, { user: alice });
    expect(response.body).to.deep.equal({
      account_id: account.id,
      balance: 1.5,
      currency: 'KWD',
      available_balance: 1.5,
    });
    const other = await ledger.call('GET', `/account/${account.id}/balance`, { user: ledger.newUser() });
    expect(other.status).to.equal(403);
  });

  it("lists only the caller's accounts, paginated", async () => {
    const ids = [];
    for (const currency of ['USD', 'EUR', 'JPY']) ids.push((await ledger.openAccount(alice, currency)).id);
    await ledger.openAccount(ledger.newUser());
    const first = await ledger.call('GET', '/accounts?limit=2', { user: alice });
    expect(first.status).to.equal(200);
    expect(first.body.pagination).to.deep.equal({ limit: 2, offset: 0, total: 3 });
    expect(first.body.data.map((a: { id: string }) => a.id)).to.deep.equal(ids.slice(0, 2));
    const rest = await ledger.call('GET', '/accounts?limit=2&offset=2', { user: alice });
    expect(rest.body.data.map((a: { id: string }) => a.id)).to.deep.equal(ids.slice(2));
    const defaults = await ledger.call('GET', '/accounts', { user: alice });
    expect(defaults.body.pagination).to.deep.equal({ limit: 20, offset: 0, total: 3 });
  });

  it('refuses a token once a TokenRevoked event names it', async () => {
    const jti = randomUUID();
    const user = { id: alice.id, token: ledger.issueToken({ sub: alice.id, jti }) };
    expect((await ledger.call('GET', '/accounts', { user })).status).to.equal(200);
    await ledger.bus.publish(
      createEvent(
        'TokenRevoked',
        { jti, expires_at: Math.floor(Date.now() / 1000) + 900 },
        { id: randomUUID(), correlationId: 'test' },
      ),
    );
    const refused = await eventually(
      () => ledger.call('GET', '/accounts', { user }),
      (r) => r.status === 401,
    );
    expect(refused.body.code).to.equal('AUTH_REQUIRED');
    expect((await ledger.call('GET', '/accounts', { user: alice })).status).to.equal(200);
  });

  it('answers 400 for an invalid limit or offset', async () => {
    for (const query of ['limit=0', 'limit=101', 'limit=abc', 'limit=1.5', 'offset=-1', 'offset=x']) {
      const response = await ledger.call('GET', `/accounts?${query}`, { user: alice });
      expect(response.status, query).to.equal(400);
      expect(response.body.code).to.equal('VALIDATION_ERROR');
    }
  });
});
