import type { ErrorCode, FieldError } from '@payments/contracts';
import { AppError } from '@payments/service-kit';

/**
 * An error a use case ends with, under one of the codes its interface names; the service's error middleware answers
 * it as problem+json with the code's status (packages/contracts).
 */
export type Refusal<C extends ErrorCode> = AppError & { readonly code: C };

/** The constructor of one use case's refusals: only the codes it names type-check. */
export const refusalsOf =
  <C extends ErrorCode>() =>
  (code: C, detail: string, errors?: FieldError[]): Refusal<C> =>
    new AppError(code, detail, errors) as Refusal<C>;
