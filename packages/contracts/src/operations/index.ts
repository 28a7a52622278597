import { QUEUES, type QueueKey } from '../queues.js';
import { CURRENCY_OPERATIONS } from './currency-operations.js';
import { DEAD_LETTER_OPERATIONS } from './dead-letter-operations.js';
import { EVENT_OPERATIONS } from './event-operations.js';
import { GATEWAY_OPERATIONS } from './gateway-operations.js';
import { IDENTITY_OPERATIONS } from './identity-operations.js';
import { LEDGER_ADMIN_OPERATIONS } from './ledger-admin-operations.js';
import { LEDGER_OPERATIONS } from './ledger-operations.js';
import { SERVICES, type ServiceName } from './operation.js';
import { PROVIDER_WEBHOOK_OPERATIONS } from './provider-webhook-operations.js';
import { WEBHOOK_ENDPOINT_OPERATIONS } from './webhook-endpoint-operations.js';

export {
  OPERATION_EXAMPLES,
  PROBLEM_EXAMPLES,
  WEBHOOK_ERROR_EXAMPLES,
  WEBHOOK_EVENT_EXAMPLE,
} from './examples/index.js';
export {
  SERVICES,
  TAGS,
  type Access,
  type ErrorStatus,
  type HttpMethod,
  type Operation,
  type OperationExamples,
  type Owner,
  type RequestHeader,
  type ResponseHeader,
  type ServiceName,
  type Tag,
} from './operation.js';

/**
 * Every operation of the API by its operationId, in the order the document lists them: the gateway's routing, the
 * OpenAPI document and the client's requests are all derived from this, and each service serves its own.
 */
export const OPERATIONS = {
  ...GATEWAY_OPERATIONS,
  ...IDENTITY_OPERATIONS,
  ...DEAD_LETTER_OPERATIONS,
  ...LEDGER_ADMIN_OPERATIONS,
  ...LEDGER_OPERATIONS,
  ...CURRENCY_OPERATIONS,
  ...WEBHOOK_ENDPOINT_OPERATIONS,
  ...EVENT_OPERATIONS,
  ...PROVIDER_WEBHOOK_OPERATIONS,
};
export type OperationId = keyof typeof OPERATIONS;

/**
 * The queues whose dead letters the API serves: each is named by the service that consumes it, which answers for
 * it (the provider sandbox's queue has no service behind the gateway).
 */
export const DEAD_LETTER_QUEUES = (Object.keys(QUEUES) as QueueKey[]).filter(
  (queue): queue is QueueKey & ServiceName => (SERVICES as readonly string[]).includes(queue),
);
