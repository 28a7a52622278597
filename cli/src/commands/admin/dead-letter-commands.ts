import type { Argv } from 'yargs';
import type { DeadLetterList } from '@payments/client';
import { DEAD_LETTER_QUEUES } from '@payments/contracts/operations';
import type { GlobalArgs } from '../../context.js';
import type { Run } from '../run.js';
import { OPTIONAL_REASON, optionalReason } from './admin-options.js';

type DeadLetterQueue = (typeof DEAD_LETTER_QUEUES)[number];

/** As the API lists it: the event envelope where the body is JSON, else the body as text. */
type DeadLetter = DeadLetterList['data'][number];

/** Text for a table cell: one line, cut to `width` characters. */
function cell(text: string, width = 60): string {
  const line = text.replace(/\s+/g, ' ');
  return line.length > width ? `${line.slice(0, width - 1)}…` : line;
}

/** An envelope's id, type and time, and its data; anything else (not JSON, or JSON of another shape) as it is. */
function deadLetterRow(letter: DeadLetter): string[] {
  if ('raw' in letter) return ['', '(not JSON)', '', cell(letter.raw)];
  const event = letter.event as Record<string, unknown> | null;
  const field = (name: string) => (typeof event?.[name] === 'string' ? (event[name] as string) : '');
  const isObject = typeof event === 'object' && event !== null && !Array.isArray(event);
  return [
    field('id'),
    field('type'),
    field('occurred_at'),
    cell(JSON.stringify(isObject && 'data' in event ? event.data : letter.event)),
  ];
}

export function deadLetterCommands(admin: Argv<GlobalArgs>, run: Run): Argv<GlobalArgs> {
  const queue = {
    type: 'string',
    choices: DEAD_LETTER_QUEUES,
    demandOption: true,
    describe: 'The queue, named by the service that consumes it',
  } as const;
  return admin.command(
    'dead-letters',
    'Events a consumer gave up on: list them, and replay them onto their queue',
    (deadLetters) =>
      deadLetters
        .command(
          'list <queue>',
          'The dead letters of a queue, oldest first, left where they are',
          (y) =>
            y
              .positional('queue', queue)
              .option('limit', { type: 'number', describe: 'At most this many (1-100, default 100)' })
              .example('$0 admin dead-letters list ledger', '')
              .example('$0 admin dead-letters list ledger --json', 'Each event whole'),
          run(async (ctx, argv: { queue: DeadLetterQueue; limit?: number }) => {
            const body = await ctx.api.admin.deadLetters.list(argv.queue, { limit: argv.limit });
            if (ctx.out.json) return ctx.out.data(body);
            ctx.out.table(['EVENT', 'TYPE', 'OCCURRED', 'DATA'], body.data.map(deadLetterRow));
            ctx.out.note(`${body.data.length} of ${body.count} dead letter(s) in ${body.queue}.`, 'dim');
          }),
        )
        .command(
          'replay <queue>',
          'Move dead letters back onto their queue, to be consumed again (each takes effect once)',
          (y) =>
            y
              .positional('queue', queue)
              .option('limit', {
                type: 'number',
                describe: 'At most this many, oldest first (default: all the queue holds now)',
              })
              .option('reason', OPTIONAL_REASON)
              .example('$0 admin dead-letters replay ledger --limit 10', ''),
          run(async (ctx, argv: { queue: DeadLetterQueue; limit?: number; reason?: string }) => {
            const body = await ctx.api.admin.deadLetters.replay(argv.queue, {
              ...(argv.limit !== undefined && { limit: argv.limit }),
              ...optionalReason(argv.reason),
            });
            if (ctx.out.json) return ctx.out.data(body);
            ctx.out.line(`Replayed ${body.replayed} dead letter(s) onto ${body.queue}.`);
          }),
        )
        .demandCommand(1, 'Say what to do with dead letters: list or replay.'),
  );
}
