import { JSON_BODY, PROTECTED, type Operation } from './operation.js';

/** Each consumer queue's dead letters, answered by the service that consumes the queue. */
export const DEAD_LETTER_OPERATIONS = {
  listDeadLetters: {
    method: 'get',
    path: '/admin/dead-letters/{queue}',
    owner: 'consumer of {queue}',
    access: 'user',
    tag: 'Administration',
    summary: 'The dead letters of a consumer queue, left where they are (admins only)',
    description:
      'Events a consumer gave up on: not JSON, failing their schema, refused by their handler, or failing past ' +
      'the queue’s delivery limit. Each is shown as its event envelope where its body is JSON (`event`), else as ' +
      'the text it is (`raw`); `count` is how many the dead-letter queue holds. The consuming service answers ' +
      '(503 while it cannot reach the broker).',
    query: 'DeadLetterQuery',
    success: { status: 200, description: 'The dead letters, oldest first', schema: 'DeadLetterList' },
    errors: [400, ...PROTECTED, 404],
  },
  replayDeadLetters: {
    method: 'post',
    path: '/admin/dead-letters/{queue}/replay',
    owner: 'consumer of {queue}',
    access: 'user',
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
} satisfies Record<string, Operation>;
