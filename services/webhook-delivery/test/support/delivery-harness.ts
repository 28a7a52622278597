import { randomUUID } from 'node:crypto';
import { createEvent, type AnyEvent, type EventData, type EventType } from '@payments/contracts';
import {
  createAmqpBus,
  createLogger,
  createMemoryBus,
  DEVELOPMENT_SERVICE_TOKEN,
  loadConfig,
  openDatabase,
  serviceAuthorization,
  type EventBus,
  type Knex,
  type RunningService,
  type Role,
} from '@payments/service-kit';
import {
  createTestBroker,
  createTestDatabase,
  startTestIssuer,
  type TestBroker,
  startTestReceiver,
  type TestReceiver,
} from '@payments/testkit';
import { migrations } from '../../src/data/migrations.js';
import type { Resolver } from '../../src/delivery/address-guard.js';
import { startWebhookDelivery, WebhookDeliveryConfigSchema } from '../../src/index.js';
import { startOwnerStub, type OwnerStub } from './owner-stub.js';

export interface ApiResponse {
  status: number;
  headers: Headers;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- response bodies are asserted field by field
  body: any;
}

export interface TestUser {
  id: string;
  token: string;
}

export interface DeliveryHarness {
  url: string;
  bus: EventBus;
  db: Knex;
  receiver: TestReceiver;
  owners: OwnerStub;
  databaseUrl: string;
  broker: TestBroker | null;
  /** The environment a separate process of the service needs to join this one (same database and queue). */
  env: Record<string, string>;
  newUser(role?: Role): TestUser;
  call(
    method: string,
    path: string,
    options?: { user?: TestUser; body?: unknown; headers?: Record<string, string> },
  ): Promise<ApiResponse>;
  /** Registers an endpoint on the receiver at `path`; returns the endpoint with its secret. */
  register(
    user: TestUser,
    path: string,
    events?: string[],
  ): Promise<{ id: string; secret: string; url: string }>;
  publish<T extends EventType>(type: T, data: EventData<T>, id?: string): Promise<AnyEvent>;
  stop(): Promise<void>;
}

export interface DeliveryHarnessOptions {
  transport?: 'memory' | 'amqp';
  env?: Record<string, string>;
  resolve?: Resolver;
  /** Start no service in this process (a child process runs it). */
  noService?: boolean;
}

export async function startDeliveryHarness(options: DeliveryHarnessOptions = {}): Promise<DeliveryHarness> {
  const logLevel = process.env.DELIVERY_TEST_LOG_LEVEL ?? 'silent';
  const logger = createLogger('webhook-delivery-test', logLevel);
  const [database, issuer, owners, receiver] = await Promise.all([
    createTestDatabase('webhook_delivery'),
    startTestIssuer(),
    startOwnerStub(),
    startTestReceiver(),
  ]);
  let broker: TestBroker | null = null;
  let bus: EventBus;
  if (options.transport === 'amqp') {
    broker = await createTestBroker();
    const client = createAmqpBus({ url: broker.url, namespace: broker.namespace, logger });
    await client.start();
    bus = client;
  } else {
    bus = createMemoryBus(logger);
  }
  const env: Record<string, string> = {
    PORT: '0',
    LOG_LEVEL: logLevel,
    NODE_ENV: 'test',
    DATABASE_URL: database.url,
    JWKS_URL: issuer.jwksUrl,
    IDENTITY_URL: owners.url,
    LEDGER_URL: owners.url,
    JWT_ISSUER: issuer.issuer,
    JWT_AUDIENCE: issuer.audience,
    WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
    DELIVERY_BACKOFF_BASE_MS: '40',
    DELIVERY_BACKOFF_MAX_MS: '400',
    DELIVERY_POLL_INTERVAL_MS: '50',
    DELIVERY_TIMEOUT_MS: '2000',
    ...(broker ? { AMQP_URL: broker.url, AMQP_NAMESPACE: broker.namespace } : {}),
    ...options.env,
  };
  const service: RunningService | null = options.noService
    ? null
    : await startWebhookDelivery(loadConfig(WebhookDeliveryConfigSchema, env), {
        logger,
        ...(broker ? {} : { bus }),
        resolve: options.resolve,
      });
  const db = await openDatabase({ url: database.url, migrations, logger });
  const url = service?.url ?? '';

  const call: DeliveryHarness['call'] = async (method, path, { user, body, headers = {} } = {}) => {
    const response = await fetch(`${url}${path}`, {
      method,
      headers: {
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        ...(user ? { authorization: `Bearer ${user.token}` } : {}),
        ...(path === '/metrics' ? serviceAuthorization(DEVELOPMENT_SERVICE_TOKEN) : {}),
        ...headers,
      },
      body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
    });
    const text = await response.text();
    let parsed: unknown = text;
    try {
      parsed = text ? JSON.parse(text) : null;
    } catch {
      // /metrics is text
    }
    return { status: response.status, headers: response.headers, body: parsed };
  };

  return {
    url,
    bus,
    db,
    receiver,
    owners,
    databaseUrl: database.url,
    broker,
    env,
    newUser(role = 'user') {
      const id = randomUUID();
      return { id, token: issuer.issue({ sub: id, role }) };
    },
    call,
    async register(user, path, events = ['transaction.completed']) {
      const response = await call('POST', '/webhook-endpoints', {
        user,
        body: { url: `${receiver.url}${path}`, events },
      });
      if (response.status !== 201) throw new Error(`could not register: ${JSON.stringify(response.body)}`);
      return response.body;
    },
    async publish(type, data, id = randomUUID()) {
      const event = createEvent(type, data, { id, correlationId: `test-${id}` }) as AnyEvent;
      await bus.publish(event);
      return event;
    },
    async stop() {
      await service?.stop();
      await db.destroy();
      await bus.close();
      await Promise.allSettled([
        database.drop(),
        issuer.close(),
        owners.close(),
        receiver.close(),
        broker?.cleanup(),
      ]);
    },
  };
}

/** A TransactionCompleted for `userId`, as the ledger publishes it. */
export function completedDeposit(userId: string): EventData<'TransactionCompleted'> {
  return {
    transaction_id: randomUUID(),
    account_id: randomUUID(),
    user_id: userId,
    type: 'deposit',
    amount: 1234,
    currency: 'USD',
  };
}
