import { writeFile } from 'node:fs/promises';
import type { Argv } from 'yargs';
import { formatAmount } from '../amounts.js';
import type { CommandContext, GlobalArgs } from '../context.js';
import { CliError, EXIT, usageError } from '../exit-codes.js';
import type { Run } from './run.js';

interface StatementEntry {
  id: string;
  transaction_id: string;
  type: string | null;
  counterparty_account_id: string | null;
  amount: number | string;
  balance: number | string;
  created_at: string;
}

export interface Statement {
  account_id: string;
  currency: string;
  from: string;
  to: string;
  opening_balance: number | string;
  closing_balance: number | string;
  entries: StatementEntry[];
  has_more: boolean;
}

interface StatementArgs {
  account_id: string;
  from?: string;
  to?: string;
  csv?: string;
}

/** Entries per request: the API's largest page. */
const PAGE = 1000;
const DAY = /^\d{4}-\d{2}-\d{2}$/;

/** A moment for the API: an RFC 3339 date-time as given, or a bare date as the start of that day in UTC. */
export function momentOf(value: string, option: string): string {
  if (DAY.test(value)) return `${value}T00:00:00Z`;
  if (/^\d{4}-\d{2}-\d{2}T/.test(value) && !Number.isNaN(Date.parse(value))) return value;
  throw usageError(`--${option} must be a date (YYYY-MM-DD, midnight UTC) or an RFC 3339 date-time.`);
}

function statementPath(accountId: string): string {
  return `/account/${encodeURIComponent(accountId)}/statement`;
}

/** Every page of the period, joined into one statement. */
async function readStatement(ctx: CommandContext, argv: StatementArgs): Promise<Statement> {
  const query = {
    from: argv.from === undefined ? undefined : momentOf(argv.from, 'from'),
    to: argv.to === undefined ? undefined : momentOf(argv.to, 'to'),
    limit: PAGE,
  };
  const { body: first } = await ctx.api.get<Statement>(statementPath(argv.account_id), { query });
  const entries = [...first.entries];
  let page = first;
  while (page.has_more && page.entries.length > 0) {
    // The same period as the first page answered, so a default `to` (now) does not move while paging.
    ({ body: page } = await ctx.api.get<Statement>(statementPath(argv.account_id), {
      query: { from: first.from, to: first.to, limit: PAGE, starting_after: page.entries.at(-1)?.id },
    }));
    entries.push(...page.entries);
  }
  return { ...first, entries, has_more: false };
}

/** Follows the CSV pages' Link headers and writes one file: one header row, then every row of every page. */
async function writeCsv(ctx: CommandContext, argv: StatementArgs, file: string): Promise<number> {
  let url = new URL(`${ctx.api.baseUrl.replace(/\/$/, '')}${statementPath(argv.account_id)}`);
  const query = {
    from: argv.from === undefined ? undefined : momentOf(argv.from, 'from'),
    to: argv.to === undefined ? undefined : momentOf(argv.to, 'to'),
    limit: String(PAGE),
    format: 'csv',
  };
  for (const [key, value] of Object.entries(query)) if (value !== undefined) url.searchParams.set(key, value);
  const lines: string[] = [];
  for (;;) {
    const response = await ctx.api.get<unknown>(url.toString(), { headers: { accept: 'text/csv' } });
    if (typeof response.body !== 'string') {
      throw new CliError(EXIT.unavailable, 'The API did not answer the statement as CSV.');
    }
    const rows = response.body.split('\r\n').filter(Boolean);
    lines.push(...(lines.length === 0 ? rows : rows.slice(1)));
    const next = /<([^>]+)>;\s*rel="next"/.exec(response.headers.get('link') ?? '');
    if (!next) break;
    url = new URL(next[1] as string, url);
  }
  await writeFile(file, lines.map((line) => `${line}\r\n`).join(''));
  // Less the header, the opening row and the closing row.
  return Math.max(0, lines.length - 3);
}

export function statementCommands(cli: Argv<GlobalArgs>, run: Run): Argv<GlobalArgs> {
  return cli.command(
    'statement <account_id>',
    'Print an account statement (opening balance, entries with the running balance, closing balance)',
    (y) =>
      y
        .positional('account_id', { type: 'string', demandOption: true, describe: 'Account id' })
        .option('from', {
          type: 'string',
          describe:
            'Start, inclusive: YYYY-MM-DD (midnight UTC) or an RFC 3339 date-time; default 30 days before --to',
        })
        .option('to', {
          type: 'string',
          describe: 'End, exclusive: YYYY-MM-DD (midnight UTC) or an RFC 3339 date-time; default now',
        })
        .option('csv', { type: 'string', describe: 'Write the statement as CSV to this file instead' })
        .example('$0 statement 3f0c… --from 2026-11-01 --to 2026-12-01', 'November 2026, in UTC')
        .example('$0 statement 3f0c… --from 2026-11-01 --csv november.csv', 'For a spreadsheet'),
    run(async (ctx, argv: StatementArgs) => {
      if (argv.csv !== undefined) {
        const count = await writeCsv(ctx, argv, argv.csv);
        if (ctx.out.json) return ctx.out.data({ file: argv.csv, entries: count });
        return ctx.out.line(`Wrote ${count} ${count === 1 ? 'entry' : 'entries'} to ${argv.csv}.`);
      }
      const statement = await readStatement(ctx, argv);
      if (ctx.out.json) return ctx.out.data(statement);
      const exponent = await ctx.exponents.of(statement.currency);
      const money = (value: number | string) => formatAmount(value, exponent);
      ctx.out.line(
        `Statement of account ${statement.account_id} (${statement.currency}) from ${statement.from} to ${statement.to}`,
      );
      ctx.out.line(`Opening balance: ${money(statement.opening_balance)}`);
      ctx.out.table(
        ['DATE', 'TYPE', 'AMOUNT', 'BALANCE', 'TRANSACTION', 'COUNTERPARTY'],
        statement.entries.map((entry) => [
          entry.created_at,
          entry.type ?? '',
          money(entry.amount),
          money(entry.balance),
          entry.transaction_id,
          entry.counterparty_account_id ?? '',
        ]),
      );
      ctx.out.line(`Closing balance: ${money(statement.closing_balance)}`);
    }),
  );
}
