import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { createEvent, type EventData, type EventEnvelope } from '@payments/contracts';
import {
  createAmqpBus,
  createLogger,
  createMemoryBus,
  DEVELOPMENT_SERVICE_TOKEN,
  loadConfig,
  openDatabase,
  serviceAuthorization,
  type Consumer,
  type EventBus,
  type EventHandlers,
  type Knex,
  type Logger,
  type RunningService,
  type Role,
} from '@payments/service-kit';
import {
  createTestBroker,
  createTestDatabase,
  eventually,
  startTestIssuer,
  useStarted,
  type Started,
  type TestBroker,
} from '@payments/testkit';
import { migrations } from '../../src/data/migrations.js';
import { isUuid } from '../../src/domain/identifiers.js';
import { LedgerConfigSchema, startLedger } from '../../src/index.js';
import type { PaymentProvider } from '../../src/provider/payment-provider.js';
import { startCurrencyStub } from './currency-stub.js';

export interface ApiResponse {
  status: number;
  headers: Headers;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- response bodies are asserted field by field
  body: any;
  /** The raw body, for answers that are not JSON (CSV statements). */
  text: string;
}

export interface TestUser {
  id: string;
  token: string;
}

export interface HarnessOptions {
  /** The in-memory bus (default) or a uuid-namespaced slice of the real RabbitMQ. */
  transport?: 'memory' | 'amqp';
  /** Ledger processes sharing the database and the queue (competing consumers). */
  instances?: number;
  /** Extra ledger configuration, as environment variables. */
  env?: Record<string, string>;
  /** Stands between the ledgers and the memory bus, e.g. to fail or stall what their outbox relays publish. */
  wrapBus?: (bus: EventBus) => EventBus;
  /**
   * Whether a provider sandbox is deployed (default true): its queue exists and `recordProviderRequests` reads it.
   * False: no queue is bound to the ledger's deposit and payout requests, as in production.
   */
  sandbox?: boolean;
  /** The ledgers' logger (default: silent, or LEDGER_TEST_LOG_LEVEL). */
  logger?: Logger;
  /** The payment provider the ledgers ask for each deposit (default: none is asked). */
  provider?: PaymentProvider;
}

export interface LedgerHarness {
  url: string;
  urls: string[];
  /** The bus the tests publish to and consume from (the ledgers' own one in memory mode). */
  bus: EventBus;
  newUser(role?: Role): TestUser;
  issueToken(claims: { sub: string; role?: Role; jti?: string; expiresIn?: number }): string;
  call(
    method: string,
    path: string,
    options?: { user?: TestUser; body?: unknown; headers?: Record<string, string>; base?: string },
  ): Promise<ApiResponse>;
  openAccount(user: TestUser, currency?: string): Promise<{ id: string; currency: string }>;
  deposit(
    user: TestUser,
    accountId: string,
    amount: number | string,
    currency?: string,
  ): Promise<ApiResponse>;
  withdraw(user: TestUser, accountId: string, amount: number, currency?: string): Promise<ApiResponse>;
  transfer(
    user: TestUser,
    accountId: string,
    toAccountId: string,
    amount: number,
    currency?: string,
  ): Promise<ApiResponse>;
  /** Publishes a PaymentProcessed for a transaction, as webhook-ingest would; returns the event id. */
  confirm(
    transactionId: string,
    status?: 'completed' | 'failed',
    extra?: Partial<EventData<'PaymentProcessed'>>,
    eventId?: string,
  ): Promise<string>;
  /** Publishes a PaymentAdjusted (a refund or dispute) for a deposit, as webhook-ingest would; returns the event id. */
  adjust(
    transactionId: string,
    adjustment: EventData<'PaymentAdjusted'>['adjustment'],
    amount: number,
    options?: { reference?: string; currency?: string; eventId?: string },
  ): Promise<string>;
  /** Deposits and confirms, then waits until the balance shows it. */
  fund(user: TestUser, accountId: string, amount: number, currency?: string): Promise<void>;
  balanceOf(user: TestUser, accountId: string): Promise<{ balance: number; available_balance: number }>;
  waitForStatus(
    user: TestUser,
    transactionId: string,
    status: string,
    timeoutMs?: number,
  ): Promise<ApiResponse>;
  audit(): Promise<{ ok: boolean } & Record<string, unknown>>;
  /** Stands in for the payment provider: collects what the ledger asks it to do, into `requests`. */
  recordProviderRequests(
    type: 'WithdrawalRequested',
    requests: EventEnvelope<'WithdrawalRequested'>[],
  ): Promise<Consumer>;
  databaseUrl: string;
  /** The broker namespace of the `amqp` transport (null in memory). */
  broker: TestBroker | null;
  /** The ledger's database, for tests that look at or tamper with its rows. */
  db: Knex;
  stop(): Promise<void>;
}

export async function startLedgerHarness(options: HarnessOptions = {}): Promise<LedgerHarness> {
  const logLevel = process.env.LEDGER_TEST_LOG_LEVEL ?? 'silent';
  const logger = options.logger ?? createLogger('ledger-test', logLevel);
  const [database, issuer, currencies] = await Promise.all([
    createTestDatabase('ledger', { roles: true }),
    startTestIssuer(),
    startCurrencyStub(),
  ]);
  let broker: TestBroker | null = null;
  let bus: EventBus;
  const deployment = { sandbox: options.sandbox ?? true };
  if (options.transport === 'amqp') {
    broker = await createTestBroker();
    // Declares the topology (the sandbox's queue too where deployed) before the ledger checks it.
    const client = createAmqpBus({ url: broker.url, namespace: broker.namespace, logger, deployment });
    await client.start();
    bus = client;
  } else {
    bus = createMemoryBus(logger, { deployment });
  }
  const config = loadConfig(LedgerConfigSchema, {
    PORT: '0',
    LOG_LEVEL: logLevel,
    NODE_ENV: 'test',
    // As deployed: migrated as the database's owner, run as a role that owns nothing (the test's own handle `db`
    // is the superuser's).
    DATABASE_URL: database.roles?.runtimeUrl,
    MIGRATION_DATABASE_URL: database.roles?.ownerUrl,
    JWKS_URL: issuer.jwksUrl,
    // Where the ledger loads the revocations in force; it refuses tokens with 503 until it has.
    IDENTITY_URL: issuer.identityUrl,
    JWT_ISSUER: issuer.issuer,
    JWT_AUDIENCE: issuer.audience,
    CURRENCY_URL: currencies.url,
    ...(broker ? { AMQP_URL: broker.url, AMQP_NAMESPACE: broker.namespace } : {}),
    ...options.env,
  });
  const services: RunningService[] = [];
  for (let i = 0; i < (options.instances ?? 1); i += 1) {
    const ledgerBus = options.wrapBus ? options.wrapBus(bus) : bus;
    const provider = options.provider;
    services.push(
      await startLedger(config, broker ? { logger, provider } : { bus: ledgerBus, logger, provider }),
    );
  }
  const url = (services[0] as RunningService).url;
  const db = await openDatabase({ url: database.url, migrations, logger });

  const call: LedgerHarness['call'] = async (method, path, { user, body, headers = {}, base = url } = {}) => {
    const response = await fetch(`${base}${path}`, {
      method,
      headers: {
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        ...(user ? { authorization: `Bearer ${user.token}` } : {}),
        // Internal endpoints answer only other services (the ledger here runs with the development token).
        ...(path.startsWith('/internal/') ? serviceAuthorization(DEVELOPMENT_SERVICE_TOKEN) : {}),
        ...headers,
      },
      body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
    });
    const text = await response.text();
    const json = /json/.test(response.headers.get('content-type') ?? '');
    return {
      status: response.status,
      headers: response.headers,
      body: text && json ? JSON.parse(text) : null,
      text,
    };
  };

  const harness: LedgerHarness = {
    url,
    urls: services.map((s) => s.url),
    bus,
    broker,
    databaseUrl: database.roles?.runtimeUrl as string,
    db,
    issueToken: (claims) => issuer.issue(claims),
    newUser(role = 'user') {
      const id = randomUUID();
      return { id, token: issuer.issue({ sub: id, role }) };
    },
    call,
    async openAccount(user, currency = 'USD') {
      const response = await call('POST', '/account', { user, body: { currency } });
      if (response.status !== 201)
        throw new Error(`could not open an account: ${JSON.stringify(response.body)}`);
      return response.body;
    },
    recordProviderRequests: (type, requests) =>
      bus.consume('provider-sandbox', {
        [type]: async (event: EventEnvelope<typeof type>) => {
          requests.push(event);
        },
      } as EventHandlers),
    deposit: (user, accountId, amount, currency = 'USD') =>
      call('POST', `/account/${accountId}/deposit`, { user, body: { amount, currency } }),
    withdraw: (user, accountId, amount, currency = 'USD') =>
      call('POST', `/account/${accountId}/withdraw`, { user, body: { amount, currency } }),
    transfer: (user, accountId, toAccountId, amount, currency = 'USD') =>
      call('POST', `/account/${accountId}/transfer`, {
        user,
        body: { to_account_id: toAccountId, amount, currency },
      }),
    async confirm(transactionId, status = 'completed', extra = {}, eventId = randomUUID()) {
      // Like webhook-ingest, say what was paid: the ledger credits nothing on a confirmation without it.
      const paid = isUuid(transactionId)
        ? await db('transactions').where({ id: transactionId }).first('amount', 'currency')
        : undefined;
      const event = createEvent(
        'PaymentProcessed',
        {
          transaction_id: transactionId,
          payment_id: transactionId,
          status,
          // SPEC's payment webhooks name the transaction; a provider's reference comes in a provider event.
          source: isUuid(transactionId) ? 'payment' : 'provider',
          ...(paid && { amount: Number(paid.amount), currency: paid.currency }),
          ...extra,
        },
        { id: eventId, correlationId: `test-${eventId}` },
      );
      await bus.publish(event);
      return eventId;
    },
    async adjust(transactionId, adjustment, amount, options = {}) {
      const eventId = options.eventId ?? randomUUID();
      const event = createEvent(
        'PaymentAdjusted',
        {
          transaction_id: transactionId,
          adjustment,
          amount,
          currency: options.currency ?? 'USD',
          reference: options.reference ?? `ch_${transactionId}`,
          provider_event_id: `evt_${eventId}`,
          provider_event_type: adjustment === 'refund' ? 'charge.refunded' : 'charge.dispute.created',
        },
        { id: eventId, correlationId: `test-${eventId}` },
      );
      await bus.publish(event);
      return eventId;
    },
    async fund(user, accountId, amount, currency = 'USD') {
      const before = await harness.balanceOf(user, accountId);
      const deposit = await harness.deposit(user, accountId, amount, currency);
      if (deposit.status !== 202) throw new Error(`deposit refused: ${JSON.stringify(deposit.body)}`);
      // With a provider, its payment is made before anything confirms it, as with a real webhook: a deposit that
      // ended before the provider was asked has no payment there.
      if (options.provider)
        await eventually(
          () => db('provider_payments').where({ transaction_id: deposit.body.id }).first('state'),
          (row) => row !== undefined && row.state !== 'requested',
          { what: `the provider's payment for the funding deposit ${deposit.body.id}` },
        );
      await harness.confirm(deposit.body.id);
      await harness.waitForStatus(user, deposit.body.id, 'completed');
      const after = await harness.balanceOf(user, accountId);
      if (after.balance <= before.balance) throw new Error('the funding deposit did not credit the account');
    },
    async balanceOf(user, accountId) {
      const response = await call('GET', `/account/${accountId}/balance`, { user });
      if (response.status !== 200) throw new Error(`no balance: ${JSON.stringify(response.body)}`);
      return response.body;
    },
    async waitForStatus(user, transactionId, status, timeoutMs = 10_000) {
      const response = await eventually(
        () => call('GET', `/transaction/${transactionId}`, { user }),
        (r) => r.body?.status === status,
        { timeoutMs },
      );
      if (response.body?.status !== status) {
        throw new Error(`transaction ${transactionId} is ${response.body?.status}, not ${status}`);
      }
      return response;
    },
    async audit() {
      const response = await call('GET', '/internal/audit');
      return response.body;
    },
    async stop() {
      for (const service of services) await service.stop();
      await db.destroy();
      await bus.close();
      await Promise.allSettled([database.drop(), issuer.close(), currencies.close(), broker?.cleanup()]);
    },
  };
  return harness;
}

/**
 * A ledger harness for the enclosing `describe` (the test kit's `useStarted`): started before its first test,
 * stopped after its last, once `beforeStop` has ended what the suite made against it; with `booksBalance`, the
 * ledger's audit must pass after each test.
 */
export function useLedgerHarness(
  options: HarnessOptions = {},
  fixture: { booksBalance?: boolean; beforeStop?: () => unknown } = {},
): Started<LedgerHarness> {
  return useStarted(() => startLedgerHarness(options), {
    ...(fixture.booksBalance && {
      afterEach: async (ledger: LedgerHarness) => expect(await ledger.audit()).to.include({ ok: true }),
    }),
    ...(fixture.beforeStop && { beforeStop: fixture.beforeStop }),
  });
}

/** A new user with an account in USD holding `funds` (deposited and confirmed), and a linked payout account if asked. */
export async function aCustomer(
  ledger: LedgerHarness,
  { funds = 100, payoutAccount = false }: { funds?: number; payoutAccount?: boolean } = {},
): Promise<{ user: TestUser; account: { id: string; currency: string } }> {
  const user = ledger.newUser();
  const account = await ledger.openAccount(user);
  if (funds > 0) await ledger.fund(user, account.id, funds);
  if (payoutAccount) expect((await ledger.call('POST', '/payout-account', { user })).status).to.equal(201);
  return { user, account };
}
