import type { TObject } from '@sinclair/typebox';
import {
  AdminActionQuery,
  BalanceQuery,
  DeadLetterQuery,
  WebhookDeliveryListQuery,
  WebhookEndpointListQuery,
  CurrencyPageQuery,
  CurrencySearchQuery,
  HistoryQuery,
  PageQuery,
  RatesQuery,
  ReconciliationQuery,
  StatementQuery,
  UserSearchQuery,
} from '@payments/contracts';

export type HttpMethod = 'get' | 'post' | 'put' | 'patch' | 'delete';

export type Tag =
  | 'Discovery'
  | 'Authentication'
  | 'Users'
  | 'Administration'
  | 'Accounts'
  | 'Money operations'
  | 'Transactions'
  | 'Currencies'
  | 'Exchange rates'
  | 'Webhooks'
  | 'Webhook endpoints'
  | 'Operations';

/** Request headers an operation reads, described once in the document's components. */
export type RequestHeader = 'IdempotencyKey' | 'IfMatch' | 'WebhookSignature' | 'ProviderSignature';

/** Response headers a success may carry, described once in the document's components. */
export type ResponseHeader =
  'Location' | 'ETag' | 'IdempotentReplayed' | 'CacheControl' | 'Link' | 'ContentDisposition';

/** Error statuses; 400 (version), 429, 500 and 503 apply to every operation and need not be listed. */
export type ErrorStatus = 400 | 401 | 403 | 404 | 409 | 413 | 415 | 422;

export interface Operation {
  method: HttpMethod;
  /** The OpenAPI path template, e.g. `/account/{id}/deposit`. */
  path: string;
  operationId: string;
  tag: Tag;
  summary: string;
  description?: string;
  /** The contracts schema the service validates the query with; each property becomes a parameter. */
  query?: TObject;
  /** Query parameters a service reads without a schema. */
  extraQuery?: { name: string; description: string; schema: Record<string, unknown> }[];
  headers?: RequestHeader[];
  /** A component schema name; the body is JSON and required, unless `bodyOptional`. */
  body?: string;
  bodyOptional?: true;
  success: {
    status: 200 | 201 | 202 | 204;
    description: string;
    /** A component schema name, or a media type with no schema of ours. */
    schema?: string;
    mediaType?: 'text/html' | 'text/plain' | 'application/json';
    /** Another representation of the same answer, as plain text, beside the JSON schema. */
    alsoAs?: 'text/csv';
    headers?: ResponseHeader[];
  };
  /** Answers other than the success and the errors, e.g. 304 for conditional reads, 503 for /ready. */
  alsoAnswers?: (304 | 503)[];
  errors: ErrorStatus[];
  /** Webhooks answer errors with `{ error }` instead of problem+json. */
  errorBody?: 'problem' | 'webhook';
  /** Which operations take a token: by default the gateway's public-route list decides. `service`: SERVICE_TOKEN. */
  security?: 'bearer' | 'service';
}

const PROTECTED: ErrorStatus[] = [401, 403];
const JSON_BODY: ErrorStatus[] = [400, 413, 415];

/** Every operation the gateway serves or routes, in the order the document lists them. */
export const OPERATIONS: readonly Operation[] = [
  {
    method: 'get',
    path: '/',
    operationId: 'discoverVersions',
    tag: 'Discovery',
    summary: 'List the API versions',
    success: { status: 200, description: 'The versions served', schema: 'Discovery' },
    errors: [],
  },
  {
    method: 'get',
    path: '/openapi.json',
    operationId: 'getOpenApiDocument',
    tag: 'Discovery',
    summary: 'This document',
    success: { status: 200, description: 'The OpenAPI 3.1 document', mediaType: 'application/json' },
    errors: [],
  },
  {
    method: 'get',
    path: '/docs',
    operationId: 'getApiDocumentation',
    tag: 'Discovery',
    summary: 'This document, rendered',
    success: { status: 200, description: 'An HTML page', mediaType: 'text/html' },
    errors: [],
  },
  {
    method: 'get',
    path: '/health',
    operationId: 'checkHealth',
    tag: 'Operations',
    summary: 'Liveness',
    success: { status: 200, description: 'The gateway is up', schema: 'Health' },
    errors: [],
  },
  {
    method: 'get',
    path: '/ready',
    operationId: 'checkReadiness',
    tag: 'Operations',
    summary: 'Readiness: every service behind the gateway is ready',
    description: 'Answers 503 with the same body while any service is not ready.',
    success: { status: 200, description: 'Every service is ready', schema: 'Readiness' },
    alsoAnswers: [503],
    errors: [401],
    security: 'service',
  },
  {
    method: 'get',
    path: '/metrics',
    operationId: 'getMetrics',
    tag: 'Operations',
    summary: 'Prometheus metrics',
    success: { status: 200, description: 'The Prometheus text format', mediaType: 'text/plain' },
    errors: [401],
    security: 'service',
  },
  {
    method: 'post',
    path: '/auth/login',
    operationId: 'login',
    tag: 'Authentication',
    summary: 'Log in',
    description:
      'Give the password and exactly one of `username`, `email` or `identity`. Repeated failures for one identity ' +
      'or from one address are refused with 429 for a while.',
    body: 'Login',
    success: { status: 200, description: 'A bearer token', schema: 'Token', headers: ['CacheControl'] },
    errors: [...JSON_BODY, 401, 403],
  },
  {
    method: 'post',
    path: '/login',
    operationId: 'loginAlias',
    tag: 'Authentication',
    summary: 'Log in (same as POST /auth/login)',
    body: 'Login',
    success: { status: 200, description: 'A bearer token', schema: 'Token', headers: ['CacheControl'] },
    errors: [...JSON_BODY, 401, 403],
  },
  {
    method: 'post',
    path: '/auth/refresh',
    operationId: 'refreshToken',
    tag: 'Authentication',
    summary: 'Exchange a valid token for a fresh one',
    description:
      'Once per token: of concurrent refreshes of one token one succeeds, the others get 401. The new token keeps ' +
      "the session's login time (`auth_time`); a session ends `SESSION_MAX_SECONDS` (12 h) after its login.",
    success: { status: 200, description: 'A new bearer token', schema: 'Token', headers: ['CacheControl'] },
    errors: PROTECTED,
    // Public at the edge because identity checks the token it refreshes itself.
    security: 'bearer',
  },
  {
    method: 'post',
    path: '/auth/logout',
    operationId: 'logout',
    tag: 'Authentication',
    summary: 'Revoke the token used for this call, everywhere',
    success: { status: 204, description: 'Revoked' },
    errors: PROTECTED,
  },
  {
    method: 'get',
    path: '/.well-known/jwks.json',
    operationId: 'getSigningKeys',
    tag: 'Authentication',
    summary: 'The public keys tokens are verified with (JWKS)',
    success: { status: 200, description: 'A JSON Web Key Set', schema: 'Jwks', headers: ['CacheControl'] },
    errors: [],
  },
  {
    method: 'post',
    path: '/user',
    operationId: 'registerUser',
    tag: 'Users',
    summary: 'Register',
    description: 'Registrations from one client address are limited (429 with `Retry-After`).',
    body: 'NewUser',
    success: {
      status: 201,
      description: 'The user, without sensitive fields',
      schema: 'User',
      headers: ['Location', 'ETag'],
    },
    errors: [...JSON_BODY, 409],
  },
  {
    method: 'get',
    path: '/user/{id}',
    operationId: 'getUser',
    tag: 'Users',
    summary: 'Read a user (yourself, or anyone as an admin)',
    success: { status: 200, description: 'The user', schema: 'User', headers: ['ETag'] },
    errors: [...PROTECTED, 404],
  },
  {
    method: 'put',
    path: '/user/{id}',
    operationId: 'updateUser',
    tag: 'Users',
    summary: 'Change username, e-mail or password (partial update)',
    description:
      'Other fields are refused with 400. With `If-Match`, a stale version gives 409. A new e-mail or password ' +
      "needs the caller's `current_password` (missing: 422, wrong: 403, counted as a failed login); a password " +
      'changed by a concurrent request meanwhile gives 409. A new password revokes every other token issued ' +
      'before it.',
    headers: ['IfMatch'],
    body: 'UserUpdate',
    success: { status: 200, description: 'The updated user', schema: 'User', headers: ['ETag'] },
    errors: [...JSON_BODY, ...PROTECTED, 404, 409, 422],
  },
  {
    method: 'delete',
    path: '/user/{id}',
    operationId: 'deleteUser',
    tag: 'Users',
    summary: 'Delete a user with their accounts and transactions',
    description:
      'Needs `?confirm=true` or a body of `{ "confirm": true }`. A user with a non-zero balance, a pending ' +
      'transaction or a pending transfer on its way in cannot be deleted (422); the ledger decides this ' +
      'atomically against every money movement. An admin deleting another user may say why (`reason`); the ' +
      'deletion lands in the trail of admin actions (GET /admin/actions).',
    extraQuery: [
      {
        name: 'confirm',
        description: 'Must be `true` unless the body confirms',
        schema: { type: 'string', enum: ['true'] },
      },
    ],
    body: 'UserDeletion',
    bodyOptional: true,
    success: { status: 204, description: 'Deleted' },
    errors: [...JSON_BODY, ...PROTECTED, 404, 422],
  },
  {
    method: 'patch',
    path: '/admin/users/{id}/status',
    operationId: 'setUserStatus',
    tag: 'Administration',
    summary: 'Activate, disable or lock a user (admins only)',
    description:
      'Disabling or locking revokes the user’s tokens. Each change lands in the trail of admin actions (GET ' +
      '/admin/actions) with its optional `reason`, in the same transaction: a change the trail cannot take is ' +
      'not made.',
    body: 'StatusChange',
    success: { status: 200, description: 'The user', schema: 'User', headers: ['ETag'] },
    errors: [...JSON_BODY, ...PROTECTED, 404, 422],
  },
  {
    method: 'get',
    path: '/admin/users',
    operationId: 'findUsers',
    tag: 'Administration',
    summary: 'Find users by username, e-mail, the start of either, or status (admins only)',
    description:
      '`username` and `email` match exactly, in any case; `q` matches the start of a username or an e-mail ' +
      'address, in any case; `status` keeps one status. Criteria combine (all must hold); without any, every ' +
      'user. Ordered by username.',
    query: UserSearchQuery,
    success: { status: 200, description: 'A page of users', schema: 'UserPage' },
    errors: [400, ...PROTECTED],
  },
  {
    method: 'get',
    path: '/admin/dead-letters/{queue}',
    operationId: 'listDeadLetters',
    tag: 'Administration',
    summary: 'The dead letters of a consumer queue, left where they are (admins only)',
    description:
      'Events a consumer gave up on: not JSON, failing their schema, refused by their handler, or failing past ' +
      'the queue’s delivery limit. Each is shown as its event envelope where its body is JSON (`event`), else as ' +
      'the text it is (`raw`); `count` is how many the dead-letter queue holds. The consuming service answers ' +
      '(503 while it cannot reach the broker).',
    query: DeadLetterQuery,
    success: { status: 200, description: 'The dead letters, oldest first', schema: 'DeadLetterList' },
    errors: [400, ...PROTECTED, 404],
  },
  {
    method: 'post',
    path: '/admin/dead-letters/{queue}/replay',
    operationId: 'replayDeadLetters',
    tag: 'Administration',
    summary: 'Move dead letters back onto their queue, to be consumed again (admins only)',
    description:
      'Up to `limit` of them, oldest first; without a body or a `limit`, every dead letter the queue holds ' +
      'when the replay starts. Each is taken off the dead-letter queue once the broker holds it on the queue, ' +
      'with a fresh delivery count. Every consumer applies an event once, so replaying one that took effect ' +
      'changes nothing; one that fails again returns to the dead-letter queue. The replay is recorded in the ' +
      'trail of admin actions, with its optional `reason`, before it is made: a replay the trail cannot take is ' +
      'not made.',
    body: 'DeadLetterReplay',
    bodyOptional: true,
    success: { status: 200, description: 'How many were moved', schema: 'DeadLetterReplayResult' },
    errors: [...JSON_BODY, ...PROTECTED, 404],
  },
  {
    method: 'get',
    path: '/admin/reconciliation',
    operationId: 'listReconciliation',
    tag: 'Administration',
    summary: 'What waits for reconciliation with the payment provider (admins only)',
    description:
      'One list, told apart by `kind`. First the withdrawals handed to the provider that got no confirmation ' +
      'within the hold expiry (`unconfirmed_withdrawal`): they stay pending with their hold (never released by a ' +
      'timer); the provider’s late payout.paid or payout.failed settles them once, and they leave this list. Then ' +
      'the open mismatches reconciliation found between the provider’s own records and the books, compared net ' +
      '(`captured_not_credited`, `credited_not_captured`, `dispute_still_held`, `amount_differs`, `paid_out_still_held`, ' +
      '`failed_still_held`, `paid_out_not_debited`, `returned_not_credited`, `transfer_not_reversed`, ' +
      '`unknown_to_ledger`); a case leaves the list when an admin decides it or when the two agree again. With ' +
      '`format=csv` the answer is the whole list as a `text/csv` report (RFC 4180, amounts as decimal strings).',
    query: ReconciliationQuery,
    success: {
      status: 200,
      description: 'A page of what waits',
      schema: 'ReconciliationPage',
      alsoAs: 'text/csv',
      headers: ['ContentDisposition'],
    },
    errors: [400, ...PROTECTED],
  },
  {
    method: 'post',
    path: '/admin/reconciliation/runs',
    operationId: 'runReconciliation',
    tag: 'Administration',
    summary: 'Reconcile the books with the payment provider’s records now (admins only)',
    description:
      'Pages through what the provider made since the last run’s cursor (payments, refunds, disputes, transfers ' +
      'and payouts), compares each with the books, opens a case for each mismatch and clears the cases that agree ' +
      'again. The ledger also runs it every `RECONCILIATION_INTERVAL_SECONDS`. 409 while a run is under way; 422 ' +
      'where no provider is configured.',
    success: { status: 200, description: 'What the run read and found', schema: 'ReconciliationRun' },
    errors: [...PROTECTED, 409, 422],
  },
  {
    method: 'get',
    path: '/admin/reconciliation/cases/{id}',
    operationId: 'getReconciliationCase',
    tag: 'Administration',
    summary: 'One reconciliation case, open or decided (admins only)',
    success: { status: 200, description: 'The case', schema: 'ReconciliationCase' },
    errors: [...PROTECTED, 404],
  },
  {
    method: 'post',
    path: '/admin/reconciliation/cases/{id}/resolution',
    operationId: 'resolveReconciliationCase',
    tag: 'Administration',
    summary: 'Decide a reconciliation case, with a reason (admins only)',
    description:
      '`book` applies what the provider’s records say now to the transaction, through the same flows as the ' +
      'provider’s events and under the same locks: a capture credited (or, for a deposit that ended, credited as ' +
      'a late payment), a refund or lost dispute reversed, a payout debited, or its failure released and its ' +
      'transfer taken back. Each books once, whatever arrives later. 409 when the provider’s records do not ' +
      'explain the difference; 422 for money the books never took in (`duplicate_capture`, ' +
      '`duplicate_transfer`, `foreign_object`, `unknown_to_ledger`), which is given back instead: `refund` ' +
      'refunds such a payment to its payer in full at the provider, `reverse` takes such a transfer back from the ' +
      'connected account (never the object the ledger asked for: 422), each once under a key of the case. ' +
      '`nothing_owed` records that nothing is. The same decision again answers the decided case; another is a ' +
      '409. Every decision lands in the trail of admin actions (GET /admin/actions).',
    body: 'ReconciliationDecision',
    success: { status: 200, description: 'The decided case', schema: 'ReconciliationCase' },
    errors: [...JSON_BODY, ...PROTECTED, 404, 409, 422],
  },
  {
    method: 'get',
    path: '/admin/actions',
    operationId: 'listAdminActions',
    tag: 'Administration',
    summary: 'The append-only trail of admin actions: who, when, what, whose and why (admins only)',
    description:
      'Every action an admin takes on another user’s resource, in any service (a user’s status or deletion, a ' +
      'webhook endpoint disabled, enabled or deleted, a delivery sent again), on the platform’s own (a ' +
      'dead-letter replay), and every reconciliation decision. `owner` is the user the resource belongs to; ' +
      '`actor` and `owner` narrow the list to one admin’s actions or to one user’s resources. Reading is not ' +
      'an action and is not listed.',
    query: AdminActionQuery,
    success: { status: 200, description: 'A page of actions, oldest first', schema: 'AdminActionPage' },
    errors: [400, ...PROTECTED],
  },
  {
    method: 'get',
    path: '/admin/overdrawn-accounts',
    operationId: 'listOverdrawnAccounts',
    tag: 'Administration',
    summary: 'Accounts a refund or lost dispute took below zero, and the platform losses (admins only)',
    description:
      'A reversal takes back what the provider took back, even when the user has already moved the money on: ' +
      'the only way an account goes below zero. Nothing can be withdrawn or transferred from such an account; ' +
      'it leaves this list once deposits make it up. Furthest below zero first. Also counted by the ledger’s ' +
      '`ledger_accounts_overdrawn_by_reversal` gauge and listed by its audit. Every page also reports, per ' +
      'currency, what live users owe and what the platform lost (`by_currency`), and the latest platform losses: ' +
      'refunds and lost disputes of deleted users’ deposits, booked against the loss account ' +
      '(`platform_losses`; gauge `ledger_platform_losses`).',
    query: PageQuery,
    success: { status: 200, description: 'A page of accounts', schema: 'OverdrawnAccountPage' },
    errors: [400, ...PROTECTED],
  },
  {
    method: 'post',
    path: '/account',
    operationId: 'openAccount',
    tag: 'Accounts',
    summary: 'Open an account in a supported currency',
    body: 'OpenAccount',
    success: { status: 201, description: 'The account', schema: 'Account', headers: ['Location'] },
    errors: [...JSON_BODY, ...PROTECTED, 422],
  },
  {
    method: 'get',
    path: '/accounts',
    operationId: 'listAccounts',
    tag: 'Accounts',
    summary: 'Your accounts',
    query: PageQuery,
    success: { status: 200, description: 'A page of accounts', schema: 'AccountPage' },
    errors: [400, ...PROTECTED],
  },
  {
    method: 'get',
    path: '/account/{id}',
    operationId: 'getAccount',
    tag: 'Accounts',
    summary: 'An account',
    success: { status: 200, description: 'The account', schema: 'Account' },
    errors: [...PROTECTED, 404],
  },
  {
    method: 'get',
    path: '/account/{id}/balance',
    operationId: 'getBalance',
    tag: 'Accounts',
    summary: 'The balance of an account, now or at a past moment',
    description:
      'Without `at`: the booked and the available balance now. With `at`: the booked balance at that moment, the ' +
      'sum of the entries booked before it (an entry at exactly `at` is not yet in it), so it equals the ' +
      '`opening_balance` of a statement from `at`. No `available_balance` then: holds are not journaled, so a ' +
      'past available balance is not known. A moment in the future is answered as of now.',
    query: BalanceQuery,
    success: { status: 200, description: 'The balance', schema: 'BalanceAnswer' },
    errors: [400, ...PROTECTED, 404],
  },
  {
    method: 'get',
    path: '/account/{id}/statement',
    operationId: 'getStatement',
    tag: 'Accounts',
    summary: 'A statement: opening balance, each entry with the running balance, closing balance',
    description:
      'The period is `[from, to)`: an entry at exactly `from` is in it, one at exactly `to` in the next period. ' +
      'Both are RFC 3339 date-times with an offset (`Z` or `±hh:mm`); `to` defaults to now and is never later ' +
      'than now, `from` defaults to 30 days before `to`. Entries are the account’s journal, oldest first: credits ' +
      'positive, debits negative with their fee included, of any transaction type; a running balance may be ' +
      'negative. Every page is read from one consistent snapshot, so `opening_balance` plus the amounts is ' +
      '`closing_balance` even while money moves. Pages hold up to `limit` entries; while `has_more`, ask again with ' +
      '`starting_after` set to the last entry’s `id`. With `format=csv` the answer is `text/csv` (RFC 4180, a ' +
      'header row, amounts as decimal strings with the currency’s decimals), with an `opening_balance` row on the ' +
      'first page, a `closing_balance` row on the last, and a `Link: <…>; rel="next"` header while more follow. ' +
      'An entry booked in the last few seconds may still appear in a period that has just ended: its time is ' +
      'when its transaction began.',
    query: StatementQuery,
    success: {
      status: 200,
      description: 'One page of the statement',
      schema: 'Statement',
      alsoAs: 'text/csv',
      headers: ['CacheControl', 'Link', 'ContentDisposition'],
    },
    errors: [400, ...PROTECTED, 404],
  },
  {
    method: 'get',
    path: '/account/{id}/transactions',
    operationId: 'listAccountTransactions',
    tag: 'Transactions',
    summary: 'The transaction history of an account',
    query: HistoryQuery,
    success: { status: 200, description: 'A page of transactions, newest first', schema: 'TransactionPage' },
    errors: [400, ...PROTECTED, 404],
  },
  {
    method: 'post',
    path: '/payout-account',
    operationId: 'linkPayoutAccount',
    tag: 'Accounts',
    summary: 'Make and link the account at the payment provider your withdrawals are paid out to',
    description:
      'The ledger makes a connected account for you at the provider (Stripe Connect) and links it: 201 the first ' +
      'time, 200 after (the same account). `onboarding_url` is where you complete the provider’s onboarding; post ' +
      'again for a fresh link. 422 where no provider is configured, 503 while it cannot be reached.',
    success: { status: 201, description: 'The linked payout account', schema: 'PayoutAccount' },
    alsoAnswers: [503],
    errors: [...PROTECTED, 422],
  },
  {
    method: 'get',
    path: '/payout-account',
    operationId: 'getPayoutAccount',
    tag: 'Accounts',
    summary: 'The account at the payment provider your withdrawals are paid out to',
    success: { status: 200, description: 'The linked payout account', schema: 'PayoutAccount' },
    errors: [...PROTECTED, 404],
  },
  ...(['deposit', 'withdraw', 'transfer'] as const).map((kind): Operation => ({
    method: 'post',
    path: `/account/{id}/${kind}`,
    operationId: kind,
    tag: 'Money operations',
    summary: {
      deposit: 'Deposit: pending until the payment provider confirms it',
      withdraw: 'Withdraw: funds held now, debited when the provider pays out',
      transfer: 'Transfer to another account, converted when the currencies differ (v1.1)',
    }[kind],
    description:
      'Accepted at once (202) as a pending transaction; follow `Location` for its status. The same ' +
      '`Idempotency-Key` with the same body replays the first answer; with another body it is a 409. The ' +
      '`currency` must be the account’s (422 INVALID_CURRENCY); an amount with too many decimals, zero or ' +
      'negative is a 422, and so is a withdrawal or transfer the available balance does not cover ' +
      '(INSUFFICIENT_FUNDS). Where a payment provider pays withdrawals out, a withdrawal that passes those checks ' +
      'by a user without a payout account links one first, as POST /payout-account does; in production it is a ' +
      '422 BUSINESS_RULE_VIOLATION instead, and nothing is held.',
    headers: ['IdempotencyKey'],
    body: kind === 'transfer' ? 'TransferRequest' : 'MoneyRequest',
    success: {
      status: 202,
      description: 'The pending transaction',
      schema: 'Transaction',
      headers: ['Location', 'IdempotentReplayed'],
    },
    errors: [...JSON_BODY, ...PROTECTED, 404, 409, 422],
  })),
  {
    method: 'get',
    path: '/transactions',
    operationId: 'listTransactions',
    tag: 'Transactions',
    summary: 'Your transactions',
    query: HistoryQuery,
    success: { status: 200, description: 'A page of transactions, newest first', schema: 'TransactionPage' },
    errors: [400, ...PROTECTED],
  },
  {
    method: 'get',
    path: '/transaction/{id}',
    operationId: 'getTransaction',
    tag: 'Transactions',
    summary: 'A transaction and its status',
    description:
      'A `reversal` (a provider’s refund or chargeback of a completed deposit) names the deposit in ' +
      '`original_transaction_id`; the deposit stays completed and both show in the history.',
    success: { status: 200, description: 'The transaction', schema: 'Transaction' },
    errors: [...PROTECTED, 404],
  },
  ...currencyOperations(),
  ...webhookEndpointOperations(),
  {
    method: 'post',
    path: '/webhook/payment',
    operationId: 'confirmPayment',
    tag: 'Webhooks',
    summary: 'Payment confirmation (unsigned; can be disabled)',
    body: 'PaymentWebhook',
    success: { status: 200, description: 'Recorded and published; an empty body' },
    errors: [400, 404, 413],
    errorBody: 'webhook',
  },
  {
    method: 'post',
    path: '/webhook/payment-status',
    operationId: 'reportPaymentStatus',
    tag: 'Webhooks',
    summary: 'Signed payment status report',
    headers: ['WebhookSignature'],
    body: 'PaymentStatusWebhook',
    success: { status: 200, description: 'Recorded and published; an empty body' },
    errors: [400, 413],
    errorBody: 'webhook',
  },
  {
    method: 'post',
    path: '/webhook/provider',
    operationId: 'receiveProviderEvent',
    tag: 'Webhooks',
    summary: 'Signed provider event (Stripe-style)',
    description:
      'Payments and payouts confirm or fail transactions. `charge.refunded` (the charge with its cumulative ' +
      '`amount_refunded`) and `charge.dispute.created` / `charge.dispute.closed` reverse a completed deposit: a ' +
      '`reversal` transaction linked to it. Each refunded total and each dispute takes effect once, whatever the ' +
      'redeliveries and their order.',
    headers: ['ProviderSignature'],
    body: 'ProviderEvent',
    success: { status: 200, description: 'Recorded (and published when it moves money); an empty body' },
    errors: [400, 413],
    errorBody: 'webhook',
  },
];

function currencyOperations(): Operation[] {
  const read = (
    path: string,
    operationId: string,
    summary: string,
    schema: string,
    extra: Partial<Operation> = {},
  ): Operation => ({
    method: 'get',
    path,
    operationId,
    tag: 'Currencies',
    summary,
    success: { status: 200, description: summary, schema, headers: ['ETag', 'CacheControl'] },
    alsoAnswers: [304],
    errors: path.includes('{') ? [400, 404] : [],
    ...extra,
  });
  return [
    read('/api/currencies', 'listCurrencies', 'Every active ISO 4217 currency', 'CurrencyPage', {
      query: CurrencyPageQuery,
      errors: [400],
    }),
    read(
      '/api/currencies/supported',
      'listSupportedCurrencies',
      'The currencies accounts may use',
      'CurrencyList',
    ),
    read(
      '/api/currencies/search',
      'searchCurrencies',
      'Currencies matching a code, name or country',
      'CurrencyList',
      {
        query: CurrencySearchQuery,
        errors: [400],
      },
    ),
    read(
      '/api/currencies/statistics',
      'getCurrencyStatistics',
      'Counts by region, exponent and accounts',
      'CurrencyStatistics',
    ),
    read('/api/currencies/default', 'getDefaultCurrency', 'The default currency', 'Currency'),
    {
      method: 'get',
      path: '/api/currencies/rates',
      operationId: 'listExchangeRates',
      tag: 'Exchange rates',
      summary: 'Exchange rates against a base currency (v1.1, cached)',
      query: RatesQuery,
      success: { status: 200, description: 'The rates', schema: 'RateTable', headers: ['CacheControl'] },
      errors: [400, 404],
    },
    read(
      '/api/currencies/region/{region}',
      'listRegionCurrencies',
      'Currencies used in a region',
      'RegionCurrencies',
      {
        errors: [404],
      },
    ),
    read('/api/currencies/{code}', 'getCurrency', 'One currency', 'Currency'),
    read(
      '/api/currencies/{code}/supported',
      'checkCurrencySupported',
      'Whether a currency is supported',
      'CurrencySupport',
    ),
    {
      method: 'get',
      path: '/api/currencies/{from}/rate/{to}',
      operationId: 'getExchangeRate',
      tag: 'Exchange rates',
      summary: 'The rate from one currency to another (v1.1, cached)',
      success: { status: 200, description: 'The rate', schema: 'ExchangeRate', headers: ['CacheControl'] },
      errors: [400, 404],
    },
  ];
}

/** Path templates with their parameters as patterns, most specific (fewest parameters) first. */
const TEMPLATES = [...new Set(OPERATIONS.map((operation) => operation.path))]
  .map((template) => ({
    template,
    params: (template.match(/\{/g) ?? []).length,
    pattern: new RegExp(`^${template.replace(/[.]/g, '\\.').replace(/\{[^}]+\}/g, '[^/]+')}$`),
  }))
  .sort((a, b) => a.params - b.params);

/** The documented template a concrete path falls under (`/account/{id}/deposit`), for logs and metrics. */
/** Outgoing webhooks: a client's endpoints, their deliveries, and what each delivery sends (see `webhooks`). */
function webhookEndpointOperations(): Operation[] {
  const tag = 'Webhook endpoints' as const;
  return [
    {
      method: 'post',
      path: '/webhook-endpoints',
      operationId: 'createWebhookEndpoint',
      tag,
      summary: 'Register an endpoint for events; the signing secret is shown once',
      description:
        'The URL must be http or https and resolve only to public addresses (checked again at every delivery). ' +
        'Objects in deliveries are rendered at the API version this request is made with. Deliveries are signed ' +
        'in `Stripe-Signature` (`t=…,v1=…`, HMAC-SHA256 of `<t>.<body>`), at least once, with retries for 3 days; ' +
        'neither order nor uniqueness is promised: deduplicate on the event `id`. The endpoint is always the ' +
        'caller’s own: nobody, an admin included, creates one (and learns its secret) for someone else.',
      body: 'NewWebhookEndpoint',
      success: {
        status: 201,
        description: 'The endpoint, with its secret',
        schema: 'WebhookEndpointWithSecret',
        headers: ['Location'],
      },
      errors: [...JSON_BODY, ...PROTECTED, 422],
    },
    {
      method: 'get',
      path: '/webhook-endpoints',
      operationId: 'listWebhookEndpoints',
      tag,
      summary: 'Your endpoints (an admin’s: everyone’s, or one user’s)',
      query: WebhookEndpointListQuery,
      success: { status: 200, description: 'A page of endpoints', schema: 'WebhookEndpointPage' },
      errors: [400, ...PROTECTED],
    },
    {
      method: 'get',
      path: '/webhook-endpoints/{id}',
      operationId: 'getWebhookEndpoint',
      tag,
      summary: 'An endpoint (without its secret)',
      description:
        'An endpoint whose signing secret the service cannot open (sealed under a key an operator dropped too ' +
        'early) answers 500 saying so; its deliveries wait, and rotating its secret mends it.',
      success: { status: 200, description: 'The endpoint', schema: 'WebhookEndpoint' },
      errors: [...PROTECTED, 404],
    },
    {
      method: 'put',
      path: '/webhook-endpoints/{id}',
      operationId: 'updateWebhookEndpoint',
      tag,
      summary:
        'Change an endpoint’s URL, events, description or API version, or enable or disable it (partial)',
      description:
        'An admin may only enable or disable another user’s endpoint (403 for any other field: where its events ' +
        'go, which ones and how they are rendered and signed are its owner’s); that change lands in the trail ' +
        'of admin actions with its optional `reason`, or is not made.',
      body: 'WebhookEndpointUpdate',
      success: { status: 200, description: 'The endpoint', schema: 'WebhookEndpoint' },
      errors: [...JSON_BODY, ...PROTECTED, 404],
    },
    {
      method: 'delete',
      path: '/webhook-endpoints/{id}',
      operationId: 'deleteWebhookEndpoint',
      tag,
      summary: 'Delete an endpoint and its pending deliveries',
      description:
        'An admin deleting another user’s endpoint may say why (`reason`); the deletion lands in the trail of ' +
        'admin actions, or is not made.',
      body: 'AdminReason',
      bodyOptional: true,
      success: { status: 204, description: 'Deleted' },
      errors: [...JSON_BODY, ...PROTECTED, 404],
    },
    {
      method: 'post',
      path: '/webhook-endpoints/{id}/rotate-secret',
      operationId: 'rotateWebhookEndpointSecret',
      tag,
      summary: 'A new signing secret; the old one keeps signing too for the grace period (default 24 h)',
      description:
        'During the grace period every delivery carries two `v1=` signatures, one per secret, so a receiver ' +
        'holding either verifies it. The body is optional. Only the endpoint’s owner rotates it: an admin gets ' +
        '403, since whoever holds the secret can sign events the owner’s server trusts.',
      success: {
        status: 200,
        description: 'The endpoint, with its new secret',
        schema: 'WebhookEndpointWithSecret',
      },
      errors: [...JSON_BODY, ...PROTECTED, 404],
    },
    {
      method: 'get',
      path: '/webhook-endpoints/{id}/deliveries',
      operationId: 'listWebhookDeliveries',
      tag,
      summary: 'The delivery log of an endpoint, newest first',
      query: WebhookDeliveryListQuery,
      success: { status: 200, description: 'A page of deliveries', schema: 'WebhookDeliveryPage' },
      errors: [400, ...PROTECTED, 404],
    },
    {
      method: 'get',
      path: '/webhook-endpoints/{id}/deliveries/{delivery_id}',
      operationId: 'getWebhookDelivery',
      tag,
      summary: 'A delivery and each of its attempts (status code, latency, next retry)',
      success: { status: 200, description: 'The delivery', schema: 'WebhookDeliveryDetail' },
      errors: [...PROTECTED, 404],
    },
    {
      method: 'post',
      path: '/webhook-endpoints/{id}/deliveries/{delivery_id}/redeliver',
      operationId: 'redeliverWebhook',
      tag,
      summary: 'Send a delivery again now, with a fresh retry window',
      description:
        'An admin sending another user’s delivery again may say why (`reason`); it lands in the trail of admin ' +
        'actions, or is not sent.',
      body: 'AdminReason',
      bodyOptional: true,
      success: { status: 202, description: 'The delivery, due now', schema: 'WebhookDelivery' },
      errors: [...JSON_BODY, ...PROTECTED, 404, 409],
    },
  ];
}

export function pathTemplateOf(path: string): string | undefined {
  return TEMPLATES.find(({ pattern }) => pattern.test(path))?.template;
}
