import {
  createTransport,
  type RawRequestOptions,
  type RawResponse,
  type TokenSource,
} from './http-transport.js';
import { DEFAULT_RETRY_POLICY, type RetryPolicy } from './retry-policy.js';
import {
  accountsResource,
  balancesResource,
  payoutAccountResource,
  statementsResource,
} from './resources/accounts.js';
import { adminResource } from './resources/admin.js';
import { apiKeysResource } from './resources/api-keys.js';
import { authResource, discoveryResource } from './resources/auth.js';
import { currenciesResource, ratesResource } from './resources/currencies.js';
import { eventsResource } from './resources/events.js';
import { moneyResource, transactionsResource } from './resources/money.js';
import type { ResourceDeps } from './resources/resource-deps.js';
import { usersResource } from './resources/users.js';
import { webhookEndpointsResource } from './resources/webhook-endpoints.js';
import { defaultUserAgent } from './runtime.js';
import { createTokenSession, type TokenProvider, type TokenSession } from './token-session.js';
import type { ApiVersion, LoginRequest } from './types.js';

/** The version a client speaks unless told otherwise: the current one. */
export const DEFAULT_API_VERSION = '1.1' satisfies ApiVersion;

export interface ClientOptions<V extends ApiVersion = typeof DEFAULT_API_VERSION> {
  /** The gateway, e.g. `http://localhost:8080`. */
  baseUrl: string;
  /**
   * The API version every call is made in (as the `/v1.1` path prefix). The answers' types follow it: a 1.0
   * transaction has no `fee`, `exchange_rate` or `converted_amount`. Default 1.1.
   */
  apiVersion?: V;
  /** Logs in with these when a token is needed, refreshes before expiry, and logs in again when refused. */
  credentials?: LoginRequest;
  /** A token you already hold (refreshed before its expiry, never re-obtained). */
  token?: string;
  /** Your own token source, instead of `credentials` / `token`. */
  tokenProvider?: TokenProvider;
  /**
   * An API key (`sk_live_…`, `rk_test_…`), sent as the bearer credential of every call instead of a token: never
   * refreshed, and a refused key is not retried. Instead of `credentials`, `token` and `tokenProvider`.
   */
  apiKey?: string;
  /** Refresh this many seconds before a token expires (at most half its lifetime); default 60. */
  refreshMarginSeconds?: number;
  /** Retries of reads and keyed writes after a network error, 429, 502, 503 or 504; default 2. */
  maxRetries?: number;
  /** The first retry's backoff; it doubles each retry, with jitter, up to `retryMaxDelayMs`. Default 500 ms. */
  retryBaseDelayMs?: number;
  /** Default 8 s. */
  retryMaxDelayMs?: number;
  /** Each call's overall time limit, retries and waits included; default 30 s. */
  timeoutMs?: number;
  /**
   * Your product, put before the client's own `User-Agent` (`my-app/1.2 payments-client/0.2.0 node/22.12.0`). In a
   * browser no `User-Agent` is added (the browser sends its own).
   */
  userAgent?: string;
  /** Headers for every call; a `User-Agent` here replaces the client's. */
  headers?: Record<string, string>;
  /** The fetch to call (default: Node's global fetch), e.g. one that logs or traces. */
  fetch?: typeof fetch;
  /** The clock token lifetimes are measured by, in ms (default `Date.now`); a test gives it a skew. */
  clock?: () => number;
}

function resources<V extends ApiVersion>(deps: ResourceDeps) {
  return {
    discovery: discoveryResource(deps),
    auth: authResource(deps),
    users: usersResource(deps),
    accounts: accountsResource(deps),
    balances: balancesResource(deps),
    statements: statementsResource(deps),
    payoutAccount: payoutAccountResource(deps),
    money: moneyResource<V>(deps),
    transactions: transactionsResource<V>(deps),
    currencies: currenciesResource(deps),
    rates: ratesResource(deps),
    webhookEndpoints: webhookEndpointsResource(deps),
    apiKeys: apiKeysResource(deps),
    events: eventsResource(deps),
    admin: adminResource<V>(deps),
  };
}

export type PaymentsClient<V extends ApiVersion = ApiVersion> = ReturnType<typeof resources<V>> & {
  readonly apiVersion: V;
  /**
   * The escape hatch: any method and path (with the client's version prefix unless the path has one or
   * `versioned: false`), answered with `{ status, headers, body, text }` whatever the status. It throws only when no
   * answer came (`ConnectionError`, `RequestTimeoutError`, the signal's reason), retries only when `maxRetries` says,
   * and sends the client's token unless given another or `auth: false`. See the README's "Raw requests".
   */
  rawRequest<T = unknown>(method: string, path: string, options?: RawRequestOptions): Promise<RawResponse<T>>;
};

/** A client for the payments API; see the package README. */
export function createPaymentsClient<V extends ApiVersion = typeof DEFAULT_API_VERSION>(
  options: ClientOptions<V>,
): PaymentsClient<V> {
  const apiVersion = options.apiVersion ?? (DEFAULT_API_VERSION as V);
  const retry: RetryPolicy = {
    maxRetries: options.maxRetries ?? DEFAULT_RETRY_POLICY.maxRetries,
    baseDelayMs: options.retryBaseDelayMs ?? DEFAULT_RETRY_POLICY.baseDelayMs,
    maxDelayMs: options.retryMaxDelayMs ?? DEFAULT_RETRY_POLICY.maxDelayMs,
  };
  const now = () => Date.now();
  const given = (['credentials', 'token', 'tokenProvider', 'apiKey'] as const).filter(
    (name) => options[name] !== undefined,
  );
  if (options.apiKey !== undefined && given.length > 1)
    throw new TypeError(
      `apiKey is used alone, not with ${given.filter((name) => name !== 'apiKey').join(', ')}`,
    );
  if (options.apiKey !== undefined && !/^[\x21-\x7e]+$/.test(options.apiKey))
    throw new TypeError('apiKey is empty or has characters a key never has');
  let session: TokenSession | null = null;
  const provider: TokenProvider | undefined =
    options.tokenProvider ?? (options.apiKey === undefined ? undefined : apiKeySource(options.apiKey));
  const tokens = (): TokenSource | null => provider ?? session;
  const transport = createTransport({
    baseUrl: options.baseUrl,
    apiVersion,
    // Called as a function, not a method: a browser's fetch refuses any `this` but the window (Illegal invocation).
    fetch: options.fetch ?? ((input, init) => globalThis.fetch(input, init)),
    retry,
    timeoutMs: options.timeoutMs ?? 30_000,
    headers: options.headers ?? {},
    userAgent: defaultUserAgent(options.userAgent),
    tokens,
    rawTokens: () => provider ?? (session?.canProvide() ? session : null),
    now,
    random: Math.random,
  });
  const deps: ResourceDeps = { transport, session: null, now: options.clock ?? now };
  if (!provider) {
    const auth = authResource({ transport, session: null, now: deps.now });
    session = createTokenSession({
      credentials: options.credentials,
      token: options.token,
      refreshMarginSeconds: options.refreshMarginSeconds ?? 60,
      now: options.clock ?? now,
      login: (credentials) => auth.login(credentials),
      refresh: (token) => auth.refresh(token),
    });
    deps.session = session;
  }
  return { ...resources<V>(deps), apiVersion, rawRequest: transport.raw };
}

/** An API key as the client's token source: the same key for every call, nothing else to try when refused. */
function apiKeySource(apiKey: string): TokenProvider {
  return { getToken: () => Promise.resolve(apiKey), tokenRejected: () => false };
}
