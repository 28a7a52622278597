import type { Argv } from 'yargs';
import type { Pagination } from '@payments/client';
import type { CommandContext, GlobalArgs } from '../context.js';
import { paginationNote } from './paging.js';
import type { Run } from './run.js';

interface Currency {
  code: string;
  name?: string;
  minor_units?: number;
  symbol?: string;
  supported?: boolean;
  [field: string]: unknown;
}

function listOf<T>(body: unknown): T[] {
  if (Array.isArray(body)) return body as T[];
  const data = (body as { data?: unknown } | null)?.data;
  return Array.isArray(data) ? (data as T[]) : [];
}

function text(value: unknown): string {
  if (value === undefined || value === null) return '';
  if (Array.isArray(value)) return value.map(text).join(', ');
  if (typeof value === 'object') {
    const name = (value as { name?: unknown }).name;
    return typeof name === 'string' ? name : JSON.stringify(value);
  }
  return String(value);
}

/** A list of currencies as a table (the API's answer with --json): a page, or the whole of a selection. */
async function showList(ctx: CommandContext, read: () => Promise<unknown>) {
  const body = await read();
  if (ctx.out.json) return ctx.out.data(body);
  const rows = listOf<Currency>(body).map((c) => [
    c.code,
    text(c.name),
    text(c.minor_units),
    text(c.symbol),
    c.supported === undefined ? '' : c.supported ? 'yes' : 'no',
  ]);
  ctx.out.table(['CODE', 'NAME', 'MINOR UNITS', 'SYMBOL', 'SUPPORTED'], rows);
  if (!Array.isArray(body)) paginationNote(ctx, { data: rows, ...(body as { pagination?: Pagination }) });
}

/** One record's fields, one a line (the API's answer with --json). */
async function showRecord(ctx: CommandContext, read: () => Promise<object>) {
  const body = await read();
  if (ctx.out.json) return ctx.out.data(body);
  ctx.out.fields(Object.entries(body ?? {}).map(([key, value]) => [key, text(value)]));
}

export function currencyCommands(cli: Argv<GlobalArgs>, run: Run): Argv<GlobalArgs> {
  return cli.command('currencies', 'Browse the currency catalogue', (currencies) =>
    currencies
      .command(
        'list',
        'List currencies',
        (y) =>
          y
            .option('supported', { type: 'boolean', default: false, describe: 'Only those accounts may use' })
            .option('limit', { type: 'number', describe: 'Page size' })
            .option('offset', { type: 'number', describe: 'Skip this many' })
            .example('$0 currencies list --supported', '')
            .example('$0 currencies list --limit 50 --offset 50', ''),
        run(async (ctx, argv: { supported: boolean; limit?: number; offset?: number }) =>
          argv.supported
            ? showList(ctx, () => ctx.api.currencies.supported())
            : showList(ctx, () => ctx.api.currencies.listPage({ limit: argv.limit, offset: argv.offset })),
        ),
      )
      .command(
        'show <code>',
        'Show one currency',
        (y) =>
          y.positional('code', { type: 'string', demandOption: true }).example('$0 currencies show EUR', ''),
        run(async (ctx, argv: { code: string }) =>
          showRecord(ctx, () => ctx.api.currencies.get(argv.code.toUpperCase())),
        ),
      )
      .command(
        'search <query>',
        'Search by code, name or country',
        (y) =>
          y
            .positional('query', { type: 'string', demandOption: true })
            .example('$0 currencies search franc', ''),
        run(async (ctx, argv: { query: string }) =>
          showList(ctx, () => ctx.api.currencies.search(argv.query)),
        ),
      )
      .command(
        'region <region>',
        'Currencies used in a region',
        (y) =>
          y
            .positional('region', { type: 'string', demandOption: true })
            .example('$0 currencies region europe', ''),
        run(async (ctx, argv: { region: string }) =>
          showList(ctx, () => ctx.api.currencies.region(argv.region)),
        ),
      )
      .command(
        'rates',
        'Exchange rates (API v1.1)',
        (y) =>
          y
            .option('base', { type: 'string', describe: 'Base currency' })
            .example('$0 currencies rates --base EUR', ''),
        run(async (ctx, argv: { base?: string }) => {
          const body = await ctx.api.rates.list({ base: argv.base?.toUpperCase() });
          if (ctx.out.json) return ctx.out.data(body);
          ctx.out.line(`1 ${body.base} in other currencies${body.as_of ? ` (as of ${body.as_of})` : ''}:`);
          ctx.out.table(
            ['CODE', 'RATE'],
            Object.entries(body.rates ?? {}).map(([code, rate]) => [code, String(rate)]),
          );
        }),
      )
      .command(
        'default',
        'The default currency',
        (y) => y.example('$0 currencies default', ''),
        run(async (ctx) => showRecord(ctx, () => ctx.api.currencies.default())),
      )
      .command(
        'statistics',
        'Catalogue statistics',
        (y) => y.example('$0 currencies statistics', ''),
        run(async (ctx) => showRecord(ctx, () => ctx.api.currencies.statistics())),
      )
      .demandCommand(1, 'Say what to do: list, show, search, region, rates, default or statistics.'),
  );
}
