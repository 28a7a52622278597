/** Every error the API can answer, with its HTTP status and title. SPEC.md's codes first, then our extensions. */
export const ERRORS = {
  AUTH_REQUIRED: { status: 401, title: 'Authentication required' },
  INVALID_CREDENTIALS: { status: 401, title: 'Invalid username or password' },
  ACCESS_DENIED: { status: 403, title: 'Insufficient permissions' },
  RESOURCE_NOT_FOUND: { status: 404, title: 'Resource not found' },
  DUPLICATE_ENTRY: { status: 409, title: 'Resource already exists' },
  INSUFFICIENT_FUNDS: { status: 422, title: 'Not enough balance' },
  INVALID_CURRENCY: { status: 422, title: 'Unsupported currency' },
  VALIDATION_ERROR: { status: 400, title: 'Request validation failed' },
  RATE_LIMIT_EXCEEDED: { status: 429, title: 'Too many requests' },
  INTERNAL_ERROR: { status: 500, title: 'Server error' },
  CONFLICT: { status: 409, title: 'Conflict with the current state of the resource' },
  INVALID_AMOUNT: { status: 422, title: 'Invalid transaction amount' },
  BUSINESS_RULE_VIOLATION: { status: 422, title: 'Business rule violation' },
  PAYLOAD_TOO_LARGE: { status: 413, title: 'Request body too large' },
  UNSUPPORTED_MEDIA_TYPE: { status: 415, title: 'Unsupported media type' },
  SERVICE_UNAVAILABLE: { status: 503, title: 'Service unavailable' },
  PAYOUTS_NOT_ENABLED: { status: 422, title: 'The payout account cannot be paid out to yet' },
} as const satisfies Record<string, { status: number; title: string }>;

export type ErrorCode = keyof typeof ERRORS;

export interface FieldError {
  field: string;
  message: string;
}

/** RFC 9457 problem details, with our `code` extension. */
export interface Problem {
  type: string;
  title: string;
  status: number;
  detail: string;
  instance: string;
  code: ErrorCode;
  errors?: FieldError[];
}

export const PROBLEM_CONTENT_TYPE = 'application/problem+json';

export function isErrorCode(value: unknown): value is ErrorCode {
  return typeof value === 'string' && Object.hasOwn(ERRORS, value);
}

export function problemType(code: ErrorCode): string {
  return `/problems/${code.toLowerCase().replaceAll('_', '-')}`;
}

export function buildProblem(
  code: ErrorCode,
  detail: string,
  instance: string,
  errors?: FieldError[],
): Problem {
  const { status, title } = ERRORS[code];
  return {
    type: problemType(code),
    title,
    status,
    detail,
    instance,
    code,
    ...(errors?.length ? { errors } : {}),
  };
}
