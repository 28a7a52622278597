import type { Argv } from 'yargs';
import type {
  ApiVersion,
  WebhookDeliveryListQuery,
  WebhookEndpoint,
  WebhookEndpointUpdateRequest,
  WebhookEndpointWithSecret,
  WebhookEventType,
} from '@payments/client';
import { WEBHOOK_DELIVERY_STATUSES, WEBHOOK_EVENT_TYPES } from '@payments/contracts/enums';
import { API_VERSIONS } from '@payments/contracts/versions';
import type { CommandContext, GlobalArgs } from '../context.js';
import { usageError } from '../exit-codes.js';
import { pageOptions, pageQuery, paginationNote, type PageArgs } from './paging.js';
import type { Run } from './run.js';
import { webhookDrillCommand } from './webhook-drill-command.js';

/** `webhooks` too: the plural reads naturally in `payments webhooks drill`. */
const NAMES = ['webhook', 'webhooks'];

function describeEndpoint(endpoint: WebhookEndpoint): [string, string][] {
  return [
    ['Endpoint', endpoint.id],
    ['URL', endpoint.url],
    ['Events', endpoint.events.join(', ')],
    ['Enabled', endpoint.enabled ? 'yes' : 'no'],
    ['API version', endpoint.api_version],
    ...(endpoint.description ? ([['Description', endpoint.description]] as [string, string][]) : []),
    ...(endpoint.previous_secret_expires_at
      ? ([['Old secret valid until', endpoint.previous_secret_expires_at]] as [string, string][])
      : []),
    ['Created', endpoint.created_at],
  ];
}

/** The secret is shown once: printed with the endpoint, and a reminder to keep it. */
function printWithSecret(ctx: CommandContext, endpoint: WebhookEndpointWithSecret): void {
  if (ctx.out.json) return ctx.out.data(endpoint);
  ctx.out.fields([...describeEndpoint(endpoint), ['Signing secret', endpoint.secret]]);
  ctx.out.note('Store the signing secret now: it is not shown again.', 'warning');
}

export type DeliveryLogQuery = Pick<WebhookDeliveryListQuery, 'status'> & PageArgs;

/** An endpoint's delivery log as a table (the API's page with --json): the owner's, or any for an admin. */
export async function printDeliveryLog(
  ctx: CommandContext,
  endpointId: string,
  query: DeliveryLogQuery,
): Promise<void> {
  const body = await ctx.api.webhookEndpoints.deliveries.listPage(endpointId, {
    status: query.status,
    ...pageQuery(query),
  });
  if (ctx.out.json) return ctx.out.data(body);
  ctx.out.table(
    ['ID', 'EVENT', 'STATUS', 'ATTEMPTS', 'LAST', 'LATENCY', 'NEXT RETRY'],
    body.data.map((d) => [
      d.id,
      d.event_type,
      d.status,
      String(d.attempts),
      d.last_status_code === null ? (d.last_error ?? '') : String(d.last_status_code),
      d.last_latency_ms === null ? '' : `${d.last_latency_ms} ms`,
      d.next_attempt_at ?? '',
    ]),
  );
  paginationNote(ctx, body, query);
}

function checkEvents(events: readonly string[]): WebhookEventType[] {
  const known: readonly string[] = WEBHOOK_EVENT_TYPES;
  const unknown = events.filter((event) => !known.includes(event));
  if (unknown.length > 0) {
    throw usageError(`Unknown event type ${unknown.join(', ')}; one of: ${WEBHOOK_EVENT_TYPES.join(', ')}.`);
  }
  return [...new Set(events as WebhookEventType[])];
}

export function webhookCommands(cli: Argv<GlobalArgs>, run: Run): Argv<GlobalArgs> {
  return cli.command(NAMES, 'Manage your webhook endpoints and their deliveries', (webhook) =>
    webhook
      .command(
        'create <url>',
        'Register an endpoint; prints its signing secret once',
        (y) =>
          y
            .positional('url', {
              type: 'string',
              demandOption: true,
              describe: 'http(s) URL to POST events to',
            })
            .option('event', {
              type: 'string',
              array: true,
              demandOption: true,
              describe: `Event type, repeatable: ${WEBHOOK_EVENT_TYPES.join(', ')}`,
            })
            .option('description', { type: 'string', describe: 'A note for yourself' })
            .example('$0 webhook create https://example.com/hooks --event transaction.completed', ''),
        run(async (ctx, argv: { url: string; event: string[]; description?: string }) => {
          const body = await ctx.api.webhookEndpoints.create({
            url: argv.url,
            events: checkEvents(argv.event),
            ...(argv.description ? { description: argv.description } : {}),
          });
          printWithSecret(ctx, body);
        }),
      )
      .command(
        'list',
        'List your endpoints',
        (y) => pageOptions(y),
        run(async (ctx, argv: PageArgs) => {
          const body = await ctx.api.webhookEndpoints.listPage(pageQuery(argv));
          if (ctx.out.json) return ctx.out.data(body);
          ctx.out.table(
            ['ID', 'URL', 'EVENTS', 'ENABLED'],
            body.data.map((e) => [e.id, e.url, e.events.join(','), e.enabled ? 'yes' : 'no']),
          );
          paginationNote(ctx, body, argv);
        }),
      )
      .command(
        'show <id>',
        'Show one endpoint',
        (y) => y.positional('id', { type: 'string', demandOption: true }),
        run(async (ctx, argv: { id: string }) => {
          const body = await ctx.api.webhookEndpoints.get(argv.id);
          if (ctx.out.json) return ctx.out.data(body);
          ctx.out.fields(describeEndpoint(body));
        }),
      )
      .command(
        'update <id>',
        'Change the URL or events, or enable or disable an endpoint',
        (y) =>
          y
            .positional('id', { type: 'string', demandOption: true })
            .option('url', { type: 'string' })
            .option('event', { type: 'string', array: true, describe: 'Replaces the events' })
            .option('enable', { type: 'boolean', describe: '--enable or --no-enable' })
            .option('description', { type: 'string' })
            .option('api-version', {
              type: 'string',
              choices: API_VERSIONS,
              describe: 'Render events at this version',
            }),
        run(
          async (
            ctx,
            argv: {
              id: string;
              url?: string;
              event?: string[];
              enable?: boolean;
              description?: string;
              apiVersion?: ApiVersion;
            },
          ) => {
            const changes: WebhookEndpointUpdateRequest = {
              ...(argv.url !== undefined ? { url: argv.url } : {}),
              ...(argv.event !== undefined ? { events: checkEvents(argv.event) } : {}),
              ...(argv.enable !== undefined ? { enabled: argv.enable } : {}),
              ...(argv.description !== undefined ? { description: argv.description } : {}),
              ...(argv.apiVersion !== undefined ? { api_version: argv.apiVersion } : {}),
            };
            if (Object.keys(changes).length === 0) {
              throw usageError(
                'Say what to change: --url, --event, --enable/--no-enable, --description or --api-version.',
              );
            }
            const body = await ctx.api.webhookEndpoints.update(argv.id, changes);
            if (ctx.out.json) return ctx.out.data(body);
            ctx.out.fields(describeEndpoint(body));
          },
        ),
      )
      .command(
        'delete <id>',
        'Delete an endpoint',
        (y) => y.positional('id', { type: 'string', demandOption: true }),
        run(async (ctx, argv: { id: string }) => {
          await ctx.api.webhookEndpoints.delete(argv.id);
          if (ctx.out.json) return ctx.out.data({ id: argv.id, deleted: true });
          ctx.out.line(`Deleted webhook endpoint ${argv.id}.`);
        }),
      )
      .command(
        'rotate-secret <id>',
        'New signing secret; the old one also signs for the grace period',
        (y) =>
          y.positional('id', { type: 'string', demandOption: true }).option('grace', {
            type: 'number',
            describe: 'Seconds the old secret stays valid (default 86400)',
          }),
        run(async (ctx, argv: { id: string; grace?: number }) => {
          const body = await ctx.api.webhookEndpoints.rotateSecret(
            argv.id,
            argv.grace === undefined ? {} : { grace_period_seconds: argv.grace },
          );
          printWithSecret(ctx, body);
        }),
      )
      .command(
        'deliveries <id>',
        'The delivery log of an endpoint: status, attempts, last answer, next retry',
        (y) =>
          pageOptions(y)
            .positional('id', { type: 'string', demandOption: true })
            .option('status', { type: 'string', choices: WEBHOOK_DELIVERY_STATUSES }),
        run(async (ctx, argv: DeliveryLogQuery & { id: string }) => printDeliveryLog(ctx, argv.id, argv)),
      )
      .command(
        'redeliver <id> <delivery_id>',
        'Send a delivery again now',
        (y) =>
          y
            .positional('id', { type: 'string', demandOption: true, describe: 'Endpoint id' })
            .positional('delivery_id', { type: 'string', demandOption: true }),
        run(async (ctx, argv: { id: string; delivery_id: string }) => {
          const body = await ctx.api.webhookEndpoints.deliveries.redeliver(argv.id, argv.delivery_id);
          if (ctx.out.json) return ctx.out.data(body);
          ctx.out.line(`Delivery ${body.id} will be sent again.`);
        }),
      )
      .command(webhookDrillCommand(run))
      .demandCommand(
        1,
        'Say what to do with webhooks: create, list, show, update, delete, rotate-secret, deliveries, redeliver ' +
          'or drill.',
      ),
  );
}
