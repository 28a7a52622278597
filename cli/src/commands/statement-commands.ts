import { writeFile } from 'node:fs/promises';
import type { Argv } from 'yargs';
import type { Statement, StatementQuery } from '@payments/client';
import { formatAmount } from '../amounts.js';
import type { CommandContext, GlobalArgs } from '../context.js';
import { CliError, EXIT, usageError } from '../exit-codes.js';
import type { Run } from './run.js';

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

/** The period asked for, a page of the API's largest size. */
function statementQuery(argv: StatementArgs): StatementQuery {
  return {
    from: argv.from === undefined ? undefined : momentOf(argv.from, 'from'),
    to: argv.to === undefined ? undefined : momentOf(argv.to, 'to'),
    limit: PAGE,
  };
}

/** Every page of the period, joined into one statement. */
async function readStatement(ctx: CommandContext, argv: StatementArgs): Promise<Statement> {
  const first = await ctx.api.statements.get(argv.account_id, statementQuery(argv));
  const entries = [...first.entries];
  let page = first;
  while (page.has_more && page.entries.length > 0) {
    // The same period as the first page answered, so a default `to` (now) does not move while paging.
    page = await ctx.api.statements.get(argv.account_id, {
      from: first.from,
      to: first.to,
      limit: PAGE,
      starting_after: page.entries.at(-1)?.id,
    });
    entries.push(...page.entries);
  }
  return { ...first, entries, has_more: false };
}

/** Every CSV page of the period (the client follows their Link headers) in one file, with one header row. */
async function writeCsv(ctx: CommandContext, argv: StatementArgs, file: string): Promise<number> {
  let csvAnswered = true;
  const csv = await ctx.api.statements.csv(argv.account_id, statementQuery(argv), {
    onResponse: ({ headers }) => {
      csvAnswered &&= isCsv(headers);
    },
  });
  if (!csvAnswered) throw new CliError(EXIT.unavailable, 'The API did not answer the statement as CSV.');
  const lines = csv.split('\r\n').filter(Boolean);
  await writeFile(file, lines.map((line) => `${line}\r\n`).join(''));
  // Less the header, the opening row and the closing row.
  return Math.max(0, lines.length - 3);
}

/** Whether an answer is the CSV asked for (and not, say, a proxy's page or JSON). */
export function isCsv(headers: Headers): boolean {
  return /^text\/csv\b/i.test(headers.get('content-type') ?? '');
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
