import type { CommandModule } from 'yargs';
import type { WebhookDrill } from '@payments/client';
import type { CommandContext, GlobalArgs } from '../context.js';
import { CliError, EXIT } from '../exit-codes.js';
import type { Run } from './run.js';

const EXPECTED = { accept: '2xx', reject: 'non-2xx' } as const;

const SUMMARY: Record<WebhookDrill['result'], string> = {
  passed: 'Your receiver accepted exactly the valid events, once.',
  unconfirmed:
    'Your receiver answered every case as expected; check your logs that it processed the duplicate only once.',
  incomplete: 'The drill ran out of time before every case was sent: your receiver answers slowly.',
  failed: 'Your receiver mishandled at least one case: see the table.',
};

/** The report as a table, one row per case, then what it comes to. */
function printDrill(ctx: CommandContext, drill: WebhookDrill): void {
  ctx.out.fields([
    ['Drill', drill.id],
    ['Endpoint', `${drill.endpoint_id} (${drill.url})`],
    ['Event types', drill.event_types.join(', ')],
  ]);
  ctx.out.table(
    ['CASE', 'EVENT', 'EXPECTED', 'GOT', 'RESULT', 'DETAIL'],
    drill.cases.map((c) => [
      c.case,
      c.event_id,
      EXPECTED[c.expected],
      c.status_code === null ? (c.error ?? '-') : String(c.status_code),
      c.outcome,
      c.detail,
    ]),
  );
  ctx.out.note(SUMMARY[drill.result], drill.result === 'passed' ? 'dim' : 'warning');
}

/** `webhook drill <id>`: a drill of the endpoint's receiver; exits 1 when it failed or could not finish. */
export function webhookDrillCommand(run: Run): CommandModule<GlobalArgs, GlobalArgs & { id: string }> {
  return {
    command: 'drill <id>',
    describe: 'Test your receiver: a valid event, a duplicate, two out of order, a stale and a forged one',
    builder: (y) =>
      y
        .positional('id', { type: 'string', demandOption: true, describe: 'Endpoint id' })
        .example('$0 webhooks drill 5f0c…', 'Sends drill events (drill.*, never real ones) and reports each'),
    handler: run(async (ctx, argv: { id: string }) => {
      const drill = await ctx.api.webhookEndpoints.drill(argv.id);
      if (ctx.out.json) ctx.out.data(drill);
      else printDrill(ctx, drill);
      if (drill.result === 'failed' || drill.result === 'incomplete') {
        throw new CliError(EXIT.transactionFailed, `Drill ${drill.id}: ${drill.result}.`);
      }
    }),
  };
}
