export {
  createPaymentsClient,
  DEFAULT_API_VERSION,
  type ClientOptions,
  type PaymentsClient,
} from './client.js';
export type { RawRequestOptions, RawResponse, RequestOptions, ResponseInfo } from './http-transport.js';
export type { TokenProvider } from './token-session.js';
export type { PagedList } from './pagination.js';
export type { MoneyOptions, WaitOptions } from './resources/money.js';
export type { UserUpdateOptions } from './resources/users.js';
export {
  ApiError,
  AuthenticationError,
  BadRequestError,
  ConflictError,
  ConnectionError,
  InternalServerError,
  NotFoundError,
  PaymentsError,
  PermissionDeniedError,
  RateLimitError,
  RedirectError,
  RequestTimeoutError,
  ServiceUnavailableError,
  UnprocessableEntityError,
} from './errors.js';
export {
  DEFAULT_WEBHOOK_TOLERANCE_SECONDS,
  generateTestHeaderString,
  verifyWebhookEvent,
  WEBHOOK_SIGNATURE_HEADER,
  WebhookSignatureError,
  type TestHeaderOptions,
  type VerifyWebhookOptions,
  type WebhookSignatureFailure,
} from './webhook-verification.js';
export { CLIENT_VERSION } from './runtime.js';
export { OPERATIONS, type ClientOperation, type OperationId } from './operations.js';
export type * from './types.js';
