import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import {
  DELIVERY_TO_RECEIVER,
  eventually,
  startTestReceiver,
  useStarted,
  useSystem,
} from '@payments/testkit';
import {
  createPaymentsClient,
  type AdminTransaction,
  type TimelineEntry,
  type TransactionTimeline,
} from '@payments/client';
import { rawApi, signUpWithAccount, type ApiResponse, type Customer } from '@payments/test-support';
import { loadOpenApiValidator, type OpenApiValidator } from './openapi-validator.js';

/**
 * The operator console's Transactions page, through the real system (ADR 0126): an admin finds any user's
 * transaction by each filter, and reads what happened to it, gathered by the ledger from itself, webhook-ingest
 * and webhook-delivery. Nobody else reads either, through the gateway or around it.
 */
describe('admin transaction search and timeline, end to end', function () {
  this.timeout(180_000);
  let openapi: OpenApiValidator;
  let owner: Customer;
  let other: Customer;
  let deposit: { id: string; reference: string; order: string; intent: string };

  const system = useSystem(
    { serviceEnv: { 'webhook-delivery': DELIVERY_TO_RECEIVER } },
    { admin: true, booksBalance: true },
  );
  const api = rawApi(system);
  const receiver = useStarted(startTestReceiver);

  const get = async (path: string, token?: string): Promise<ApiResponse> => {
    const response = await api.get(path, token);
    openapi.check('GET', path.split('?')[0] as string, response);
    return response;
  };
  const find = async (query: string) => {
    const response = await get(`/admin/transactions?${query}`, system.admin.token);
    expect(response.status, `${query}: ${response.text}`).to.equal(200);
    return response.body.data as AdminTransaction[];
  };
  const ids = (found: AdminTransaction[]) => found.map((t) => t.id);
  const adminClient = () => createPaymentsClient({ baseUrl: system.gatewayUrl, token: system.admin.token });

  before(async () => {
    openapi = await loadOpenApiValidator(system.gatewayUrl);
    owner = await signUpWithAccount(system.gatewayUrl);
    other = await signUpWithAccount(system.gatewayUrl);
    const endpoint = await owner.client.webhookEndpoints.create({
      url: `${receiver.url}/timeline`,
      events: ['transaction.completed'],
    });
    expect(endpoint.id).to.be.a('string');
    const reference = `order-${randomUUID()}`;
    const order = randomUUID();
    const accepted = await owner.client.money.deposit(owner.accountId, {
      amount: '25.50',
      currency: 'USD',
      reference,
      metadata: { order },
    });
    // The sandbox pays the PaymentIntent by itself, as a payer would.
    const completed = await eventually(
      () => owner.client.transactions.get(accepted.id),
      (t) => t.status === 'completed',
      { timeoutMs: 30_000 },
    );
    deposit = { id: accepted.id, reference, order, intent: completed.provider_payment!.reference };
    const theirs = await other.client.money.deposit(other.accountId, { amount: 7, currency: 'USD' });
    await eventually(
      () => other.client.transactions.get(theirs.id),
      (t) => t.status === 'completed',
      { timeoutMs: 30_000 },
    );
  });

  it("finds a user's deposit by each filter, with its owner and never the client secret", async () => {
    const today = new Date().toISOString().slice(0, 10);
    const queries = [
      'type=deposit',
      'status=completed',
      `account_id=${owner.accountId}`,
      `user_id=${owner.userId}`,
      'currency=usd',
      `from=${today}&to=${today}`,
      `from=${new Date(Date.now() - 600_000).toISOString()}`,
      'currency=USD&amount_min=25.5&amount_max=25.50',
      `reference=${deposit.reference}`,
      `metadata[order]=${deposit.order}`,
      `q=${deposit.id.slice(0, 13)}`,
      `q=${deposit.id.toUpperCase()}`,
      `q=${deposit.intent.slice(0, 12)}`,
      `user_id=${owner.userId}&type=deposit&status=completed&currency=USD&amount_min=25`,
    ];
    for (const query of queries) {
      const found = await find(`${query}&limit=100`);
      expect(ids(found), query).to.include(deposit.id);
      const listed = found.find((t) => t.id === deposit.id)!;
      expect(listed, query).to.include({ user_id: owner.userId, amount: 25.5, reference: deposit.reference });
      expect(listed.provider_payment, query).to.include({ reference: deposit.intent, kind: 'payment' });
      expect(JSON.stringify(found), query).not.to.contain('client_secret');
    }
    // The filters that tell the two apart leave the other user's deposit out.
    for (const query of [
      `user_id=${owner.userId}`,
      `account_id=${owner.accountId}`,
      'currency=USD&amount_min=20',
      `reference=${deposit.reference}`,
      `metadata[order]=${deposit.order}`,
      `q=${deposit.intent}`,
    ]) {
      const found = await find(query);
      expect(ids(found), query).to.deep.equal([deposit.id]);
    }
    expect(await find(`user_id=${owner.userId}&status=failed`)).to.deep.equal([]);
    expect(await find('currency=USD&amount_max=7')).to.satisfy((found: AdminTransaction[]) =>
      found.every((t) => t.amount <= 7),
    );
  });

  it('pages newest first by cursor, as the other admin lists', async () => {
    const first = await get('/admin/transactions?type=deposit&limit=1', system.admin.token);
    expect(first.status, first.text).to.equal(200);
    expect(first.body).to.include({ has_more: true });
    const next = await get(
      `/admin/transactions?type=deposit&limit=1&starting_after=${first.body.data[0].id}`,
      system.admin.token,
    );
    expect(next.status, next.text).to.equal(200);
    expect(next.body.data[0].created_at <= first.body.data[0].created_at).to.equal(true);
    expect(next.body.data[0].id).not.to.equal(first.body.data[0].id);
    const all = await adminClient().admin.transactions.find({ user_id: owner.userId }).toArray();
    expect(all.map((t) => t.id)).to.deep.equal([deposit.id]);
  });

  it('refuses everyone but admins, through the gateway and around it', async () => {
    const paths = ['/admin/transactions', `/admin/transactions/${deposit.id}/timeline`];
    for (const path of paths) {
      const anonymous = await get(path);
      expect(anonymous.status, path).to.equal(401);
      expect(anonymous.headers.get('content-type')).to.contain('application/problem+json');
      // The owner may not read their own transaction as an operator does, nor another user theirs.
      for (const user of [owner, other]) {
        const refused = await get(path, user.token);
        expect(refused.status, path).to.equal(403);
        expect(refused.body.code).to.equal('ACCESS_DENIED');
        expect(refused.text).not.to.contain(deposit.reference);
        // The ledger checks for itself: a user's token sent straight to it is refused all the same.
        const direct = await fetch(`${system.urls.ledger}${path}`, {
          headers: { authorization: `Bearer ${user.token}` },
        });
        expect(direct.status, `ledger ${path}`).to.equal(403);
      }
    }
    // The parts the other services answer take the service credential, never a user's token, even an admin's.
    const parts = [
      `${system.urls['webhook-ingest']}/internal/provider-events?transaction_id=${deposit.id}`,
      `${system.urls['webhook-delivery']}/internal/transactions/${deposit.id}/webhook-events`,
    ];
    for (const url of parts) {
      for (const token of [other.token, system.admin.token]) {
        const refused = await fetch(url, { headers: { authorization: `Bearer ${token}` } });
        expect(refused.status, url).to.be.oneOf([401, 403]);
        expect(await refused.text()).not.to.contain(deposit.intent);
      }
      expect((await fetch(url)).status, url).to.be.oneOf([401, 403]);
    }
  });

  it('shows a paid deposit from creation to its webhook delivery, in order, then its refund as a reversal', async () => {
    await eventually(
      async () => receiver.calls('/timeline'),
      (calls) => calls.length > 0,
      { timeoutMs: 30_000 },
    );
    const read = async () => {
      const response = await get(`/admin/transactions/${deposit.id}/timeline`, system.admin.token);
      expect(response.status, response.text).to.equal(200);
      return response.body as TransactionTimeline;
    };
    const timeline = await eventually(read, (t) =>
      t.entries.some((entry) => entry.kind === 'webhook_delivery' && entry.status === 'succeeded'),
    );
    if (process.env.SHOW_TIMELINE) console.log(JSON.stringify(timeline.entries, null, 1));
    expect(timeline.sources).to.deep.equal({
      ledger: 'ok',
      'webhook-ingest': 'ok',
      'webhook-delivery': 'ok',
    });
    expect(timeline.transaction).to.include({ id: deposit.id, user_id: owner.userId, status: 'completed' });
    expect(JSON.stringify(timeline)).not.to.contain('client_secret');
    const at = timeline.entries.map((entry) => Date.parse(entry.at));
    expect(at, 'oldest first').to.deep.equal([...at].sort((a, b) => a - b));
    const index = (predicate: (entry: TimelineEntry) => boolean, what: string) => {
      const found = timeline.entries.findIndex(predicate);
      expect(found, `${what} in ${JSON.stringify(timeline.entries, null, 1)}`).to.be.greaterThan(-1);
      return found;
    };
    const created = index((e) => e.kind === 'created', 'created');
    const asked = index((e) => e.kind === 'provider_request' && e.attempt === 1, 'the call to the provider');
    const answered = index(
      (e) => e.kind === 'provider_response' && e.status === 'created' && e.reference === deposit.intent,
      "the provider's answer",
    );
    const event = index(
      (e) => e.kind === 'provider_event' && e.event_type === 'payment_intent.succeeded',
      "the provider's event",
    );
    const completed = index((e) => e.kind === 'status_change' && e.status === 'completed', 'completion');
    const credited = index(
      (e) => e.kind === 'posting' && e.account_id === owner.accountId && e.amount === 25.5,
      "the owner's posting",
    );
    const delivered = index(
      (e) => e.kind === 'webhook_delivery' && e.status_code === 200 && e.url === `${receiver.url}/timeline`,
      'the webhook delivery',
    );
    expect(created).to.equal(0);
    expect([created, asked, answered, event, completed, delivered]).to.deep.equal(
      [created, asked, answered, event, completed, delivered].sort((a, b) => a - b),
    );
    expect(credited).to.be.greaterThan(answered);
    const postings = timeline.entries.filter((e) => e.kind === 'posting');
    expect(
      postings.reduce((sum, e) => sum + (e.amount ?? 0), 0),
      'balanced',
    ).to.equal(0);

    const refund = await owner.client.transactions.refund(deposit.id, { amount: 5 });
    await eventually(
      () => owner.client.transactions.get(refund.id),
      (t) => t.status === 'completed',
      { timeoutMs: 30_000 },
    );
    const after = await adminClient().admin.transactions.timeline(deposit.id);
    const reversal = after.entries.find((e) => e.kind === 'reversal');
    expect(reversal, JSON.stringify(after.entries)).to.include({
      transaction_id: refund.id,
      status: 'completed',
      reason: 'refund',
      amount: 5,
    });
  });

  it('answers 404 for a transaction that is not there', async () => {
    const missing = await get(`/admin/transactions/${randomUUID()}/timeline`, system.admin.token);
    expect(missing.status).to.equal(404);
    expect((await get('/admin/transactions/not-an-id/timeline', system.admin.token)).status).to.equal(404);
  });

  it('answers bad filters 400 problem+json and finds nothing', async () => {
    const bad = [
      'amount_min=10',
      'currency=USD&amount_min=1.234',
      'currency=USD&amount_min=-1',
      'currency=USD&amount_min=ten',
      'currency=USD&amount_min=20&amount_max=10',
      'currency=ZZZ',
      'currency=US',
      'from=yesterday',
      'from=2026-02-30',
      `from=2026-03-02&to=2026-03-01`,
      'status=settled',
      'type=refund',
      'account_id=not-a-uuid',
      'user_id=42',
      'limit=1000',
      'limit=5&offset=5&starting_after=' + randomUUID(),
      `starting_after=${randomUUID()}`,
      'metadata[a[b]]=c',
      'stauts=failed',
    ];
    for (const query of bad) {
      const response = await get(`/admin/transactions?${query}`, system.admin.token);
      expect(response.status, `${query}: ${response.text}`).to.equal(400);
      expect(response.headers.get('content-type'), query).to.contain('application/problem+json');
      expect(response.body.code, query).to.equal('VALIDATION_ERROR');
    }
  });
});
