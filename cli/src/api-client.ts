import type { Problem } from '@payments/contracts';
import { CURRENT_VERSION } from '@payments/contracts/versions';
import { CliError, EXIT, type ExitCode } from './exit-codes.js';
import type { StateStore } from './state-store.js';

export interface ApiResponse<T> {
  status: number;
  headers: Headers;
  body: T;
}

export interface RequestOptions {
  body?: unknown;
  query?: Record<string, string | number | undefined>;
  headers?: Record<string, string>;
  /** Sends the saved token; on by default. */
  auth?: boolean;
}

export interface ApiClient {
  baseUrl: string;
  /** `target` is a path below the API URL, or an absolute URL (a followed `Location`). */
  request<T>(method: string, target: string, options?: RequestOptions): Promise<ApiResponse<T>>;
  get<T>(target: string, options?: RequestOptions): Promise<ApiResponse<T>>;
  post<T>(target: string, options?: RequestOptions): Promise<ApiResponse<T>>;
}

interface ClientOptions {
  baseUrl: string;
  state: StateStore;
  timeoutMs?: number;
  now?: () => number;
}

/** Tokens this close to expiry are swapped for a fresh one before use. */
const REFRESH_WITHIN_SECONDS = 120;

/** JSON over HTTP to the gateway, with the saved token, and every failure turned into a classified CliError. */
export function createApiClient(options: ClientOptions): ApiClient {
  const timeoutMs = options.timeoutMs ?? 30_000;
  const now = options.now ?? (() => Math.floor(Date.now() / 1000));

  const urlOf = (target: string, query?: RequestOptions['query']) => {
    const base = new URL(options.baseUrl);
    const url = /^https?:\/\//.test(target)
      ? new URL(target)
      : new URL(`${base.pathname.replace(/\/$/, '')}${target}`, base);
    for (const [key, value] of Object.entries(query ?? {})) {
      if (value !== undefined) url.searchParams.set(key, String(value));
    }
    return url;
  };

  const send = async (method: string, url: URL, headers: Record<string, string>, body?: unknown) => {
    let response: Response;
    try {
      response = await fetch(url, {
        method,
        headers: {
          accept: 'application/json',
          'x-api-version': CURRENT_VERSION,
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
          ...headers,
        },
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(timeoutMs),
      });
    } catch (error) {
      throw unreachable(options.baseUrl, error, timeoutMs);
    }
    const text = await response.text();
    let parsed: unknown = null;
    if (text) {
      try {
        parsed = JSON.parse(text);
      } catch {
        parsed = text;
      }
    }
    return { status: response.status, headers: response.headers, body: parsed };
  };

  const tokenFor = async (): Promise<string> => {
    const session = await options.state.readSession();
    if (!session) throw new CliError(EXIT.auth, 'You are not logged in.', ['Log in with: payments login']);
    const left = session.expires_at - now();
    if (left > 0 && left < REFRESH_WITHIN_SECONDS) {
      const refreshed = await send('POST', urlOf('/auth/refresh'), {
        authorization: `Bearer ${session.token}`,
      }).catch(() => null);
      const fresh = refreshed?.body as { token?: string; expires_in?: number } | null;
      if (refreshed && refreshed.status === 200 && fresh?.token && fresh.expires_in) {
        await options.state.writeSession({
          ...session,
          token: fresh.token,
          expires_at: now() + fresh.expires_in,
        });
        return fresh.token;
      }
    }
    return session.token;
  };

  const request = async <T>(method: string, target: string, requestOptions: RequestOptions = {}) => {
    const auth = requestOptions.auth ?? true;
    const headers = { ...requestOptions.headers };
    if (auth) headers.authorization = `Bearer ${await tokenFor()}`;
    const response = await send(method, urlOf(target, requestOptions.query), headers, requestOptions.body);
    if (response.status >= 400) throw apiFailure(response.status, response.body, response.headers, auth);
    return response as ApiResponse<T>;
  };

  return {
    baseUrl: options.baseUrl,
    request,
    get: (target, requestOptions) => request('GET', target, requestOptions),
    post: (target, requestOptions) => request('POST', target, requestOptions),
  };
}

function unreachable(baseUrl: string, error: unknown, timeoutMs: number): CliError {
  if ((error as Error).name === 'TimeoutError') {
    return new CliError(
      EXIT.unavailable,
      `The payments API at ${baseUrl} did not answer within ${timeoutMs / 1000} s.`,
    );
  }
  const cause = (error as { cause?: { code?: string; message?: string } }).cause;
  return new CliError(EXIT.unavailable, `Cannot reach the payments API at ${baseUrl}.`, [
    cause?.code ?? cause?.message ?? (error as Error).message,
    'Check --api-url / PAYMENTS_API_URL, or start the system with: pnpm start',
  ]);
}

function isProblem(body: unknown): body is Problem {
  return typeof body === 'object' && body !== null && typeof (body as Problem).detail === 'string';
}

function exitCodeFor(status: number): ExitCode {
  if (status === 400 || status === 413 || status === 415) return EXIT.usage;
  if (status === 401 || status === 403) return EXIT.auth;
  if (status === 404) return EXIT.notFound;
  if (status === 409 || status === 422) return EXIT.businessRule;
  if (status === 429 || status >= 500) return EXIT.unavailable;
  return EXIT.transactionFailed;
}

/** The problem's detail and field errors, with advice where the next step is obvious. */
export function apiFailure(status: number, body: unknown, headers: Headers, sentToken: boolean): CliError {
  const problem = isProblem(body) ? body : null;
  const webhookError = (body as { error?: unknown } | null)?.error;
  let message =
    problem?.detail ?? (typeof webhookError === 'string' ? webhookError : `The API answered ${status}.`);
  const details = (problem?.errors ?? []).map((e) => `${e.field}: ${e.message}`);
  if (status === 401 && problem?.code === 'AUTH_REQUIRED') {
    message = sentToken ? 'Your session has expired or was revoked.' : message;
    details.push('Log in again with: payments login');
  }
  if (status === 429 || status === 503) {
    const retryAfter = headers.get('retry-after');
    if (retryAfter) details.push(`Try again in ${retryAfter} s.`);
  }
  return new CliError(exitCodeFor(status), message, details, body);
}
