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

export type SystemFixture = TestSystem & {
  /** The administrator of `admin: …`; reading it without having asked for one throws. */
  readonly admin: SystemAdmin;
  /** How many of the suite's tests failed so far. */
  readonly failures: number;
};

/**
 * One whole system for the enclosing `describe`: started before its first test (with `startSystem`'s options, or
 * a function that makes them once something they name exists), stopped after its last; when a test failed, the
 * services' logs are printed first. It stands for the started system: `system.gatewayUrl` and the rest read
 * through to it, inside tests and hooks.
 */
export function useSystem(
  options: TestSystemOptions | (() => TestSystemOptions | Promise<TestSystemOptions>) = {},
  fixture: SystemFixtureOptions = {},
): SystemFixture {
  let started: TestSystem | undefined;
  let admin: SystemAdmin | undefined;
  let failures = 0;

  before(async () => {
    const given = typeof options === 'function' ? await options() : options;
    const credentials = adminCredentials(fixture.admin);
    started = await startSystem(credentials ? withAdmin(given, credentials) : given);
    if (credentials) admin = await logIn(started.gatewayUrl, credentials);
  });

  afterEach(async function () {
    if (this.currentTest?.state === 'failed') failures += 1;
    if (fixture.booksBalance && started) await expectBooksBalance(started.urls.ledger);
  });

  after(async () => {
    if (failures > 0 && started) console.error(started.logs(), ...(fixture.logs?.() ?? []));
    try {
      await fixture.beforeStop?.();
    } finally {
      await started?.stop();
    }
  });

  return new Proxy({} as SystemFixture, {
    get(_target, property) {
      if (property === 'admin') {
        if (!admin) throw new Error('this suite asked for no administrator (useSystem(…, { admin: true }))');
        return admin;
      }
      if (property === 'failures') return failures;
      // Not a promise: `await system` must not look for `then` on a system not started yet.
      if (property === 'then') return undefined;
      if (!started) {
        throw new Error(
          `the suite's system has not started: read system.${String(property)} in a test or hook`,
        );
      }
      return Reflect.get(started, property);
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
