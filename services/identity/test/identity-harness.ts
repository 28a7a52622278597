import { createServer, type Server } from 'node:http';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  createLogger,
  createMemoryBus,
  DEVELOPMENT_SERVICE_TOKEN,
  loadConfig,
  type EventBus,
  type RunningService,
} from '@payments/service-kit';
import { expect } from 'chai';
import type { AnyEvent } from '@payments/contracts';
import { createTestDatabase, useStarted, type Started, type TestDatabase } from '@payments/testkit';
import { IdentityConfigSchema, startIdentity, type IdentityConfig } from '../src/index.js';
import { developmentKeyPath } from '../src/data/signing-key-files.js';

/** Stands in for the ledger's user removal: a refusal detail answers 422, `null` answers 500, else 200. */
export interface FakeLedger {
  url: string;
  refusals: Map<string, string | null>;
  /** User ids the ledger was asked to remove, in order. */
  removals: string[];
  close(): Promise<void>;
}

export async function startFakeLedger(): Promise<FakeLedger> {
  const refusals = new Map<string, string | null>();
  const removals: string[] = [];
  const server: Server = createServer((req, res) => {
    if (req.headers.authorization !== `Bearer ${DEVELOPMENT_SERVICE_TOKEN}`) {
      res.writeHead(401, { 'content-type': 'application/json' }).end('{}');
      return;
    }
    const match = req.method === 'POST' ? /^\/internal\/users\/([^/]+)\/removal$/.exec(req.url ?? '') : null;
    const userId = match?.[1] as string;
    const refusal = refusals.get(userId);
    const answer = (status: number, body: unknown) =>
      res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    if (!match) return answer(404, {});
    removals.push(userId);
    if (refusal === null) return answer(500, {});
    if (refusal !== undefined) return answer(422, { code: 'BUSINESS_RULE_VIOLATION', detail: refusal });
    return answer(200, { user_id: userId, accounts: 0, transactions: 0 });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    refusals,
    removals,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

export interface JsonResponse<T = Record<string, unknown>> {
  status: number;
  headers: Headers;
  body: T;
}

/** A throttle's refusal: 429 RATE_LIMIT_EXCEEDED, with a Retry-After no longer than the 15-minute window. */
export function expectRateLimited(answer: JsonResponse): void {
  expect(answer.status).to.equal(429);
  expect(answer.body.code).to.equal('RATE_LIMIT_EXCEEDED');
  expect(Number(answer.headers.get('retry-after'))).to.be.within(1, 900);
}

export interface IdentityHarness {
  url: string;
  config: IdentityConfig;
  bus: EventBus;
  ledger: FakeLedger;
  /** Every event identity published, in order (through its outbox and the memory bus). */
  published: AnyEvent[];
  signingKeyPem(): Promise<string>;
  request<T = Record<string, unknown>>(
    method: string,
    path: string,
    options?: { body?: unknown; token?: string; headers?: Record<string, string> },
  ): Promise<JsonResponse<T>>;
  register(name: string, password?: string): Promise<{ id: string; username: string; email: string }>;
  login(identity: string, password?: string, address?: string): Promise<string>;
  /** Stops the service and starts it again on the same database and key, as a deploy would. */
  restart(): Promise<void>;
  stop(): Promise<void>;
}

export const PASSWORD = 'correct horse battery';

/** A harness whose identity created an admin at start (ADMIN_USERNAME…), and that admin's token. */
export async function startIdentityHarnessWithAdmin(
  username: string,
): Promise<{ identity: IdentityHarness; adminToken: string }> {
  const admin = { username, email: `${username}@example.com`, password: 'admin password 1' };
  const identity = await startIdentityHarness({
    ADMIN_USERNAME: admin.username,
    ADMIN_EMAIL: admin.email,
    ADMIN_PASSWORD: admin.password,
  });
  return { identity, adminToken: await identity.login(admin.username, admin.password) };
}

/** An identity harness for the suite: started before its tests with `env` over the defaults, stopped after. */
export function useIdentityHarness(env: Record<string, string> = {}): Started<IdentityHarness> {
  return useStarted(() => startIdentityHarness(env));
}

export async function startIdentityHarness(env: Record<string, string> = {}): Promise<IdentityHarness> {
  const database: TestDatabase = await createTestDatabase('identity');
  const dataDir = await mkdtemp(join(tmpdir(), 'identity-test-'));
  const ledger = await startFakeLedger();
  const logger = createLogger('identity', 'silent');
  const bus = createMemoryBus(logger);
  const published: AnyEvent[] = [];
  const record = async (event: AnyEvent) => {
    published.push(event);
  };
  await bus.broadcast('revocations', { TokenRevoked: record });
  await bus.broadcast('signing-keys', { SigningKeysChanged: record });
  await bus.consume('ledger', { UserDeleted: record, AdminActionTaken: record });

  const config = loadConfig(IdentityConfigSchema, {
    NODE_ENV: 'test',
    PORT: '0',
    LOG_LEVEL: 'silent',
    DATABASE_URL: database.url,
    DATA_DIR: dataDir,
    LEDGER_URL: ledger.url,
    // Every test registers from 127.0.0.1; the registration limit has tests of its own.
    REGISTRATION_MAX_PER_WINDOW: '100000',
    ...env,
  });
  let service: RunningService = await startIdentity(config, { bus, logger });
  let url = service.url;

  const harness: IdentityHarness = {
    get url() {
      return url;
    },
    config,
    bus,
    ledger,
    published,
    signingKeyPem: () => readFile(developmentKeyPath(dataDir), 'utf8'),
    async request(method, path, options = {}) {
      const headers: Record<string, string> = { ...options.headers };
      if (options.body !== undefined) headers['content-type'] = 'application/json';
      if (options.token) headers.authorization = `Bearer ${options.token}`;
      const response = await fetch(`${url}${path}`, {
        method,
        headers,
        body: options.body === undefined ? undefined : JSON.stringify(options.body),
      });
      const text = await response.text();
      return { status: response.status, headers: response.headers, body: text ? JSON.parse(text) : {} };
    },
    async register(name, password = PASSWORD) {
      const response = await harness.request<{ id: string; username: string; email: string }>(
        'POST',
        '/user',
        { body: { username: name, email: `${name}@example.com`, password } },
      );
      if (response.status !== 201) throw new Error(`registration failed: ${JSON.stringify(response.body)}`);
      return response.body;
    },
    async login(identity, password = PASSWORD, address = '203.0.113.1') {
      const response = await harness.request<{ token: string }>('POST', '/auth/login', {
        body: { identity, password },
        headers: { 'x-forwarded-for': address },
      });
      if (response.status !== 200) throw new Error(`login failed: ${JSON.stringify(response.body)}`);
      return response.body.token;
    },
    async restart() {
      await service.stop();
      service = await startIdentity(config, { bus, logger });
      url = service.url;
    },
    async stop() {
      await service.stop();
      await bus.close();
      await ledger.close();
      await database.drop();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
  return harness;
}
