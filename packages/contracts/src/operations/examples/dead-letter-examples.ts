import type { DEAD_LETTER_OPERATIONS } from '../dead-letter-operations.js';
import type { OperationExamples } from '../operation.js';
import { DEPOSIT, EVENT, SETTLED_AT, USD_ACCOUNT } from './samples.js';

/** Examples of the dead-letter operations (admins only). */
export const DEAD_LETTER_EXAMPLES = {
  listDeadLetters: {
    response: {
      queue: 'webhook-delivery',
      count: 2,
      data: [
        {
          event: {
            id: EVENT,
            type: 'transaction.completed',
            occurred_at: SETTLED_AT,
            data: { transaction_id: DEPOSIT, account_id: USD_ACCOUNT },
          },
        },
        { raw: '{"id":"b1d3f5a7",' },
      ],
    },
  },
  replayDeadLetters: {
    request: { limit: 100, reason: 'The delivery worker is fixed; replaying what it dropped' },
    response: { queue: 'webhook-delivery', replayed: 2 },
  },
} satisfies { [K in keyof typeof DEAD_LETTER_OPERATIONS]?: OperationExamples };
