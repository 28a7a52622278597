import type { ErrorCode, FieldError } from '@payments/contracts';

/** An error the client caused or may see: a stable SPEC code, a human detail, and optional field errors. */
export class AppError extends Error {
  override name = 'AppError';
  constructor(
    readonly code: ErrorCode,
    readonly detail: string,
    readonly errors?: FieldError[],
    readonly headers?: Record<string, string>,
  ) {
    super(`${code}: ${detail}`);
  }
}

export const notFound = (what: string) => new AppError('RESOURCE_NOT_FOUND', `${what} not found`);

export const validationError = (errors: FieldError[], detail = 'The request is not valid') =>
  new AppError('VALIDATION_ERROR', detail, errors);

export const accessDenied = (detail = 'You may not access this resource') =>
  new AppError('ACCESS_DENIED', detail);

export const authRequired = (detail = 'A valid bearer token is required') =>
  new AppError('AUTH_REQUIRED', detail);
