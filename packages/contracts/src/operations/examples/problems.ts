import { buildProblem, type ErrorCode, type Problem } from '../../errors.js';
import { completedDeposit, EVENT, SETTLED_AT, USD_ACCOUNT, WITHDRAWAL } from './samples.js';

const account = `/v1.1/account/${USD_ACCOUNT}`;

/** One problem+json example for each error code: the document shows them under the shared error responses. */
export const PROBLEM_EXAMPLES: Record<ErrorCode, Problem> = {
  AUTH_REQUIRED: buildProblem('AUTH_REQUIRED', 'A bearer token or API key is required', '/v1.1/accounts'),
  INVALID_CREDENTIALS: buildProblem('INVALID_CREDENTIALS', 'Invalid username or password', '/auth/login'),
  ACCESS_DENIED: buildProblem('ACCESS_DENIED', 'This account belongs to another user', account),
  RESOURCE_NOT_FOUND: buildProblem('RESOURCE_NOT_FOUND', 'Account not found', account),
  DUPLICATE_ENTRY: buildProblem(
    'DUPLICATE_ENTRY',
    'The reference order-8812 names another of your transactions',
    `${account}/deposit`,
  ),
  INSUFFICIENT_FUNDS: buildProblem(
    'INSUFFICIENT_FUNDS',
    'The available balance is 1250.00 USD; the withdrawal needs 5000.00 USD',
    `${account}/withdraw`,
  ),
  INVALID_CURRENCY: buildProblem(
    'INVALID_CURRENCY',
    'The account holds USD; the request names EUR',
    `${account}/deposit`,
  ),
  VALIDATION_ERROR: buildProblem('VALIDATION_ERROR', 'The request body is invalid', `${account}/deposit`, [
    { field: 'amount', message: 'is required' },
    { field: 'metadata.order', message: 'must NOT have more than 500 characters' },
  ]),
  RATE_LIMIT_EXCEEDED: buildProblem(
    'RATE_LIMIT_EXCEEDED',
    'Too many requests; retry after 7 s',
    '/v1.1/accounts',
  ),
  INTERNAL_ERROR: buildProblem('INTERNAL_ERROR', 'An unexpected error occurred', `${account}/transfer`),
  CONFLICT: buildProblem(
    'CONFLICT',
    'The Idempotency-Key was used with another request body',
    `${account}/deposit`,
  ),
  INVALID_AMOUNT: buildProblem('INVALID_AMOUNT', 'USD amounts have at most 2 decimals', `${account}/deposit`),
  BUSINESS_RULE_VIOLATION: buildProblem(
    'BUSINESS_RULE_VIOLATION',
    'Link a payout account before withdrawing',
    `${account}/withdraw`,
  ),
  PAYLOAD_TOO_LARGE: buildProblem(
    'PAYLOAD_TOO_LARGE',
    'The body is larger than 100 kB',
    `${account}/deposit`,
  ),
  UNSUPPORTED_MEDIA_TYPE: buildProblem(
    'UNSUPPORTED_MEDIA_TYPE',
    'Send the body as application/json',
    `${account}/deposit`,
  ),
  PAYOUTS_NOT_ENABLED: buildProblem(
    'PAYOUTS_NOT_ENABLED',
    'The provider does not pay out to your payout account acct_1PqR8sLkdIwHu7ix yet (requirements.past_due); ' +
      'still due: individual.id_number. Complete its onboarding (POST /payout-account gives the link), then withdraw',
    `${account}/withdraw`,
  ),
  SERVICE_UNAVAILABLE: buildProblem(
    'SERVICE_UNAVAILABLE',
    'The ledger is unavailable; retry after the Retry-After delay',
    `/v1.1/transaction/${WITHDRAWAL}`,
  ),
};

/** What a provider's webhook is answered on an error, by status. */
export const WEBHOOK_ERROR_EXAMPLES: Record<number, { error: string }> = {
  400: { error: 'Invalid signature' },
  404: { error: 'Unknown payment' },
  413: { error: 'Payload too large' },
  429: { error: 'Too many requests' },
  500: { error: 'Internal error' },
  503: { error: 'Service unavailable' },
};

/** An event as a registered endpoint receives it. */
export const WEBHOOK_EVENT_EXAMPLE = {
  id: EVENT,
  object: 'event',
  type: 'transaction.completed',
  api_version: '1.1',
  created: Math.floor(Date.parse(SETTLED_AT) / 1000),
  created_at: SETTLED_AT,
  data: { object: { ...completedDeposit, updated_at: SETTLED_AT } },
};
