import type { Argv } from 'yargs';
import type { EventListQuery, WebhookEvent } from '@payments/client';
import { WEBHOOK_EVENT_TYPES } from '@payments/contracts/enums';
import type { CommandContext, GlobalArgs } from '../context.js';
import { formatAmount } from '../amounts.js';
import { usageError } from '../exit-codes.js';
import { idArgument } from './id-argument.js';
import { paginationNote, type PageArgs } from './paging.js';
import type { Run } from './run.js';

interface EventFilters extends PageArgs {
  type?: EventListQuery['type'];
  since?: string;
  until?: string;
}

/** A date-time or a date (`2026-11-20`, midnight UTC) as Unix seconds, as `created[…]` takes it. */
function unixSeconds(value: string, option: string): number {
  const ms = Date.parse(/^\d{4}-\d{2}-\d{2}$/.test(value) ? `${value}T00:00:00Z` : value);
  if (Number.isNaN(ms)) throw usageError(`--${option} must be a date (YYYY-MM-DD) or an ISO 8601 date-time.`);
  return Math.floor(ms / 1000);
}

/** What an event is about, in a word: its object's id and, for money, its amount as every command prints it. */
async function subjectOf(ctx: CommandContext, event: WebhookEvent): Promise<string> {
  const object = event.data.object as { id?: string; amount?: number | string; currency?: string };
  const money =
    object.amount === undefined || object.currency === undefined
      ? ''
      : ` ${formatAmount(object.amount, await ctx.exponents.of(object.currency))} ${object.currency}`;
  return `${object.id ?? ''}${money}`.trim();
}

function printEvent(ctx: CommandContext, event: WebhookEvent): void {
  if (ctx.out.json) return ctx.out.data(event);
  ctx.out.fields([
    ['Event', event.id],
    ['Type', event.type],
    ['Created', event.created_at],
    ['API version', event.api_version],
  ]);
  ctx.out.line(JSON.stringify(event.data.object, null, 2));
}

/** `payments events [list]` and `payments events get <id>`: your events of the last 30 days. */
export function eventCommands(cli: Argv<GlobalArgs>, run: Run): Argv<GlobalArgs> {
  return cli.command('events', 'Your events of the last 30 days, as your webhooks carry them', (events) =>
    events
      .command(
        ['list', '$0'],
        'List your events, newest first',
        (y) =>
          y
            .option('limit', { type: 'number', describe: 'Page size (1-100)' })
            .option('starting-after', {
              type: 'string',
              describe: 'The page after this event (the last one shown)',
            })
            .option('ending-before', {
              type: 'string',
              describe: 'The page before this event (the first one shown)',
            })
            .option('type', { type: 'string', choices: WEBHOOK_EVENT_TYPES })
            .option('since', { type: 'string', describe: 'Created at or after (YYYY-MM-DD or a date-time)' })
            .option('until', { type: 'string', describe: 'Created at or before (YYYY-MM-DD or a date-time)' })
            .example('$0 events --type transaction.completed --since 2026-11-01', '')
            .example('$0 events --starting-after 0b6e…', 'The next page'),
        run(async (ctx, argv: EventFilters) => {
          const created = {
            ...(argv.since !== undefined && { gte: unixSeconds(argv.since, 'since') }),
            ...(argv.until !== undefined && { lte: unixSeconds(argv.until, 'until') }),
          };
          const body = await ctx.api.events.listPage({
            limit: argv.limit,
            starting_after: argv.startingAfter,
            ending_before: argv.endingBefore,
            type: argv.type,
            ...(Object.keys(created).length > 0 && { created }),
          });
          if (ctx.out.json) return ctx.out.data(body);
          ctx.out.table(
            ['ID', 'TYPE', 'CREATED', 'OBJECT'],
            await Promise.all(
              body.data.map(async (event) => [
                event.id,
                event.type,
                event.created_at,
                await subjectOf(ctx, event),
              ]),
            ),
          );
          paginationNote(ctx, body, { ...argv, startingAfter: argv.startingAfter ?? '' });
        }),
      )
      .command(
        'get <id>',
        'Show one event and the object it carries',
        idArgument('id', 'Event id', '$0 events get 0b6e…'),
        run(async (ctx, argv: { id: string }) => printEvent(ctx, await ctx.api.events.get(argv.id))),
      ),
  );
}
