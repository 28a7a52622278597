import { randomBytes } from 'node:crypto';
import { expectBooksBalance } from './audit.js';
import { startSystem, type TestSystem, type TestSystemOptions } from './system.js';

/** The administrator identity makes at its first start (ADMIN_USERNAME …), logged in once the system is up. */
export interface SystemAdmin {
  username: string;
  email: string;
  password: string;
  /** The user id (the token's subject). */
  id: string;
  /** The token of the fixture's login. */
  token: string;
}

export interface SystemFixtureOptions {
  /** An administrator, with these credentials or made-up ones (`true`); read it as `system.admin`. */
  admin?: boolean | Pick<SystemAdmin, 'username' | 'email' | 'password'>;
  /** After each test, the ledger's own audit must find its books balanced. */
  booksBalance?: boolean;
  /** What else to print when a test failed (a second copy of a service, say). */
  logs?: () => (string | undefined)[];
  /** Runs before the system stops: what the suite made against it (a broker tap, a database client). */
  beforeStop?: () => unknown;
}

export type SystemFixture = Started<TestSystem> & {
  /** The administrator of `admin: …`; reading it without having asked for one throws. */
  readonly admin: SystemAdmin;
};

/** What a suite's fixture stands for: the thing it started, and how many of the suite's tests failed so far. */
export type Started<T> = T & { readonly failures: number };

export interface StartedOptions<T> {
  /** After each test: what every test must leave true (the books balance). */
  afterEach?: (started: T) => unknown;
  /** What to print when a test failed (the processes' logs). */
  logs?: (started: T) => (string | undefined)[];
  /** Runs before the stop: what the suite made against it (a broker tap, a database client). */
  beforeStop?: () => unknown;
}

/** What a fixture can end: a system or a harness stops, a stand-in (a receiver, a proxy) closes. */
export type Stoppable = { stop(): Promise<unknown> } | { close(): Promise<unknown> };

/**
 * Something a whole `describe` shares (a system, a service under test, a harness, a stand-in): started before its
 * first test, stopped (or closed) after its last, after printing what `logs` gives when a test failed. It stands
 * for what was started: its properties read through, inside tests and hooks; reading one before the start throws.
 */
export function useStarted<T extends Stoppable>(
  start: () => Promise<T>,
  options: StartedOptions<T> = {},
): Started<T> {
  let started: T | undefined;
  let failures = 0;

  before(async () => {
    started = await start();
  });

  afterEach(async function () {
    if (this.currentTest?.state === 'failed') failures += 1;
    if (started) await options.afterEach?.(started);
  });

  after(async () => {
    if (failures > 0 && started && options.logs) console.error(...options.logs(started));
    try {
      await options.beforeStop?.();
    } finally {
      if (started) await ('stop' in started ? started.stop() : started.close());
    }
  });

  return new Proxy({} as Started<T>, {
    get(_target, property) {
      if (property === 'failures') return failures;
      // Not a promise: `await fixture` must not look for `then` on something not started yet.
      if (property === 'then') return undefined;
      if (!started)
        throw new Error(`the suite's fixture has not started: read .${String(property)} in a test or hook`);
      return Reflect.get(started, property);
    },
  });
}

/**
 * One whole system for the enclosing `describe` (`useStarted`), with `startSystem`'s options, or a function that
 * makes them once something they name exists; when a test failed, the services' logs are printed first.
 */
export function useSystem(
  options: TestSystemOptions | (() => TestSystemOptions | Promise<TestSystemOptions>) = {},
  fixture: SystemFixtureOptions = {},
): SystemFixture {
  const credentials = adminCredentials(fixture.admin);
  let admin: SystemAdmin | undefined;
  const system = useStarted(
    async () => {
      const given = typeof options === 'function' ? await options() : options;
      const started = await startSystem(credentials ? withAdmin(given, credentials) : given);
      if (credentials)
        admin = await logIn(started.gatewayUrl, credentials).catch(async (error: unknown) => {
          await started.stop();
          throw error;
        });
      return started;
    },
    {
      afterEach: (started) => (fixture.booksBalance ? expectBooksBalance(started.urls.ledger) : undefined),
      logs: (started) => [started.logs(), ...(fixture.logs?.() ?? [])],
      ...(fixture.beforeStop && { beforeStop: fixture.beforeStop }),
    },
  );
  return new Proxy(system as SystemFixture, {
    get(target, property) {
      if (property !== 'admin') return Reflect.get(target, property);
      if (!admin) throw new Error('this suite asked for no administrator (useSystem(…, { admin: true }))');
      return admin;
    },
  });
}

function adminCredentials(admin: SystemFixtureOptions['admin']) {
  if (!admin) return null;
  if (admin !== true) return admin;
  const username = `admin_${randomBytes(4).toString('hex')}`;
  return { username, email: `${username}@example.com`, password: `pw-${randomBytes(8).toString('hex')}` };
}

function withAdmin(
  options: TestSystemOptions,
  admin: Pick<SystemAdmin, 'username' | 'email' | 'password'>,
): TestSystemOptions {
  const identity = {
    ADMIN_USERNAME: admin.username,
    ADMIN_EMAIL: admin.email,
    ADMIN_PASSWORD: admin.password,
    ...options.serviceEnv?.identity,
  };
  return { ...options, serviceEnv: { ...options.serviceEnv, identity } };
}

async function logIn(
  gatewayUrl: string,
  admin: Pick<SystemAdmin, 'username' | 'email' | 'password'>,
): Promise<SystemAdmin> {
  const response = await fetch(`${gatewayUrl}/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ username: admin.username, password: admin.password }),
  });
  if (response.status !== 200) throw new Error(`the administrator's login answered ${response.status}`);
  const { token } = (await response.json()) as { token: string };
  const claims = JSON.parse(Buffer.from(token.split('.')[1] as string, 'base64url').toString()) as {
    sub: string;
  };
  return { ...admin, id: claims.sub, token };
}
