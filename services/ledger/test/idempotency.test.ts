import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { useLedgerHarness, type TestUser } from './support/ledger-harness.js';

describe('ledger idempotency keys', () => {
  let alice: TestUser;

  const ledger = useLedgerHarness({}, { booksBalance: true });
  beforeEach(() => {
    alice = ledger.newUser();
  });

  const post = (path: string, body: unknown, key?: string, user = alice, version?: string) =>
    ledger.call('POST', path, {
      user,
      body,
      headers: {
        ...(key ? { 'idempotency-key': key } : {}),
        ...(version ? { 'x-api-version': version } : {}),
      },
    });

  const historyTotal = async (accountId: string, user = alice) =>
    (await ledger.call('GET', `/account/${accountId}/transactions`, { user })).body.pagination.total;

  it('replays the first response for the same key and body, with Idempotent-Replayed', async () => {
    const account = await ledger.openAccount(alice);
    const key = randomUUID();
    const first = await post(`/account/${account.id}/deposit`, { amount: 10, currency: 'USD' }, key);
    const second = await post(`/account/${account.id}/deposit`, { currency: 'USD', amount: 10 }, key);
    expect(first.status).to.equal(202);
    expect(first.headers.get('idempotent-replayed')).to.equal(null);
    expect(second.status).to.equal(202);
    expect(second.headers.get('idempotent-replayed')).to.equal('true');
    expect(second.headers.get('location')).to.equal(first.headers.get('location'));
    expect(second.body).to.deep.equal(first.body);
    expect(await historyTotal(account.id)).to.equal(1);
  });

  it('replays the first answer even after the transaction moved on', async () => {
    const account = await ledger.openAccount(alice);
    const key = randomUUID();
    const first = await post(`/account/${account.id}/deposit`, { amount: 10, currency: 'USD' }, key);
    await ledger.confirm(first.body.id);
    await ledger.waitForStatus(alice, first.body.id, 'completed');
    const replay = await post(`/account/${account.id}/deposit`, { amount: 10, currency: 'USD' }, key);
    expect(replay.body).to.deep.equal(first.body);
    expect((await ledger.balanceOf(alice, account.id)).balance).to.equal(10);
  });

  it('answers 409 CONFLICT for the same key with a different body or operation', async () => {
    const account = await ledger.openAccount(alice);
    await ledger.fund(alice, account.id, 50);
    const key = randomUUID();
    expect(
      (await post(`/account/${account.id}/withdraw`, { amount: 10, currency: 'USD' }, key)).status,
    ).to.equal(202);
    const otherAmount = await post(`/account/${account.id}/withdraw`, { amount: 11, currency: 'USD' }, key);
    expect(otherAmount.status).to.equal(409);
    expect(otherAmount.body.code).to.equal('CONFLICT');
    const otherOperation = await post(`/account/${account.id}/deposit`, { amount: 10, currency: 'USD' }, key);
    expect(otherOperation.status).to.equal(409);
    expect((await ledger.balanceOf(alice, account.id)).available_balance).to.equal(40);
  });

  it('creates one transaction for twenty concurrent requests with one key', async () => {
    const account = await ledger.openAccount(alice);
    await ledger.fund(alice, account.id, 100);
    const key = randomUUID();
    const responses = await Promise.all(
      Array.from({ length: 20 }, () =>
        post(`/account/${account.id}/withdraw`, { amount: 60, currency: 'USD' }, key),
      ),
    );
    expect(responses.map((r) => r.status)).to.deep.equal(Array(20).fill(202));
    expect(new Set(responses.map((r) => r.body.id)).size).to.equal(1);
    expect(responses.filter((r) => r.headers.get('idempotent-replayed') === 'true')).to.have.length(19);
    expect(await ledger.balanceOf(alice, account.id)).to.include({ balance: 100, available_balance: 40 });
  });

  it('creates one transfer for concurrent retries of a transfer', async () => {
    const bob = ledger.newUser();
    const source = await ledger.openAccount(alice);
    const destination = await ledger.openAccount(bob);
    await ledger.fund(alice, source.id, 10);
    const key = randomUUID();
    const body = { to_account_id: destination.id, amount: 7, currency: 'USD' };
    const responses = await Promise.all(
      Array.from({ length: 10 }, () => post(`/account/${source.id}/transfer`, body, key)),
    );
    expect(new Set(responses.map((r) => r.body.id)).size).to.equal(1);
    await ledger.waitForStatus(alice, responses[0]?.body.id, 'completed');
    expect((await ledger.balanceOf(bob, destination.id)).balance).to.equal(7);
  });

  it('scopes keys per user', async () => {
    const bob = ledger.newUser();
    const key = randomUUID();
    const mine = await ledger.openAccount(alice);
    const his = await ledger.openAccount(bob);
    const first = await post(`/account/${mine.id}/deposit`, { amount: 1, currency: 'USD' }, key);
    const second = await post(`/account/${his.id}/deposit`, { amount: 1, currency: 'USD' }, key, bob);
    expect(second.status).to.equal(202);
    expect(second.headers.get('idempotent-replayed')).to.equal(null);
    expect(second.body.id).to.not.equal(first.body.id);
  });

  it('does not keep a key whose request was refused, so a retry can succeed', async () => {
    const account = await ledger.openAccount(alice);
    const key = randomUUID();
    const refused = await post(`/account/${account.id}/withdraw`, { amount: 5, currency: 'USD' }, key);
    expect(refused.status).to.equal(422);
    await ledger.fund(alice, account.id, 5);
    const retried = await post(`/account/${account.id}/withdraw`, { amount: 5, currency: 'USD' }, key);
    expect(retried.status).to.equal(202);
    expect(retried.headers.get('idempotent-replayed')).to.equal(null);
  });

  it('keeps the keys of concurrent requests accepted together and drops those of the ones refused among them', async () => {
    const account = await ledger.openAccount(alice);
    await ledger.fund(alice, account.id, 100);
    const keys = Array.from({ length: 30 }, () => randomUUID());
    const withdraw = (key: string) =>
      post(`/account/${account.id}/withdraw`, { amount: 10, currency: 'USD' }, key);
    const answers = await Promise.all(keys.map(withdraw));
    const accepted = keys.filter((_, index) => answers[index]?.status === 202);
    const refused = keys.filter((_, index) => answers[index]?.status === 422);
    expect(accepted).to.have.length(10);
    expect(refused).to.have.length(20);
    expect((await ledger.balanceOf(alice, account.id)).available_balance).to.equal(0);
    // The accepted ones replay; a refused one left no key behind, so its retry is a new request.
    const replays = await Promise.all(accepted.map(withdraw));
    expect(replays.map((r) => r.headers.get('idempotent-replayed'))).to.deep.equal(Array(10).fill('true'));
    await ledger.fund(alice, account.id, 10);
    const retried = await withdraw(refused[0] as string);
    expect(retried.status).to.equal(202);
    expect(retried.headers.get('idempotent-replayed')).to.equal(null);
    expect(await ledger.balanceOf(alice, account.id)).to.include({ balance: 110, available_balance: 0 });
  });

  it('renders a replay in the version the replay asks for', async () => {
    const account = await ledger.openAccount(alice);
    const key = randomUUID();
    const first = await post(
      `/account/${account.id}/deposit`,
      { amount: 3, currency: 'USD' },
      key,
      alice,
      '1.1',
    );
    expect(first.body).to.have.property('fee', 0);
    const replay = await post(
      `/account/${account.id}/deposit`,
      { amount: 3, currency: 'USD' },
      key,
      alice,
      '1.0',
    );
    expect(replay.body).to.not.have.property('fee');
    expect(replay.body.id).to.equal(first.body.id);
  });

  it('answers 400 for a malformed key', async () => {
    const account = await ledger.openAccount(alice);
    for (const key of ['x'.repeat(256), 'has space']) {
      const response = await post(`/account/${account.id}/deposit`, { amount: 1, currency: 'USD' }, key);
      expect(response.status).to.equal(400);
      expect(response.body.code).to.equal('VALIDATION_ERROR');
    }
  });
});
