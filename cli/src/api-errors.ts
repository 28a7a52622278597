import { ApiError, ConnectionError, RequestTimeoutError } from '@payments/client';
import { CliError, EXIT, type ExitCode } from './exit-codes.js';

export interface FailureContext {
  baseUrl: string;
  /** Each call's time limit, in ms. */
  timeoutMs: number;
  /** Whether the saved token was sent, so that a 401 means it expired or was revoked. */
  tokenSent: boolean;
}

/** A failure of the client as a CliError with its exit code and advice; anything else is left as it is. */
export function cliErrorFrom(error: unknown, context: FailureContext): unknown {
  if (error instanceof ApiError) return apiFailure(error, context.tokenSent);
  if (error instanceof RequestTimeoutError) {
    return new CliError(
      EXIT.unavailable,
      `The payments API at ${context.baseUrl} did not answer within ${context.timeoutMs / 1000} s.`,
    );
  }
  if (error instanceof ConnectionError) {
    // The client's error wraps fetch's, which wraps the system's (ECONNREFUSED, ENOTFOUND, …).
    const fetchError = error.cause as (Error & { cause?: { code?: string; message?: string } }) | undefined;
    const cause = fetchError?.cause;
    return new CliError(EXIT.unavailable, `Cannot reach the payments API at ${context.baseUrl}.`, [
      cause?.code ?? cause?.message ?? fetchError?.message ?? error.message,
      'Check --api-url / PAYMENTS_API_URL, or start the system with: pnpm start',
    ]);
  }
  return error;
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
function apiFailure(error: ApiError, tokenSent: boolean): CliError {
  const { status, problem } = error;
  let message = problem?.detail ?? `The API answered ${status}.`;
  const details = error.fieldErrors.map((e) => `${e.field}: ${e.message}`);
  if (status === 401 && error.code === 'AUTH_REQUIRED') {
    message = tokenSent ? 'Your session has expired or was revoked.' : message;
    details.push('Log in again with: payments login');
  }
  if (status === 429 || status === 503) {
    const retryAfter = error.headers.get('retry-after');
    if (retryAfter) details.push(`Try again in ${retryAfter} s.`);
  }
  return new CliError(exitCodeFor(status), message, details, problem ?? undefined);
}
