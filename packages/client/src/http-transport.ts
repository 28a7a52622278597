import { randomUUID } from 'node:crypto';
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
  tokens: () => TokenSource | null;
  now: () => number;
  random: () => number;
}

type QueryValue = string | number | boolean | Date | undefined;

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
  readonly apiVersion: ApiVersion;
}

/**
 * The one request pipeline: builds the request from the operation table, adds the version prefix, the request id,
 * the token and the idempotency key, and retries what is safe to retry within the call's time limit.
 */
export function createTransport(settings: TransportSettings): Transport {
  const base = settings.baseUrl.replace(/\/+$/, '');

  const urlOf = (operation: OperationId, request: CallRequest): string => {
    const path = OPERATIONS[operation].path.replace(/\{([^}]+)\}/g, (_, name: string) => {
      const value = request.params?.[name];
      if (value === undefined || value === '')
        throw new TypeError(`${operation} needs a value for {${name}}`);
      return encodeURIComponent(value);
    });
    const search = new URLSearchParams();
    for (const [name, value] of Object.entries(request.query ?? {})) {
      if (value !== undefined) search.set(name, value instanceof Date ? value.toISOString() : String(value));
    }
    const query = search.size > 0 ? `?${search}` : '';
    return `${base}/v${settings.apiVersion}${path === '/' ? '' : path}${query}`;
  };

  async function call<T>(operation: OperationId, request: CallRequest = {}): Promise<Answer<T>> {
    const { method, authenticated } = OPERATIONS[operation];
    const url = urlOf(operation, request);
    const options = request.options ?? {};
    const maxRetries = options.maxRetries ?? settings.retry.maxRetries;
    const timeoutMs = options.timeoutMs ?? settings.timeoutMs;
    const deadline = settings.now() + timeoutMs;
    const scope = callScope(timeoutMs, options.signal);
    const headers = new Headers({ ...settings.headers, ...options.headers });
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
        let response: Response;
        try {
          response = await settings.fetch(url, { method, headers, body, signal: scope.signal });
        } catch (error) {
          if (scope.signal.aborted) throw scope.signal.reason;
          const failure = new ConnectionError(`${method} ${url} failed: ${(error as Error).message}`, {
            cause: error,
          });
          if (!retryable || retries >= maxRetries) throw failure;
          await pause(backoffMs(settings.retry, retries, settings.random), failure);
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

  return { call, apiVersion: settings.apiVersion };
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
