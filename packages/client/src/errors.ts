import type { ErrorCode, FieldError, Problem } from './types.js';

/** Everything this client throws is one of these, except the reason of a caller's own AbortSignal. */
export class PaymentsError extends Error {
  override name = 'PaymentsError';
}

export interface ApiErrorDetails {
  status: number;
  /** The problem+json body; null when the answer was not one (a proxy's HTML page, say). */
  problem: Problem | null;
  /** `X-Request-Id` of the answer (the one this client sent, echoed): quote it to the operator. */
  requestId: string | null;
  headers: Headers;
}

/** The API answered with an error status. */
export class ApiError extends PaymentsError {
  override name = 'ApiError';
  readonly status: number;
  /** The stable SPEC code (`INSUFFICIENT_FUNDS`), or null when the body was not problem+json. */
  readonly code: ErrorCode | null;
  readonly problem: Problem | null;
  readonly requestId: string | null;
  readonly headers: Headers;

  constructor(details: ApiErrorDetails) {
    super(
      details.problem
        ? `${details.problem.title}: ${details.problem.detail}`
        : `The API answered HTTP ${details.status}`,
    );
    this.status = details.status;
    this.code = details.problem?.code ?? null;
    this.problem = details.problem;
    this.requestId = details.requestId;
    this.headers = details.headers;
  }

  /** The fields at fault (400 from a schema, or a 422 one field caused); empty when none are named. */
  get fieldErrors(): FieldError[] {
    return this.problem?.errors ?? [];
  }
}

/** 400 VALIDATION_ERROR: invalid JSON, a field, a query parameter, an Idempotency-Key or an API version. */
export class BadRequestError extends ApiError {
  override name = 'BadRequestError';
}

/** 401: no token or an invalid, expired or revoked one (AUTH_REQUIRED); wrong login (INVALID_CREDENTIALS). */
export class AuthenticationError extends ApiError {
  override name = 'AuthenticationError';
}

/** 403 ACCESS_DENIED: not yours, admins only, or a disabled or locked user. */
export class PermissionDeniedError extends ApiError {
  override name = 'PermissionDeniedError';
}

export class NotFoundError extends ApiError {
  override name = 'NotFoundError';
}

/** 409: DUPLICATE_ENTRY, or CONFLICT (an Idempotency-Key reused with another body, a stale If-Match). */
export class ConflictError extends ApiError {
  override name = 'ConflictError';
}

/** 422: a business rule (INSUFFICIENT_FUNDS, INVALID_CURRENCY, INVALID_AMOUNT, …); `fieldErrors` names the field. */
export class UnprocessableEntityError extends ApiError {
  override name = 'UnprocessableEntityError';
}

/** 429 RATE_LIMIT_EXCEEDED, after the retries allowed (or at once when the wait would not fit the timeout). */
export class RateLimitError extends ApiError {
  override name = 'RateLimitError';
}

/** 500 and any other 5xx not listed below. */
export class InternalServerError extends ApiError {
  override name = 'InternalServerError';
}

/** 502, 503 or 504, after the retries allowed. */
export class ServiceUnavailableError extends ApiError {
  override name = 'ServiceUnavailableError';
}

/**
 * The API answered with a redirect (3xx), which this client never follows: following it could carry the call's
 * token and body to whatever host `location` names. Not retried.
 */
export class RedirectError extends ApiError {
  override name = 'RedirectError';
  /** Where the answer pointed (its `Location`); null when it named nowhere. */
  readonly location: string | null;

  constructor(details: ApiErrorDetails) {
    super(details);
    this.location = details.headers.get('location');
    this.message = `The API answered HTTP ${details.status}, a redirect${
      this.location === null ? '' : ` to ${this.location}`
    }, which is not followed`;
  }
}

/** The API could not be reached (refused, reset, DNS), after the retries allowed. */
export class ConnectionError extends PaymentsError {
  override name = 'ConnectionError';
}

/** The call, retries and waits included, did not finish within its timeout. */
export class RequestTimeoutError extends PaymentsError {
  override name = 'RequestTimeoutError';
}

const BY_STATUS: Record<number, new (details: ApiErrorDetails) => ApiError> = {
  400: BadRequestError,
  401: AuthenticationError,
  403: PermissionDeniedError,
  404: NotFoundError,
  409: ConflictError,
  422: UnprocessableEntityError,
  429: RateLimitError,
  502: ServiceUnavailableError,
  503: ServiceUnavailableError,
  504: ServiceUnavailableError,
};

/** The typed error for an error answer whose body has been read as text. */
export function apiErrorFrom(status: number, headers: Headers, body: string): ApiError {
  const details = { status, problem: problemIn(body), requestId: headers.get('x-request-id'), headers };
  const ErrorClass =
    BY_STATUS[status] ??
    (status >= 500 ? InternalServerError : status >= 300 && status < 400 ? RedirectError : ApiError);
  return new ErrorClass(details);
}

function problemIn(body: string): Problem | null {
  try {
    const parsed: unknown = JSON.parse(body);
    const candidate = parsed as Partial<Problem> | null;
    return typeof candidate?.code === 'string' && typeof candidate.status === 'number'
      ? (candidate as Problem)
      : null;
  } catch {
    return null;
  }
}
