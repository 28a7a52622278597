export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

export interface ClientOperation {
  method: HttpMethod;
  /** The OpenAPI path template, without a version prefix. */
  path: string;
  /** Whether the call carries the bearer token of the client's session. */
  authenticated: boolean;
  /** The client methods that make this call, as `resource.method` paths on a client. */
  calledBy: readonly string[];
}

const call = (
  method: HttpMethod,
  path: string,
  calledBy: readonly string[],
  authenticated = true,
): ClientOperation => ({ method, path, authenticated, calledBy });
const read = (path: string, calledBy: readonly string[], authenticated = true) =>
  call('GET', path, calledBy, authenticated);
const PUBLIC = false;

/**
 * Every API operation the client makes, by the gateway's OpenAPI operationId: the requests are built from this table,
 * and a test checks it against the OpenAPI document both ways. The operations left out (probes, documentation, the
 * login alias and the providers' inbound webhooks) are listed in the README and in that test.
 */
export const OPERATIONS = {
  discoverVersions: read('/', ['discovery.versions'], PUBLIC),
  getSigningKeys: read('/.well-known/jwks.json', ['auth.signingKeys'], PUBLIC),
  login: call('POST', '/auth/login', ['auth.login'], PUBLIC),
  // Sends the token being refreshed, but never through the retry-on-401 path: a refused refresh means log in.
  refreshToken: call('POST', '/auth/refresh', ['auth.refresh'], PUBLIC),
  logout: call('POST', '/auth/logout', ['auth.logout']),

  registerUser: call('POST', '/user', ['users.register'], PUBLIC),
  getUser: read('/user/{id}', ['users.get']),
  updateUser: call('PUT', '/user/{id}', ['users.update']),
  deleteUser: call('DELETE', '/user/{id}', ['users.delete']),

  findUsers: read('/admin/users', ['admin.users.find', 'admin.users.findPage']),
  setUserStatus: call('PATCH', '/admin/users/{id}/status', ['admin.users.setStatus']),
  listDeadLetters: read('/admin/dead-letters/{queue}', ['admin.deadLetters.list']),
  replayDeadLetters: call('POST', '/admin/dead-letters/{queue}/replay', ['admin.deadLetters.replay']),
  listReconciliation: read('/admin/reconciliation', [
    'admin.reconciliation.list',
    'admin.reconciliation.listPage',
    'admin.reconciliation.csv',
  ]),
  runReconciliation: call('POST', '/admin/reconciliation/runs', ['admin.reconciliation.run']),
  getReconciliationCase: read('/admin/reconciliation/cases/{id}', ['admin.reconciliation.getCase']),
  resolveReconciliationCase: call('POST', '/admin/reconciliation/cases/{id}/resolution', [
    'admin.reconciliation.resolveCase',
  ]),
  listAdminActions: read('/admin/actions', ['admin.actions.list', 'admin.actions.listPage']),
  listOverdrawnAccounts: read('/admin/overdrawn-accounts', [
    'admin.overdrawnAccounts.list',
    'admin.overdrawnAccounts.listPage',
  ]),

  openAccount: call('POST', '/account', ['accounts.open']),
  listAccounts: read('/accounts', ['accounts.list', 'accounts.listPage']),
  getAccount: read('/account/{id}', ['accounts.get']),
  getBalance: read('/account/{id}/balance', ['balances.get', 'balances.at']),
  getStatement: read('/account/{id}/statement', ['statements.get', 'statements.entries', 'statements.csv']),
  listAccountTransactions: read('/account/{id}/transactions', [
    'transactions.history',
    'transactions.historyPage',
  ]),
  linkPayoutAccount: call('POST', '/payout-account', ['payoutAccount.link']),
  getPayoutAccount: read('/payout-account', ['payoutAccount.get']),

  deposit: call('POST', '/account/{id}/deposit', ['money.deposit']),
  withdraw: call('POST', '/account/{id}/withdraw', ['money.withdraw']),
  transfer: call('POST', '/account/{id}/transfer', ['money.transfer']),
  listTransactions: read('/transactions', ['transactions.list', 'transactions.listPage']),
  getTransaction: read('/transaction/{id}', ['transactions.get', 'transactions.waitUntilSettled']),

  listCurrencies: read('/api/currencies', ['currencies.list', 'currencies.listPage'], PUBLIC),
  listSupportedCurrencies: read('/api/currencies/supported', ['currencies.supported'], PUBLIC),
  searchCurrencies: read('/api/currencies/search', ['currencies.search'], PUBLIC),
  getCurrencyStatistics: read('/api/currencies/statistics', ['currencies.statistics'], PUBLIC),
  getDefaultCurrency: read('/api/currencies/default', ['currencies.default'], PUBLIC),
  listExchangeRates: read('/api/currencies/rates', ['rates.list'], PUBLIC),
  listRegionCurrencies: read('/api/currencies/region/{region}', ['currencies.region'], PUBLIC),
  getCurrency: read('/api/currencies/{code}', ['currencies.get'], PUBLIC),
  checkCurrencySupported: read('/api/currencies/{code}/supported', ['currencies.isSupported'], PUBLIC),
  getExchangeRate: read('/api/currencies/{from}/rate/{to}', ['rates.get'], PUBLIC),

  createWebhookEndpoint: call('POST', '/webhook-endpoints', ['webhookEndpoints.create']),
  listWebhookEndpoints: read('/webhook-endpoints', ['webhookEndpoints.list', 'webhookEndpoints.listPage']),
  getWebhookEndpoint: read('/webhook-endpoints/{id}', ['webhookEndpoints.get']),
  updateWebhookEndpoint: call('PUT', '/webhook-endpoints/{id}', ['webhookEndpoints.update']),
  deleteWebhookEndpoint: call('DELETE', '/webhook-endpoints/{id}', ['webhookEndpoints.delete']),
  rotateWebhookEndpointSecret: call('POST', '/webhook-endpoints/{id}/rotate-secret', [
    'webhookEndpoints.rotateSecret',
  ]),
  listWebhookDeliveries: read('/webhook-endpoints/{id}/deliveries', [
    'webhookEndpoints.deliveries.list',
    'webhookEndpoints.deliveries.listPage',
  ]),
  getWebhookDelivery: read('/webhook-endpoints/{id}/deliveries/{delivery_id}', [
    'webhookEndpoints.deliveries.get',
  ]),
  redeliverWebhook: call('POST', '/webhook-endpoints/{id}/deliveries/{delivery_id}/redeliver', [
    'webhookEndpoints.deliveries.redeliver',
  ]),
} as const satisfies Record<string, ClientOperation>;

export type OperationId = keyof typeof OPERATIONS;
