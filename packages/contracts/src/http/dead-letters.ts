import { Type } from '@sinclair/typebox';
import { QUEUES } from '../queues.js';
import { AdminReason } from './common.js';

/** The consumer queues by the name operators use for them (`pnpm dlq`, the admin routes): their consumer's. */
export const DeadLetterQueueKey = Type.Union(
  Object.keys(QUEUES).map((key) => Type.Literal(key)),
  { description: 'A consumer queue, named by the service that consumes it' },
);

/** GET /admin/dead-letters/{queue}. */
export const DeadLetterQuery = Type.Object({
  limit: Type.Integer({
    minimum: 1,
    maximum: 100,
    default: 100,
    description: 'At most this many, oldest first; none is removed',
  }),
});

/** One dead letter: its event envelope where the body is JSON, else the body as it came. */
export const DeadLetterView = Type.Union([
  Type.Object(
    {
      event: Type.Unknown({
        description: 'The body parsed as JSON: an event envelope, unless a publisher sent something else',
      }),
    },
    { additionalProperties: false },
  ),
  Type.Object(
    { raw: Type.String({ description: 'The body, which is not JSON, as UTF-8 text' }) },
    { additionalProperties: false },
  ),
]);

export const DeadLetterList = Type.Object(
  {
    queue: DeadLetterQueueKey,
    count: Type.Integer({ minimum: 0, description: 'Dead letters the queue held, listed or not' }),
    data: Type.Array(DeadLetterView),
  },
  { additionalProperties: false },
);

/** POST /admin/dead-letters/{queue}/replay. */
export const DeadLetterReplayBody = Type.Object(
  {
    limit: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: 1_000_000,
        description: 'At most this many, oldest first; without it, every dead letter the queue holds now',
      }),
    ),
    reason: Type.Optional(AdminReason),
  },
  { additionalProperties: false },
);

export const DeadLetterReplayView = Type.Object(
  {
    queue: DeadLetterQueueKey,
    replayed: Type.Integer({ minimum: 0, description: 'Dead letters moved back onto the queue' }),
  },
  { additionalProperties: false },
);
