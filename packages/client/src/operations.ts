import {
  OPERATIONS as API_OPERATIONS,
  type OperationId as ApiOperationId,
} from '@payments/contracts/operations';

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

/**
 * The client methods that make each API operation they call, by operationId. The operations left out (probes,
 * documentation, the login alias and the providers' inbound webhooks) are listed in the README and in the test that
 * checks this table against the OpenAPI document both ways.
 */
const CALLED_BY = {
  discoverVersions: ['discovery.versions'],
  getSigningKeys: ['auth.signingKeys'],
  login: ['auth.login'],
  refreshToken: ['auth.refresh'],
  logout: ['auth.logout'],

  registerUser: ['users.register'],
  getUser: ['users.get'],
  updateUser: ['users.update'],
  deleteUser: ['users.delete'],

  findUsers: ['admin.users.find', 'admin.users.findPage'],
  setUserStatus: ['admin.users.setStatus'],
  listDeadLetters: ['admin.deadLetters.list'],
  replayDeadLetters: ['admin.deadLetters.replay'],
  listReconciliation: [
    'admin.reconciliation.list',
    'admin.reconciliation.listPage',
    'admin.reconciliation.csv',
  ],
  runReconciliation: ['admin.reconciliation.run'],
  getReconciliationCase: ['admin.reconciliation.getCase'],
  resolveReconciliationCase: ['admin.reconciliation.resolveCase'],
  listAdminActions: ['admin.actions.list', 'admin.actions.listPage'],
  listOverdrawnAccounts: ['admin.overdrawnAccounts.list', 'admin.overdrawnAccounts.listPage'],
  findAccounts: ['admin.accounts.find', 'admin.accounts.findPage'],
  getOverview: ['admin.overview.get'],
  getChargebackExposure: ['admin.chargebackExposure.get'],
  findTransactions: ['admin.transactions.find', 'admin.transactions.findPage'],
  getTransactionTimeline: ['admin.transactions.timeline'],

  createApiKey: ['apiKeys.create'],
  listApiKeys: ['apiKeys.list', 'apiKeys.listPage'],
  revokeApiKey: ['apiKeys.revoke'],

  openAccount: ['accounts.open'],
  listAccounts: ['accounts.list', 'accounts.listPage'],
  getAccount: ['accounts.get'],
  getBalance: ['balances.get', 'balances.at'],
  getStatement: ['statements.get', 'statements.entries', 'statements.csv'],
  listAccountTransactions: ['transactions.history', 'transactions.historyPage'],
  linkPayoutAccount: ['payoutAccount.link'],
  getPayoutAccount: ['payoutAccount.get'],
  replacePayoutAccount: ['payoutAccount.replace'],

  deposit: ['money.deposit'],
  withdraw: ['money.withdraw'],
  transfer: ['money.transfer'],
  listTransactions: ['transactions.list', 'transactions.listPage'],
  getTransaction: ['transactions.get', 'transactions.waitUntilSettled'],
  refundTransaction: ['transactions.refund'],

  listCurrencies: ['currencies.list', 'currencies.listPage'],
  listSupportedCurrencies: ['currencies.supported'],
  searchCurrencies: ['currencies.search'],
  getCurrencyStatistics: ['currencies.statistics'],
  getDefaultCurrency: ['currencies.default'],
  listExchangeRates: ['rates.list'],
  listRegionCurrencies: ['currencies.region'],
  getCurrency: ['currencies.get'],
  checkCurrencySupported: ['currencies.isSupported'],
  getExchangeRate: ['rates.get'],

  createWebhookEndpoint: ['webhookEndpoints.create'],
  listWebhookEndpoints: ['webhookEndpoints.list', 'webhookEndpoints.listPage'],
  getWebhookEndpoint: ['webhookEndpoints.get'],
  updateWebhookEndpoint: ['webhookEndpoints.update'],
  deleteWebhookEndpoint: ['webhookEndpoints.delete'],
  rotateWebhookEndpointSecret: ['webhookEndpoints.rotateSecret'],
  listWebhookDeliveries: ['webhookEndpoints.deliveries.list', 'webhookEndpoints.deliveries.listPage'],
  getWebhookDelivery: ['webhookEndpoints.deliveries.get'],
  redeliverWebhook: ['webhookEndpoints.deliveries.redeliver'],
  drillWebhookEndpoint: ['webhookEndpoints.drill'],

  listEvents: ['events.list', 'events.listPage'],
  getEvent: ['events.get'],
} as const satisfies Partial<Record<ApiOperationId, readonly string[]>>;

export type OperationId = keyof typeof CALLED_BY;

/**
 * Every API operation the client makes, by operationId: the method and path as the API declares them, and whether
 * the session's token goes with it. The refresh call sends the token it refreshes itself, never through the
 * retry-on-401 path (a refused refresh means log in), so it is not `authenticated`.
 */
export const OPERATIONS = Object.fromEntries(
  (Object.keys(CALLED_BY) as OperationId[]).map((operationId): [OperationId, ClientOperation] => {
    const { method, path, access } = API_OPERATIONS[operationId];
    const calledBy = CALLED_BY[operationId];
    const operation = {
      method: method.toUpperCase() as HttpMethod,
      path,
      authenticated: access === 'user',
      calledBy,
    };
    return [operationId, operation];
  }),
) as Readonly<Record<OperationId, ClientOperation>>;
