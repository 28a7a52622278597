import type { EVENT_OPERATIONS } from '../event-operations.js';
import type { OperationExamples } from '../operation.js';
import { WEBHOOK_EVENT_EXAMPLE } from './problems.js';

export const EVENT_EXAMPLES: Record<keyof typeof EVENT_OPERATIONS, OperationExamples> = {
  listEvents: { response: { data: [WEBHOOK_EVENT_EXAMPLE], has_more: true } },
  getEvent: { response: WEBHOOK_EVENT_EXAMPLE },
};
