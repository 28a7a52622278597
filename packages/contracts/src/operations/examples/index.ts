import type { OperationId } from '../index.js';
import type { OperationExamples } from '../operation.js';
import { CURRENCY_EXAMPLES } from './currency-examples.js';
import { DEAD_LETTER_EXAMPLES } from './dead-letter-examples.js';
import { EVENT_EXAMPLES } from './event-examples.js';
import { GATEWAY_EXAMPLES } from './gateway-examples.js';
import { IDENTITY_EXAMPLES } from './identity-examples.js';
import { LEDGER_ADMIN_EXAMPLES } from './ledger-admin-examples.js';
import { LEDGER_EXAMPLES } from './ledger-examples.js';
import { PROVIDER_WEBHOOK_EXAMPLES } from './provider-webhook-examples.js';
import { WEBHOOK_ENDPOINT_EXAMPLES } from './webhook-endpoint-examples.js';

export { PROBLEM_EXAMPLES, WEBHOOK_ERROR_EXAMPLES, WEBHOOK_EVENT_EXAMPLE } from './problems.js';

/**
 * The examples of each operation, by operationId, one file per module of operations. An operation without them is
 * named by the test of the document's examples (gateway/test/openapi-examples.test.ts).
 */
export const OPERATION_EXAMPLES: Partial<Record<OperationId, OperationExamples>> = {
  ...GATEWAY_EXAMPLES,
  ...IDENTITY_EXAMPLES,
  ...DEAD_LETTER_EXAMPLES,
  ...LEDGER_ADMIN_EXAMPLES,
  ...LEDGER_EXAMPLES,
  ...CURRENCY_EXAMPLES,
  ...WEBHOOK_ENDPOINT_EXAMPLES,
  ...EVENT_EXAMPLES,
  ...PROVIDER_WEBHOOK_EXAMPLES,
};
