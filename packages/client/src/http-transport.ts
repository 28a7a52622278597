import {
  apiErrorFrom,
  ConnectionError,
  RequestTimeoutError,
  type ApiError,
  type PaymentsError,
} from './errors.js';
import { OPERATIONS, type OperationId } from './operations.js';
import {
  backoffMs,
  isRetryableStatus,
  isSafeToRetry,
  serverDelayMs,
  type RetryPolicy,
} from './retry-policy.js';
import { randomUUID } from './runtime.js';
import type { ApiVersion } from './types.js';

/** Options every client method takes last. */
export interface RequestOptions {
  /** Cancels the call, retries and waits included; it rejects with the signal's reason. */
  signal?: AbortSignal;
  /** This call's overall time limit, retries and waits included (default: the client's). */
  timeoutMs?: number;
  /** This call's retry budget (default: the client's). */
  maxRetries?: number;
  /** Extra headers, e.g. your own `X-Request-Id`. */
  headers?: Record<string, string>;
  /** Called with the successful answer's status and headers (`ETag`, `Location`, `Idempotent-Replayed`, …). */
  onResponse?: (response: ResponseInfo) => void;
}

export interface ResponseInfo {
  status: number;
  headers: Headers;
  requestId: string | null;
  /** Attempts made, the successful one included. */
  attempts: number;
}

/** Where authenticated calls get their bearer token; see `TokenProvider` in the client options. */
export interface TokenSource {
  getToken(signal?: AbortSignal): Promise<string>;
  /**
   * The API refused `token` (401 AUTH_REQUIRED: expired or revoked): drop it. Returns whether the next `getToken`
   * can obtain another, in which case the call is sent once more.
   */
  tokenRejected?(token: string): boolean;
}

export interface TransportSettings {
  baseUrl: string;
  apiVersion: ApiVersion;
  fetch: typeof fetch;
  retry: RetryPolicy;
  timeoutMs: number;
  headers: Record<string, string>;
  /** Sent as `User-Agent` unless the headers name one; null: none (in a browser). */
  userAgent: string | null;
  tokens: () => TokenSource | null;
  /** Where a raw request gets its token: null when the client has no way to get one (it then sends none). */
  rawTokens: () => TokenSource | null;
  now: () => number;
  random: () => number;
}

type QueryValue = string | number | boolean | Date | Readonly<Record<string, string>> | undefined;

export interface CallRequest {
  params?: Record<string, string>;
  query?: Record<string, QueryValue>;
  body?: unknown;
  idempotencyKey?: string;
  ifMatch?: string;
  /** A token to send instead of the session's (the refresh call), without the retry on 401. */
  bearer?: string;
  /** How to read a successful body; `json` by default. */
  read?: 'json' | 'text';
  options?: RequestOptions | undefined;
}

export interface Answer<T> {
  status: number;
  headers: Headers;
  body: T;
}

export interface Transport {
  call<T>(operation: OperationId, request?: CallRequest): Promise<Answer<T>>;
  /** `call`'s answer body alone, which is all most operations need. */
  body<T>(operation: OperationId, request?: CallRequest): Promise<T>;
  raw<T = unknown>(method: string, path: string, options?: RawRequestOptions): Promise<RawResponse<T>>;
  readonly apiVersion: ApiVersion;
}

/** What `client.rawRequest` sends besides the method and path; see the README's "Raw requests". */
export interface RawRequestOptions {
  /** Sent as JSON, with `Content-Type: application/json` unless `headers` name another. */
  body?: unknown;
  /** Sent exactly as given (not with `body`); no Content-Type is added but the one fetch adds to a string. */
  rawBody?: string | Uint8Array;
  /** Added to the client's `headers`. An `Authorization` here is sent as given, and no token is added. */
  headers?: Record<string, string>;
  /** This bearer token instead of the client's. */
  token?: string;
  /**
   * `false`: no token at all. By default the client's token (its session's, or its `tokenProvider`'s) when it has
   * one or can get one; a client with neither credentials, token nor provider sends none.
   */
  auth?: boolean;
  /** Sent as `Idempotency-Key`; it also makes a POST, PUT, PATCH or DELETE safe to retry. */
  idempotencyKey?: string;
  /**
   * By default the path gets the client's version prefix (`/accounts` → `/v1.1/accounts`), unless it already has
   * one (`/v1.0/accounts`, `/v2.0/accounts` go as written). `false`: the path goes exactly as written (an
   * unprefixed API path is served in 1.0; `/health`, `/webhook/…`, a service's own routes).
   */
  versioned?: boolean;
  /** Retries after a network error, 429, 502, 503 or 504, by the client's rules; default 0 (none). */
  maxRetries?: number;
  /** This call's overall time limit, retries and waits included (default: the client's). */
  timeoutMs?: number;
  /** Cancels the call; it rejects with the signal's reason. */
  signal?: AbortSignal;
}

/** An answer to a raw request, whatever its status. */
export interface RawResponse<T = unknown> {
  status: number;
  headers: Headers;
  /** The body parsed as JSON; null when it is empty or not JSON. */
  body: T | null;
  /** The body as received. */
  text: string;
}

/** A path that starts with a version segment (`/v1.1`, `/v2.0`, `/v1`) is sent with the version it names. */
const VERSION_PREFIX = /^\/v\d+(?:\.\d+)*(?=[/?#]|$)/;

/**
 * The one request pipeline: builds the request from the operation table, adds the version prefix, the request id,
 * the token and the idempotency key, and retries what is safe to retry within the call's time limit. It never
 * follows a redirect (`redirect: 'manual'` on every fetch): a call's token and body go to `baseUrl` or nowhere.
 */
export function createTransport(settings: TransportSettings): Transport {
  const base = settings.baseUrl.replace(/\/+$/, '');

  /** The client's `User-Agent`, unless the caller's headers name their own. */
  const withUserAgent = (headers: Headers) => {
    if (settings.userAgent !== null && !headers.has('user-agent'))
      headers.set('user-agent', settings.userAgent);
    return headers;
  };

  const urlOf = (operation: OperationId, request: CallRequest): string => {
    const path = OPERATIONS[operation].path.replace(/\{([^}]+)\}/g, (_, name: string) => {
      const value = request.params?.[name];
      if (value === undefined || value === '')
        throw new TypeError(`${operation} needs a value for {${name}}`);
      return encodeURIComponent(value);
    });
    const search = new URLSearchParams();
    for (const [name, value] of Object.entries(request.query ?? {})) {
      if (value === undefined) continue;
      if (value instanceof Date) search.set(name, value.toISOString());
      // An object is a deepObject parameter: metadata: { order: '8812' } is metadata[order]=8812.
      else if (typeof value === 'object' && value !== null) {
        for (const [key, item] of Object.entries(value)) search.set(`${name}[${key}]`, String(item));
      } else search.set(name, String(value));
    }
    const query = search.size > 0 ? `?${search}` : '';
    return `${base}/v${settings.apiVersion}${path === '/' ? '' : path}${query}`;
  };

  /**
   * One attempt, never following a redirect: the response, or the ConnectionError when none came. A call cut short
   * by its signal throws the signal's reason instead.
   */
  async function send(
    url: string,
    request: { method: string; headers: Headers; body: string | Uint8Array | undefined },
    signal: AbortSignal,
  ): Promise<Response | ConnectionError> {
    try {
      // A browser's fetch types its body as a Uint8Array over an ArrayBuffer; a caller's bytes are sent as they are.
      const body = request.body as RequestInit['body'];
      return await settings.fetch(url, { ...request, body, redirect: 'manual', signal });
    } catch (error) {
      if (signal.aborted) throw signal.reason;
      return new ConnectionError(`${request.method} ${url} failed: ${(error as Error).message}`, {
        cause: error,
      });
    }
  }

  async function call<T>(operation: OperationId, request: CallRequest = {}): Promise<Answer<T>> {
    const { method, authenticated } = OPERATIONS[operation];
    const url = urlOf(operation, request);
    const options = request.options ?? {};
    const maxRetries = options.maxRetries ?? settings.retry.maxRetries;
    const timeoutMs = options.timeoutMs ?? settings.timeoutMs;
    const deadline = settings.now() + timeoutMs;
    const scope = callScope(timeoutMs, options.signal);
    const headers = withUserAgent(mergedHeaders(settings.headers, options.headers));
    // One id for the call, its retries included, so that the server's logs tie them together.
    if (!headers.has('x-request-id')) headers.set('x-request-id', randomUUID());
    headers.set(
      'accept',
      request.read === 'text' ? 'text/csv, application/problem+json' : 'application/json',
    );
    if (request.idempotencyKey !== undefined) headers.set('idempotency-key', request.idempotencyKey);
    if (request.ifMatch !== undefined) headers.set('if-match', request.ifMatch);
    const body = request.body === undefined ? undefined : JSON.stringify(request.body);
    if (body !== undefined) headers.set('content-type', 'application/json');
    const retryable = isSafeToRetry(method, headers);

    /** Waits before the next attempt, unless the wait would end past the deadline: then `failure` is the answer. */
    const pause = async (delayMs: number, failure: PaymentsError) => {
      if (settings.now() + delayMs >= deadline) throw failure;
      await sleep(delayMs, scope.signal);
    };

    try {
      let retries = 0;
      let attempts = 0;
      let tokenRetried = false;
      for (;;) {
        const tokens = authenticated && request.bearer === undefined ? settings.tokens() : null;
        const token =
          request.bearer ?? (tokens ? await abortable(tokens.getToken(scope.signal), scope.signal) : null);
        if (token !== null) headers.set('authorization', `Bearer ${token}`);
        attempts += 1;
        const response = await send(url, { method, headers, body }, scope.signal);
        if (response instanceof ConnectionError) {
          if (!retryable || retries >= maxRetries) throw response;
          await pause(backoffMs(settings.retry, retries, settings.random), response);
          retries += 1;
          continue;
        }
        if (response.ok) {
          const text = await response.text();
          options.onResponse?.({
            status: response.status,
            headers: response.headers,
            requestId: response.headers.get('x-request-id'),
            attempts,
          });
          const parsed = request.read === 'text' ? text : text === '' ? undefined : (JSON.parse(text) as T);
          return { status: response.status, headers: response.headers, body: parsed as T };
        }
        const error: ApiError = apiErrorFrom(response.status, response.headers, await response.text());
        if (error.status === 401 && error.code === 'AUTH_REQUIRED' && token !== null && !tokenRetried) {
          tokenRetried = true;
          // Refused at the door, so the request did nothing: with a new token it is sent once more.
          if (tokens?.tokenRejected?.(token)) continue;
        }
        if (!isRetryableStatus(error.status) || !retryable || retries >= maxRetries) throw error;
        await pause(
          serverDelayMs(response.headers, settings.now()) ??
            backoffMs(settings.retry, retries, settings.random),
          error,
        );
        retries += 1;
      }
    } catch (error) {
      throw scope.signal.aborted ? scope.signal.reason : error;
    } finally {
      scope.dispose();
    }
  }

  /** `/accounts?limit=5` → `/v1.1/accounts?limit=5`, and `/` → `/v1.1`, as the operations' paths get it. */
  const withVersion = (path: string) => {
    const cut = path.search(/[?#]/);
    const [pathname, rest] = cut === -1 ? [path, ''] : [path.slice(0, cut), path.slice(cut)];
    return `/v${settings.apiVersion}${pathname === '/' ? '' : pathname}${rest}`;
  };

  /**
   * A request outside the operation table: answers every HTTP status (never throws for one; a redirect is answered
   * as it came, not followed), retries only when asked, and never sends it again after a 401 (the token is left as
   * it was).
   */
  async function raw<T = unknown>(
    method: string,
    path: string,
    options: RawRequestOptions = {},
  ): Promise<RawResponse<T>> {
    if (!path.startsWith('/')) throw new TypeError(`A raw request's path starts with "/": got ${path}`);
    if (options.body !== undefined && options.rawBody !== undefined)
      throw new TypeError('A raw request takes a body or a rawBody, not both');
    if (options.auth === false && options.token !== undefined)
      throw new TypeError('A raw request takes a token or auth: false, not both');
    method = method.toUpperCase();
    const url = `${base}${options.versioned === false || VERSION_PREFIX.test(path) ? path : withVersion(path)}`;
    const headers = withUserAgent(mergedHeaders(settings.headers, options.headers));
    if (options.idempotencyKey !== undefined) headers.set('idempotency-key', options.idempotencyKey);
    let body: string | Uint8Array | undefined = options.rawBody;
    if (options.body !== undefined) {
      body = JSON.stringify(options.body);
      if (!headers.has('content-type')) headers.set('content-type', 'application/json');
    }
    const ownAuthorization = headers.has('authorization');
    if (options.token !== undefined && !ownAuthorization)
      headers.set('authorization', `Bearer ${options.token}`);
    const tokens =
      options.auth === false || options.token !== undefined || ownAuthorization ? null : settings.rawTokens();
    const retryable = isSafeToRetry(method, headers);
    const maxRetries = options.maxRetries ?? 0;
    const timeoutMs = options.timeoutMs ?? settings.timeoutMs;
    const deadline = settings.now() + timeoutMs;
    const scope = callScope(timeoutMs, options.signal);

    try {
      let retries = 0;
      for (;;) {
        if (tokens)
          headers.set(
            'authorization',
            `Bearer ${await abortable(tokens.getToken(scope.signal), scope.signal)}`,
          );
        const response = await send(url, { method, headers, body }, scope.signal);
        if (response instanceof ConnectionError) {
          const delayMs = backoffMs(settings.retry, retries, settings.random);
          if (!retryable || retries >= maxRetries || settings.now() + delayMs >= deadline) throw response;
          await sleep(delayMs, scope.signal);
          retries += 1;
          continue;
        }
        const text = await response.text();
        if (isRetryableStatus(response.status) && retryable && retries < maxRetries) {
          const delayMs =
            serverDelayMs(response.headers, settings.now()) ??
            backoffMs(settings.retry, retries, settings.random);
          if (settings.now() + delayMs < deadline) {
            await sleep(delayMs, scope.signal);
            retries += 1;
            continue;
          }
        }
        return { status: response.status, headers: response.headers, body: parseJson<T>(text), text };
      }
    } catch (error) {
      throw scope.signal.aborted ? scope.signal.reason : error;
    } finally {
      scope.dispose();
    }
  }

  const body = async <T>(operation: OperationId, request?: CallRequest): Promise<T> =>
    (await call<T>(operation, request)).body;

  return { call, body, raw, apiVersion: settings.apiVersion };
}

/** The client's headers, then the call's, which replace them whatever their case (`User-Agent` and `user-agent`). */
function mergedHeaders(client: Record<string, string>, call: Record<string, string> | undefined): Headers {
  const headers = new Headers(client);
  for (const [name, value] of Object.entries(call ?? {})) headers.set(name, value);
  return headers;
}

function parseJson<T>(text: string): T | null {
  if (text === '') return null;
  try {
    return JSON.parse(text) as T;
  } catch {
    return null;
  }
}

/** One signal for a call: the caller's, or the call's own time limit, whichever comes first. */
function callScope(timeoutMs: number, callerSignal: AbortSignal | undefined) {
  const controller = new AbortController();
  const timer = setTimeout(
    () => controller.abort(new RequestTimeoutError(`The call did not finish within ${timeoutMs} ms`)),
    timeoutMs,
  );
  const onAbort = () => controller.abort(callerSignal?.reason);
  if (callerSignal?.aborted) onAbort();
  else callerSignal?.addEventListener('abort', onAbort, { once: true });
  return {
    signal: controller.signal,
    dispose() {
      clearTimeout(timer);
      callerSignal?.removeEventListener('abort', onAbort);
    },
  };
}

export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/** `promise`, or the signal's reason as soon as it aborts (the promise itself goes on). */
export function abortable<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error);
      },
    );
  });
}
