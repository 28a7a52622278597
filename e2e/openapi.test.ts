import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import {
  eventually,
  useSystem,
  startTestReceiver,
  DELIVERY_TO_RECEIVER,
  useStarted,
} from '@payments/testkit';
import { createPaymentsClient } from '@payments/client';
import { DEAD_LETTER_QUEUES, OPERATIONS, SERVICES, type ServiceName } from '@payments/contracts/operations';
import { depositConfirmed, rawApi, signUp, type RawCall, providerSignature } from '@payments/test-support';
import { loadOpenApiValidator, type OpenApiValidator } from './openapi-validator.js';

/** Writes each process's Express routes where the test finds them (see the module). */
const ROUTE_RECORDER = new URL('./support/route-recorder.mjs', import.meta.url).href;
/** What the kit's app answers in every service, besides its routes: probes the API does not document. */
const KIT_ROUTES = ['/health', '/ready', '/metrics'];
/** A route as `METHOD /path/{}`, whatever its parameters are named and however its router writes them. */
const routeKey = (method: string, route: string) =>
  `${method.toUpperCase()} ${route.replace(/\{[^}]+\}|:\w+/g, '{}')}`;

describe('the OpenAPI document against the running system', function () {
  this.timeout(120_000);
  let openapi: OpenApiValidator;

  /** Every answer of this suite is checked against the document the gateway serves. */
  const call = async (method: string, path: string, options: RawCall = {}) => {
    const response = await api.request(method, path, options);
    openapi.check(method, path, response);
    return response;
  };

  let routeRecords = '';
  const system = useSystem(
    async () => ({
      env: {
        NODE_OPTIONS: [process.env.NODE_OPTIONS, `--import=${ROUTE_RECORDER}`].filter(Boolean).join(' '),
        ROUTE_RECORD_DIR: (routeRecords = await mkdtemp(path.join(tmpdir(), 'payments-routes-'))),
      },
      serviceEnv: {
        // The test receiver is on 127.0.0.1.
        'webhook-delivery': DELIVERY_TO_RECEIVER,
        // The ledger asks the sandbox for payments and payouts; the test pays the deposits itself, by webhook.
        'provider-sandbox': { SANDBOX_AUTO_CONFIRM: 'false' },
        'webhook-ingest': { UNSIGNED_WEBHOOK_ENABLED: 'true' },
        // Reconciliation compares at once what the test just did.
        ledger: { RECONCILIATION_GRACE_SECONDS: '0' },
      },
    }),
    { admin: true },
  );
  const api = rawApi(system);

  const receiver = useStarted(startTestReceiver);

  before(async () => {
    openapi = await loadOpenApiValidator(system.gatewayUrl);
  });
  after(async () => {
    if (routeRecords) await rm(routeRecords, { recursive: true, force: true });
  });

  it('has each service serve exactly the operations declared as its own', async () => {
    const declared = (service: ServiceName) =>
      Object.values(OPERATIONS)
        .filter(
          ({ owner }) =>
            owner === service ||
            (owner === 'consumer of {queue}' && (DEAD_LETTER_QUEUES as readonly string[]).includes(service)),
        )
        .map(({ method, path: template }) => routeKey(method, template))
        .sort();
    for (const service of SERVICES) {
      const { port } = new URL(system.urls[service]);
      const routes = JSON.parse(await readFile(path.join(routeRecords, `${port}.json`), 'utf8')) as [
        string,
        string,
      ][];
      const served = routes
        .filter(([, route]) => !KIT_ROUTES.includes(route) && !route.startsWith('/internal/'))
        .map(([method, route]) => routeKey(method, route))
        .sort();
      expect(served, `${service}: its routes, then the operations declared as its own`).to.deep.equal(
        declared(service),
      );
    }
  });

  let token: string;
  let userId: string;
  let accountId: string;
  let euroAccountId: string;
  let depositId: string;

  it('documents registration, login and the user, and the answers match', async () => {
    const username = `oa_${randomBytes(4).toString('hex')}`;
    const password = `pw-${randomBytes(8).toString('hex')}`;
    const created = await call('POST', '/user', {
      body: { username, email: `${username}@example.com`, password },
    });
    expect(created.status, created.text).to.equal(201);
    userId = created.body.id;
    const duplicate = await call('POST', '/user', {
      body: { username, email: `x${username}@example.com`, password },
    });
    expect(duplicate.status).to.equal(409);
    const invalid = await call('POST', '/user', { body: { username, email: 'not-an-email', password } });
    expect(invalid.status).to.equal(400);

    const login = await call('POST', '/auth/login', { body: { username, password } });
    expect(login.status, login.text).to.equal(200);
    token = login.body.token;
    expect((await call('POST', '/login', { body: { identity: username, password } })).status).to.equal(200);
    expect(
      (await call('POST', '/auth/login', { body: { username, password: 'wrong-password' } })).status,
    ).to.equal(401);

    expect((await call('GET', `/user/${userId}`, { token })).status).to.equal(200);
    const updated = await call('PUT', `/user/${userId}`, {
      body: { email: `new-${username}@example.com`, current_password: password },
      token,
    });
    expect(updated.status, updated.text).to.equal(200);
    expect((await call('GET', `/user/${randomUUID()}`, { token })).status).to.be.oneOf([403, 404]);
    expect((await call('GET', `/user/${userId}`)).status).to.equal(401);
  });

  it('documents accounts and balances in both versions', async () => {
    const opened = await call('POST', '/account', {
      body: { currency: 'USD', metadata: { label: 'main' } },
      token,
    });
    expect(opened.status, opened.text).to.equal(201);
    accountId = opened.body.id;
    const euro = await call('POST', '/v1.1/account', { body: { currency: 'EUR' }, token });
    expect(euro.status, euro.text).to.equal(201);
    euroAccountId = euro.body.id;
    expect((await call('POST', '/account', { body: { currency: 'XYZ' }, token })).status).to.equal(422);
    expect((await call('POST', '/account', { body: { currency: 12 }, token })).status).to.equal(400);

    expect((await call('GET', '/accounts?limit=5', { token })).status).to.equal(200);
    expect((await call('GET', '/accounts?limit=500', { token })).status).to.equal(400);
    expect((await call('GET', `/account/${accountId}`, { token })).status).to.equal(200);
    expect((await call('GET', `/v1.1/account/${accountId}/balance`, { token })).status).to.equal(200);
    const past = await call('GET', `/account/${accountId}/balance?at=2020-01-01T00:00:00Z`, { token });
    expect(past.status, past.text).to.equal(200);
    expect(past.body).to.include({ balance: 0, at: '2020-01-01T00:00:00.000Z' });
    expect((await call('GET', `/account/${accountId}/balance?at=yesterday`, { token })).status).to.equal(400);
    expect((await call('GET', `/account/${randomUUID()}`, { token })).status).to.equal(404);
  });

  it('documents statements as JSON and as CSV', async () => {
    const json = await call('GET', `/v1.1/account/${accountId}/statement?limit=5`, { token });
    expect(json.status, json.text).to.equal(200);
    const csv = await call('GET', `/account/${accountId}/statement?format=csv`, { token });
    expect(csv.status, csv.text).to.equal(200);
    expect(csv.headers.get('content-type')).to.match(/^text\/csv/);
    const bad = await call('GET', `/account/${accountId}/statement?from=2026-01-01`, { token });
    expect(bad.status).to.equal(400);
    expect((await call('GET', `/account/${randomUUID()}/statement`, { token })).status).to.equal(404);
    expect((await call('GET', `/account/${accountId}/statement`)).status).to.equal(401);
  });

  it('documents money operations, webhooks and transactions in both versions', async () => {
    const deposit = await call('POST', `/account/${accountId}/deposit`, {
      body: { amount: '100.00', currency: 'USD' },
      token,
      headers: { 'idempotency-key': randomUUID() },
    });
    expect(deposit.status, deposit.text).to.equal(202);
    depositId = deposit.body.id;
    expect(deposit.body).to.not.have.property('fee');
    const v11 = await call('POST', `/v1.1/account/${euroAccountId}/deposit`, {
      body: { amount: 50, currency: 'EUR' },
      token,
    });
    expect(v11.status, v11.text).to.equal(202);
    expect(v11.body).to.have.property('fee');

    expect(
      (await call('POST', '/webhook/payment', { body: { payment_id: depositId, status: 'completed' } }))
        .status,
    ).to.equal(200);
    expect(
      (await call('POST', '/webhook/payment', { body: { payment_id: depositId, status: 'teleported' } }))
        .status,
    ).to.equal(400);
    const statusReport = JSON.stringify({ payment_id: v11.body.id, status: 'completed' });
    const reported = await call('POST', '/webhook/payment-status', {
      raw: statusReport,
      headers: {
        'content-type': 'application/json',
        'x-webhook-signature': providerSignature(statusReport, system.webhookSecret),
      },
    });
    expect(reported.status, reported.text).to.equal(200);
    const providerEvent = JSON.stringify({
      id: `evt_${randomBytes(6).toString('hex')}`,
      type: 'customer.created',
      data: { object: {} },
    });
    const provider = await call('POST', '/webhook/provider', {
      raw: providerEvent,
      headers: {
        'content-type': 'application/json',
        'provider-signature': providerSignature(providerEvent, system.webhookSecret),
      },
    });
    expect(provider.status, provider.text).to.equal(200);
    expect(
      (
        await call('POST', '/webhook/provider', {
          raw: providerEvent,
          headers: { 'content-type': 'application/json' },
        })
      ).status,
    ).to.equal(400);

    await eventually(
      () => call('GET', `/transaction/${depositId}`, { token }),
      (response) => response.body?.status === 'completed',
    );
    await eventually(
      () => call('GET', `/v1.1/transaction/${v11.body.id}`, { token }),
      (response) => response.body?.status === 'completed',
    );
    // Paid by the unsigned webhook, not at the sandbox: the provider refuses the refund, which fails at once.
    const refund = await call('POST', `/v1.1/transaction/${v11.body.id}/refund`, {
      token,
      body: { reason: 'duplicate' },
      headers: { 'idempotency-key': randomUUID() },
    });
    expect(refund.status, refund.text).to.equal(202);
    expect(refund.body).to.include({ type: 'reversal', reversal_reason: 'refund', status: 'failed' });
    expect((await call('GET', '/transactions?status=completed', { token })).status).to.equal(200);
    expect(
      (await call('GET', `/v1.1/account/${accountId}/transactions?type=deposit`, { token })).status,
    ).to.equal(200);
    expect((await call('GET', '/transactions?type=refund', { token })).status).to.equal(400);
    const reference = `order-${randomUUID()}`;
    const referenced = await call('POST', `/account/${accountId}/deposit`, {
      body: { amount: 1, currency: 'USD', reference, metadata: { order: '8812' } },
      token,
    });
    expect(referenced.status, referenced.text).to.equal(202);
    expect(referenced.body).to.include({ reference });
    const reused = await call('POST', `/account/${accountId}/deposit`, {
      body: { amount: 2, currency: 'USD', reference },
      token,
    });
    expect(reused.status, reused.text).to.equal(409);
    const filtered = await call('GET', `/transactions?reference=${reference}&metadata[order]=8812`, {
      token,
    });
    expect(filtered.body.data.map((t: { id: string }) => t.id)).to.deep.equal([referenced.body.id]);

    const unlinked = await call('GET', '/payout-account', { token });
    expect(unlinked.status).to.equal(404);
    const linked = await call('POST', '/payout-account', { token });
    expect(linked.status).to.equal(201);
    expect((await call('GET', '/payout-account', { token })).status).to.equal(200);
    const withdrawal = await call('POST', `/account/${accountId}/withdraw`, {
      body: { amount: 10, currency: 'USD' },
      token,
    });
    expect(withdrawal.status, withdrawal.text).to.equal(202);
    const tooMuch = await call('POST', `/account/${accountId}/withdraw`, {
      body: { amount: 10_000, currency: 'USD' },
      token,
    });
    expect(tooMuch.status).to.equal(422);
    // Replaceable once the withdrawal has ended (409 while it is in flight).
    const replaced = await eventually(
      () => call('PUT', '/payout-account', { body: { replaces: linked.body.account }, token }),
      (response) => response.status !== 409,
      { timeoutMs: 20_000 },
    );
    expect(replaced.status, replaced.text).to.equal(200);
    const transfer = await call('POST', `/v1.1/account/${accountId}/transfer`, {
      body: { amount: 5, currency: 'USD', to_account_id: euroAccountId },
      token,
    });
    expect(transfer.status, transfer.text).to.equal(202);
    const completedTransfer = await eventually(
      () => call('GET', `/v1.1/transaction/${transfer.body.id}`, { token }),
      (response) => response.body?.status !== 'pending',
    );
    expect(completedTransfer.body).to.include({ status: 'completed' });
    expect(completedTransfer.body).to.have.property('converted_amount');
  });

  it('documents the currency catalogue and the exchange rates', async () => {
    const reads = [
      '/api/currencies?limit=5',
      '/api/currencies/supported',
      '/api/currencies/search?q=euro',
      '/api/currencies/statistics',
      '/api/currencies/default',
      '/api/currencies/region/Europe',
      '/api/currencies/USD',
      '/api/currencies/usd/supported',
      '/v1.1/api/currencies/rates?base=EUR',
      '/v1.1/api/currencies/USD/rate/JPY',
    ];
    for (const path of reads) expect((await call('GET', path)).status, path).to.equal(200);
    expect((await call('GET', '/api/currencies/QQQ')).status).to.equal(404);
    expect((await call('GET', '/api/currencies/12')).status).to.equal(400);
    expect((await call('GET', '/api/currencies/search')).status).to.equal(400);
  });

  it('documents discovery, the docs, the keys and the probes', async () => {
    for (const path of ['/', '/v1.1/', '/openapi.json', '/docs', '/.well-known/jwks.json', '/health']) {
      const response = await call('GET', path);
      expect(response.status, path).to.equal(200);
    }
    for (const path of ['/ready', '/metrics']) {
      expect((await call('GET', path)).status, path).to.equal(401);
      expect((await call('GET', path, { token: system.serviceToken })).status, path).to.equal(200);
    }
    expect((await call('GET', '/', { headers: { 'x-api-version': '7.0' } })).status).to.equal(400);
  });

  it('documents the webhook endpoints and their delivery log', async () => {
    const created = await call('POST', '/webhook-endpoints', {
      body: { url: `${receiver.url}/openapi`, events: ['transaction.completed'] },
      token,
    });
    expect(created.status, created.text).to.equal(201);
    const id = created.body.id as string;
    expect((await call('GET', '/webhook-endpoints', { token })).status).to.equal(200);
    expect((await call('GET', `/webhook-endpoints/${id}`, { token })).status).to.equal(200);
    const updated = await call('PUT', `/webhook-endpoints/${id}`, { body: { description: 'docs' }, token });
    expect(updated.status, updated.text).to.equal(200);
    const rotated = await call('POST', `/webhook-endpoints/${id}/rotate-secret`, {
      body: { grace_period_seconds: 60 },
      token,
    });
    expect(rotated.status, rotated.text).to.equal(200);
    await depositConfirmed(createPaymentsClient({ baseUrl: system.gatewayUrl, token }), accountId, 1, 'USD');
    const log = await eventually(
      () => call('GET', `/webhook-endpoints/${id}/deliveries?limit=5`, { token }),
      (response) => response.body?.data?.[0]?.status === 'succeeded',
    );
    const deliveryId = log.body.data[0].id as string;
    const detail = await call('GET', `/webhook-endpoints/${id}/deliveries/${deliveryId}`, { token });
    expect(detail.status, detail.text).to.equal(200);
    const again = await call('POST', `/webhook-endpoints/${id}/deliveries/${deliveryId}/redeliver`, {
      token,
    });
    expect(again.status, again.text).to.equal(202);
    const drilled = await call('POST', `/webhook-endpoints/${id}/drill`, { token });
    expect(drilled.status, drilled.text).to.equal(200);
    expect((await call('DELETE', `/webhook-endpoints/${id}`, { token })).status).to.equal(204);
  });

  it('documents API keys, and what a key is answered', async () => {
    const created = await call('POST', '/api-keys', { body: { name: 'docs', scopes: ['read'] }, token });
    expect(created.status, created.text).to.equal(201);
    const key = created.body as { id: string; secret: string };
    expect((await call('GET', '/api-keys?limit=5', { token })).status).to.equal(200);
    expect((await call('GET', '/accounts', { token: key.secret })).status).to.equal(200);
    const refused = await call('POST', `/account/${accountId}/deposit`, {
      body: { amount: 1, currency: 'USD' },
      token: key.secret,
    });
    expect(refused.status, refused.text).to.equal(403);
    expect((await call('POST', '/api-keys', { body: { name: '' }, token })).status).to.equal(400);
    expect((await call('DELETE', `/api-keys/${key.id}`, { token })).status).to.equal(204);
    expect((await call('DELETE', `/api-keys/${key.id}`, { token })).status).to.equal(404);
  });

  it('documents the events and their cursor pages', async () => {
    const listed = await eventually(
      () => call('GET', '/events?type=transaction.completed&limit=1', { token }),
      (response) => response.body?.data?.length === 1,
    );
    expect(listed.body).to.have.property('has_more');
    const eventId = listed.body.data[0].id as string;
    expect((await call('GET', `/events/${eventId}`, { token })).status).to.equal(200);
    const older = await call('GET', `/events?starting_after=${eventId}&created[gte]=0`, { token });
    expect(older.status, older.text).to.equal(200);
    const page = await call('GET', `/transactions?limit=1`, { token });
    const next = await call('GET', `/transactions?limit=1&starting_after=${page.body.data[0].id}`, { token });
    expect(next.status, next.text).to.equal(200);
  });

  it('documents administration, token refresh, logout and deletion', async () => {
    const admin = await call('POST', '/auth/login', {
      body: { username: system.admin.username, password: system.admin.password },
    });
    expect(admin.status, admin.text).to.equal(200);
    const other = await signUp(system.gatewayUrl);
    const locked = await call('PATCH', `/admin/users/${other.userId}/status`, {
      body: { status: 'disabled' },
      token: admin.body.token,
    });
    expect(locked.status, locked.text).to.equal(200);
    expect(
      (await call('PATCH', `/admin/users/${other.userId}/status`, { body: { status: 'active' }, token }))
        .status,
    ).to.equal(403);
    const found = await call('GET', `/admin/users?username=${other.username}`, { token: admin.body.token });
    expect(found.status, found.text).to.equal(200);
    expect(found.body.data.map((user: { id: string }) => user.id)).to.deep.equal([other.userId]);
    expect((await call('GET', '/admin/users?q=oa_', { token })).status).to.equal(403);
    const byId = await call('GET', `/admin/users?id_prefix=${other.userId.slice(0, 8)}`, {
      token: admin.body.token,
    });
    expect(byId.body.data.map((user: { id: string }) => user.id)).to.include(other.userId);
    const accounts = await call('GET', `/admin/accounts?user_id=${other.userId}`, {
      token: admin.body.token,
    });
    expect(accounts.status, accounts.text).to.equal(200);
    expect((await call('GET', `/admin/accounts?user_id=${other.userId}`, { token })).status).to.equal(403);
    const deadLetters = await call('GET', '/admin/dead-letters/ledger?limit=5', { token: admin.body.token });
    expect(deadLetters.status, deadLetters.text).to.equal(200);
    expect((await call('GET', '/admin/dead-letters/currency', { token })).status).to.equal(403);
    const replayed = await call('POST', '/admin/dead-letters/webhook-delivery/replay', {
      body: { limit: 5 },
      token: admin.body.token,
    });
    expect(replayed.status, replayed.text).to.equal(200);
    const reconciliation = await call('GET', '/admin/reconciliation?limit=5', { token: admin.body.token });
    expect(reconciliation.status, reconciliation.text).to.equal(200);
    expect((await call('GET', '/admin/reconciliation', { token })).status).to.equal(403);
    // Deposits this test paid by webhook alone were credited, and never captured at the sandbox: cases.
    const ran = await call('POST', '/admin/reconciliation/runs', { token: admin.body.token });
    expect(ran.status, ran.text).to.equal(200);
    const listed = await call('GET', '/admin/reconciliation?limit=100', { token: admin.body.token });
    const mismatch = (listed.body.data as { kind: string; id: string }[]).find(
      (item) => item.kind === 'credited_not_captured',
    );
    expect(mismatch, listed.text).to.not.equal(undefined);
    const caseId = (mismatch as { id: string }).id;
    const shown = await call('GET', `/admin/reconciliation/cases/${caseId}`, { token: admin.body.token });
    expect(shown.status, shown.text).to.equal(200);
    const decided = await call('POST', `/admin/reconciliation/cases/${caseId}/resolution`, {
      body: { decision: 'nothing_owed', reason: 'paid by an unsigned test webhook' },
      token: admin.body.token,
    });
    expect(decided.status, decided.text).to.equal(200);
    const trail = await call('GET', '/admin/actions', { token: admin.body.token });
    expect(trail.status, trail.text).to.equal(200);
    expect((await call('GET', '/admin/actions', { token })).status).to.equal(403);
    const overdrawn = await call('GET', '/admin/overdrawn-accounts?limit=5', { token: admin.body.token });
    expect(overdrawn.status, overdrawn.text).to.equal(200);
    expect((await call('GET', '/admin/overdrawn-accounts', { token })).status).to.equal(403);
    const overview = await call('GET', '/admin/overview?window=hour', { token: admin.body.token });
    expect(overview.status, overview.text).to.equal(200);
    expect((await call('GET', '/admin/overview', { token })).status).to.equal(403);
    const exposure = await call('GET', '/admin/chargeback-exposure?limit=5', { token: admin.body.token });
    expect(exposure.status, exposure.text).to.equal(200);
    expect((await call('GET', '/admin/chargeback-exposure', { token })).status).to.equal(403);
    const transactions = await call('GET', '/admin/transactions?type=deposit&limit=5', {
      token: admin.body.token,
    });
    expect(transactions.status, transactions.text).to.equal(200);
    expect((await call('GET', '/admin/transactions', { token })).status).to.equal(403);
    const timeline = await call('GET', `/admin/transactions/${depositId}/timeline`, {
      token: admin.body.token,
    });
    expect(timeline.status, timeline.text).to.equal(200);
    expect((await call('GET', `/admin/transactions/${depositId}/timeline`, { token })).status).to.equal(403);

    const leaving = await signUp(system.gatewayUrl);
    const refreshed = await call('POST', '/auth/refresh', { token: leaving.token });
    expect(refreshed.status, refreshed.text).to.equal(200);
    expect(
      (await call('DELETE', `/user/${leaving.userId}`, { token: refreshed.body.token })).status,
    ).to.equal(400);
    expect(
      (await call('DELETE', `/user/${leaving.userId}?confirm=true`, { token: refreshed.body.token })).status,
    ).to.equal(204);
    expect((await call('POST', '/auth/logout', { token })).status).to.equal(204);
    await eventually(
      () => call('GET', '/accounts', { token }),
      (response) => response.status === 401,
    );
  });

  it('exercised the success answer of every documented operation', () => {
    const paths = openapi.document.paths as Record<
      string,
      Record<string, { responses: Record<string, unknown> }>
    >;
    const missing = Object.entries(paths).flatMap(([template, item]) =>
      Object.entries(item)
        .filter(([method]) => method !== 'parameters')
        .flatMap(([method, operation]) => {
          const success = Object.keys(operation.responses).find((status) => status.startsWith('2'));
          const key = `${method.toUpperCase()} ${template} ${success}`;
          return openapi.covered.has(key) ? [] : [key];
        }),
    );
    expect(missing).to.deep.equal([]);
  });
});
