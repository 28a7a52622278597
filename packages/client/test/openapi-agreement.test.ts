import { expect } from 'chai';
import { buildOpenApiDocument } from '../../../gateway/src/openapi/openapi-document.js';
import {
  ConnectionError,
  createPaymentsClient,
  OPERATIONS,
  verifyWebhookEvent,
  type OperationId,
  type PaymentsClient,
} from '../src/index.js';

/**
 * The operations of the OpenAPI document that are not an integrator's to call, each with the reason. A new
 * operation in the document is either given a client method or added here with its reason: it cannot go unnoticed.
 */
const NOT_IN_THE_CLIENT: Record<string, string> = {
  checkHealth: 'a liveness probe for the platform',
  checkReadiness: 'a readiness probe, behind the deployment’s SERVICE_TOKEN',
  getMetrics: 'Prometheus metrics, behind the deployment’s SERVICE_TOKEN',
  getOpenApiDocument: 'the description of the API itself, for tools',
  getApiDocumentation: 'an HTML page for people',
  loginAlias: 'POST /login is POST /auth/login under another path; the client uses auth.login',
  confirmPayment: 'inbound webhook that only a payment provider calls',
  reportPaymentStatus: 'inbound webhook that only a payment provider calls (signed X-Webhook-Signature)',
  receiveProviderEvent: 'inbound webhook that only a payment provider calls (signed Provider-Signature)',
};

const ID = '00000000-0000-4000-8000-000000000001';
const OTHER_ID = '00000000-0000-4000-8000-000000000002';
/** The value each path parameter gets in the calls below. */
const PARAMS: Record<string, string> = {
  queue: 'ledger',
  id: ID,
  delivery_id: OTHER_ID,
  code: 'CHF',
  region: 'europe',
  from: 'USD',
  to: 'EUR',
};

type Call = (client: PaymentsClient<'1.1'>) => unknown;
const first = (iterable: AsyncIterable<unknown>) => iterable[Symbol.asyncIterator]().next();

/** One call of every client method, with arguments of the right type; the fake fetch below records the request. */
const CALLS: Record<string, Call> = {
  'discovery.versions': (c) => c.discovery.versions(),
  'auth.signingKeys': (c) => c.auth.signingKeys(),
  'auth.login': (c) => c.auth.login({ username: 'someone', password: 'a password' }),
  'auth.refresh': (c) => c.auth.refresh(),
  'auth.logout': (c) => c.auth.logout(),
  'users.register': (c) =>
    c.users.register({ username: 'someone', email: 'a@example.com', password: 'password1' }),
  'users.get': (c) => c.users.get(ID),
  'users.update': (c) => c.users.update(ID, { username: 'someone_else' }, { ifMatch: '"v1"' }),
  'users.delete': (c) => c.users.delete(ID, { confirm: true }),
  'admin.users.setStatus': (c) => c.admin.users.setStatus(ID, { status: 'disabled' }),
  'admin.users.find': (c) => first(c.admin.users.find({ q: 'some' })),
  'admin.users.findPage': (c) => c.admin.users.findPage({ status: 'locked' }),
  'admin.deadLetters.list': (c) => c.admin.deadLetters.list('ledger', { limit: 10 }),
  'admin.deadLetters.replay': (c) => c.admin.deadLetters.replay('ledger', { limit: 1 }),
  'admin.reconciliation.list': (c) => first(c.admin.reconciliation.list()),
  'admin.reconciliation.listPage': (c) => c.admin.reconciliation.listPage({ limit: 5 }),
  'admin.reconciliation.csv': (c) => c.admin.reconciliation.csv(),
  'admin.reconciliation.run': (c) => c.admin.reconciliation.run(),
  'admin.reconciliation.getCase': (c) => c.admin.reconciliation.getCase(ID),
  'admin.reconciliation.resolveCase': (c) =>
    c.admin.reconciliation.resolveCase(ID, { decision: 'nothing_owed', reason: 'a test payment' }),
  'admin.actions.list': (c) => first(c.admin.actions.list()),
  'admin.actions.listPage': (c) => c.admin.actions.listPage(),
  'admin.overdrawnAccounts.list': (c) => first(c.admin.overdrawnAccounts.list()),
  'admin.overdrawnAccounts.listPage': (c) => c.admin.overdrawnAccounts.listPage(),
  'admin.accounts.find': (c) => first(c.admin.accounts.find({ user_id: ID })),
  'admin.accounts.findPage': (c) => c.admin.accounts.findPage({ user_id: ID }),
  'admin.overview.get': (c) => c.admin.overview.get({ window: 'day' }),
  'admin.chargebackExposure.get': (c) => c.admin.chargebackExposure.get({ limit: 5, currency: 'USD' }),
  'admin.transactions.find': (c) =>
    first(c.admin.transactions.find({ status: 'pending', metadata: { order: '8812' } })),
  'admin.transactions.findPage': (c) =>
    c.admin.transactions.findPage({ currency: 'USD', amount_min: '10.50', q: 'pi_3Q' }),
  'admin.transactions.timeline': (c) => c.admin.transactions.timeline(ID),
  'accounts.open': (c) => c.accounts.open({ currency: 'USD' }),
  'accounts.list': (c) => first(c.accounts.list()),
  'accounts.listPage': (c) => c.accounts.listPage(),
  'accounts.get': (c) => c.accounts.get(ID),
  'balances.get': (c) => c.balances.get(ID),
  'balances.at': (c) => c.balances.at(ID, new Date()),
  'statements.get': (c) => c.statements.get(ID),
  'statements.entries': (c) => first(c.statements.entries(ID)),
  'statements.csv': (c) => c.statements.csv(ID),
  'transactions.history': (c) => first(c.transactions.history(ID)),
  'transactions.historyPage': (c) => c.transactions.historyPage(ID),
  'payoutAccount.link': (c) => c.payoutAccount.link(),
  'payoutAccount.get': (c) => c.payoutAccount.get(),
  'payoutAccount.replace': (c) => c.payoutAccount.replace({ replaces: 'acct_1' }),
  'money.deposit': (c) => c.money.deposit(ID, { amount: '1.00', currency: 'USD' }),
  'money.withdraw': (c) => c.money.withdraw(ID, { amount: '1.00', currency: 'USD' }),
  'money.transfer': (c) => c.money.transfer(ID, { amount: '1.00', currency: 'USD', to_account_id: OTHER_ID }),
  'transactions.list': (c) => first(c.transactions.list()),
  'transactions.listPage': (c) => c.transactions.listPage(),
  'transactions.get': (c) => c.transactions.get(ID),
  'transactions.waitUntilSettled': (c) => c.transactions.waitUntilSettled(ID),
  'transactions.refund': (c) => c.transactions.refund(ID, { amount: '1.00', reason: 'duplicate' }),
  'currencies.list': (c) => first(c.currencies.list()),
  'currencies.listPage': (c) => c.currencies.listPage(),
  'currencies.supported': (c) => c.currencies.supported(),
  'currencies.search': (c) => c.currencies.search('franc'),
  'currencies.statistics': (c) => c.currencies.statistics(),
  'currencies.default': (c) => c.currencies.default(),
  'currencies.region': (c) => c.currencies.region('europe'),
  'currencies.get': (c) => c.currencies.get('CHF'),
  'currencies.isSupported': (c) => c.currencies.isSupported('CHF'),
  'rates.list': (c) => c.rates.list({ base: 'USD' }),
  'rates.get': (c) => c.rates.get('USD', 'EUR'),
  'apiKeys.create': (c) => c.apiKeys.create({ name: 'server', scopes: ['read'] }),
  'apiKeys.list': (c) => first(c.apiKeys.list()),
  'apiKeys.listPage': (c) => c.apiKeys.listPage(),
  'apiKeys.revoke': (c) => c.apiKeys.revoke(ID),
  'webhookEndpoints.create': (c) =>
    c.webhookEndpoints.create({ url: 'https://example.com/hooks', events: ['transaction.completed'] }),
  'webhookEndpoints.list': (c) => first(c.webhookEndpoints.list()),
  'webhookEndpoints.listPage': (c) => c.webhookEndpoints.listPage(),
  'webhookEndpoints.get': (c) => c.webhookEndpoints.get(ID),
  'webhookEndpoints.update': (c) => c.webhookEndpoints.update(ID, { enabled: false }),
  'webhookEndpoints.delete': (c) => c.webhookEndpoints.delete(ID),
  'webhookEndpoints.rotateSecret': (c) => c.webhookEndpoints.rotateSecret(ID),
  'webhookEndpoints.drill': (c) => c.webhookEndpoints.drill(ID),
  'webhookEndpoints.deliveries.list': (c) => first(c.webhookEndpoints.deliveries.list(ID)),
  'webhookEndpoints.deliveries.listPage': (c) => c.webhookEndpoints.deliveries.listPage(ID),
  'webhookEndpoints.deliveries.get': (c) => c.webhookEndpoints.deliveries.get(ID, OTHER_ID),
  'webhookEndpoints.deliveries.redeliver': (c) => c.webhookEndpoints.deliveries.redeliver(ID, OTHER_ID),
  'events.list': (c) => first(c.events.list({ type: 'transaction.completed', created: { gte: 1 } })),
  'events.listPage': (c) => c.events.listPage({ limit: 5 }),
  'events.get': (c) => c.events.get(ID),
};

interface DocumentOperation {
  operationId: string;
  method: string;
  path: string;
}

function documentOperations(): DocumentOperation[] {
  const paths = buildOpenApiDocument().paths as Record<string, Record<string, { operationId?: string }>>;
  return Object.entries(paths).flatMap(([path, item]) =>
    Object.entries(item)
      .filter(([, operation]) => typeof operation.operationId === 'string')
      .map(([method, operation]) => ({
        operationId: operation.operationId as string,
        method: method.toUpperCase(),
        path,
      })),
  );
}

/** The request a client method makes, recorded by a fetch that answers nothing (so the call fails after it). */
async function requestOf(call: Call): Promise<{ method: string; path: string }> {
  const made: { method: string; url: string }[] = [];
  const client = createPaymentsClient({
    baseUrl: 'http://api.invalid',
    apiVersion: '1.1',
    token: 'a.token.held',
    maxRetries: 0,
    fetch: async (url, init) => {
      made.push({ method: init?.method ?? 'GET', url: String(url) });
      throw new TypeError('no network in this test');
    },
  });
  await Promise.resolve(call(client)).then(
    () => expect.fail('a call with no network succeeded'),
    (error: unknown) => expect(error).to.be.instanceOf(ConnectionError),
  );
  expect(made, 'requests made by one call').to.have.length(1);
  const { method, url } = made[0] as { method: string; url: string };
  const { pathname } = new URL(url);
  expect(pathname.startsWith('/v1.1/') || pathname === '/v1.1').to.equal(true);
  return { method, path: pathname.slice('/v1.1'.length) || '/' };
}

const concrete = (template: string) =>
  template.replace(/\{([^}]+)\}/g, (_, name: string) => encodeURIComponent(PARAMS[name] as string));

describe('the client and the OpenAPI document agree', () => {
  const documented = documentOperations();
  const clientOperations = Object.entries(OPERATIONS) as [OperationId, (typeof OPERATIONS)[OperationId]][];

  it('has a client operation for every operation in the document but the ones listed as not the client’s', () => {
    const missing = documented
      .filter(({ operationId }) => !(operationId in OPERATIONS) && !(operationId in NOT_IN_THE_CLIENT))
      .map(({ operationId, method, path }) => `${operationId} (${method} ${path})`);
    expect(missing, 'operations with neither a client method nor a reason to have none').to.deep.equal([]);
  });

  it('lists as excluded only operations that exist and that the client does not make', () => {
    const ids = new Set(documented.map(({ operationId }) => operationId));
    for (const excluded of Object.keys(NOT_IN_THE_CLIENT)) {
      expect(ids.has(excluded), `${excluded} is in the document`).to.equal(true);
      expect(excluded in OPERATIONS, `${excluded} is excluded yet in the client`).to.equal(false);
    }
  });

  it('makes each of its operations with the method and path the document gives that operationId', () => {
    for (const [operationId, operation] of clientOperations) {
      const inDocument = documented.find((candidate) => candidate.operationId === operationId);
      expect(inDocument, `${operationId} is in the document`).to.not.equal(undefined);
      expect({ method: operation.method, path: operation.path }, operationId).to.deep.equal({
        method: inDocument?.method,
        path: inDocument?.path,
      });
    }
  });

  it('has each method the table names, and each method sends the request of its operation', async () => {
    const named = clientOperations.flatMap(([operationId, operation]) =>
      operation.calledBy.map((method) => ({ operationId, operation, method })),
    );
    expect(named.map(({ method }) => method).sort(), 'the methods called above').to.deep.equal(
      Object.keys(CALLS).sort(),
    );
    const client = createPaymentsClient({ baseUrl: 'http://api.invalid' }) as unknown as Record<
      string,
      unknown
    >;
    for (const { operationId, operation, method } of named) {
      const found = method
        .split('.')
        .reduce<unknown>((at, key) => (at as Record<string, unknown>)?.[key], client);
      expect(typeof found, `client.${method}`).to.equal('function');
      const request = await requestOf(CALLS[method] as Call);
      expect(request, `client.${method} calls ${operationId}`).to.deep.equal({
        method: operation.method,
        path: concrete(operation.path),
      });
    }
  });

  it('has the counterpart of the outgoing webhook the document describes: verifyWebhookEvent', () => {
    const webhooks = buildOpenApiDocument().webhooks as Record<string, { post?: { operationId?: string } }>;
    expect(Object.values(webhooks).map((item) => item.post?.operationId)).to.deep.equal(['receiveEvent']);
    expect(verifyWebhookEvent).to.be.a('function');
  });
});
