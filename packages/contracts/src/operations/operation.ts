import type { ComponentName, QueryName } from '../http/components.js';

/** The services behind the gateway, each reached at its `<SERVICE>_URL`. */
export const SERVICES = ['identity', 'ledger', 'currency', 'webhook-ingest', 'webhook-delivery'] as const;
export type ServiceName = (typeof SERVICES)[number];

/**
 * Who answers an operation: the gateway itself, a service, or, for a queue's dead letters, the service that consumes
 * the queue named in the path (each queue is named by its consumer).
 */
export type Owner = 'gateway' | ServiceName | 'consumer of {queue}';

/**
 * Who may call an operation, and how the gateway lets the call through:
 * - `public`: anyone, without a token;
 * - `user`: a user's bearer token, verified by the gateway and again by the service;
 * - `user-at-service`: a user's bearer token that only the service verifies (the refresh call carries the token it
 *   refreshes);
 * - `provider`: a payment provider, authenticated by a signature rather than a token, limited on a budget of its own
 *   and answered `{ error }` instead of problem+json;
 * - `service`: the deployment's SERVICE_TOKEN (operators and Prometheus), never a user's token.
 */
export type Access = 'public' | 'user' | 'user-at-service' | 'provider' | 'service';

export type HttpMethod = 'get' | 'post' | 'put' | 'patch' | 'delete';

/** The document's groups of operations, in the order it lists them. */
export const TAGS = {
  Discovery: 'Versions and this documentation',
  Authentication: 'Tokens: log in, refresh, log out, and the keys that verify them',
  Users: 'Registration and your own user',
  'API keys': 'Keys for servers: secret or restricted to scopes, shown once, revoked at once',
  Administration: 'What only admins may do',
  Accounts: 'Accounts, one currency each',
  'Money operations': 'Deposits, withdrawals and transfers: accepted at once (202), completed asynchronously',
  Transactions: 'Transactions and their history',
  Currencies: 'The ISO 4217 catalogue (public, cacheable)',
  'Exchange rates': 'Rates between currencies (v1.1), cached with a TTL',
  Webhooks: 'Called by the payment provider; errors are `{ "error": string }`',
  'Webhook endpoints': 'Outgoing webhooks: where we POST events about your transactions, accounts and user',
  Operations: 'Probes and metrics',
} as const;
export type Tag = keyof typeof TAGS;

/** Request headers an operation reads, described once in the document's components. */
export type RequestHeader = 'IdempotencyKey' | 'IfMatch' | 'WebhookSignature' | 'ProviderSignature';

/** Response headers a success may carry, described once in the document's components. */
export type ResponseHeader =
  'Location' | 'ETag' | 'IdempotentReplayed' | 'CacheControl' | 'Link' | 'ContentDisposition';

/** Error statuses; 400 (version), 429, 500 and 503 apply to every operation and need not be listed. */
export type ErrorStatus = 400 | 401 | 403 | 404 | 409 | 413 | 415 | 422;

/** One operation of the API, by its operationId: everything the gateway, the document and the client know of it. */
export interface Operation {
  method: HttpMethod;
  /** The path template, e.g. `/account/{id}/deposit`. */
  path: string;
  owner: Owner;
  access: Access;
  tag: Tag;
  summary: string;
  description?: string;
  /** The query schema the service validates with; each property becomes a parameter. */
  query?: QueryName;
  /** Query parameters a service reads without a schema. */
  extraQuery?: { name: string; description: string; schema: Record<string, unknown> }[];
  headers?: RequestHeader[];
  /** The body is JSON and required, unless `bodyOptional`. */
  body?: ComponentName;
  bodyOptional?: true;
  success: {
    status: 200 | 201 | 202 | 204;
    description: string;
    /** The body's schema, or else a media type with no schema of ours. */
    schema?: ComponentName;
    mediaType?: 'text/html' | 'text/plain' | 'application/json';
    /** Another representation of the same answer, as plain text, beside the JSON schema. */
    alsoAs?: 'text/csv';
    headers?: ResponseHeader[];
  };
  /** Answers other than the success and the errors, e.g. 304 for conditional reads, 503 for /ready. */
  alsoAnswers?: (304 | 503)[];
  errors: ErrorStatus[];
}

/**
 * Examples of an operation's bodies, shown in the document beside their schemas. A test validates each against
 * the schema the document gives it and fails for an operation that has a body but no example of it.
 */
export interface OperationExamples {
  /** A request body, valid against `body`: required when the operation takes one. */
  request?: unknown;
  /** The success's body: valid against `success.schema`, or the text of `success.mediaType`. */
  response?: unknown;
  /** The success in its other representation (`success.alsoAs`), e.g. a CSV statement. */
  alternative?: string;
}

export const PROTECTED: ErrorStatus[] = [401, 403];
export const JSON_BODY: ErrorStatus[] = [400, 413, 415];
