import type { Argv } from 'yargs';
import type { HistoryQuery, Transaction } from '@payments/client';
import { TRANSACTION_STATUSES, TRANSACTION_TYPES } from '@payments/contracts/enums';
import { formatAmount } from '../amounts.js';
import type { CommandContext, GlobalArgs } from '../context.js';
import { feeOf } from '../transaction-wait.js';
import { idArgument } from './id-argument.js';
import { pageOptions, pageQuery, paginationNote } from './paging.js';
import type { Run } from './run.js';

interface TransactionFilters {
  account?: string;
  type?: HistoryQuery['type'];
  status?: HistoryQuery['status'];
  from?: string;
  to?: string;
  limit?: number;
  offset?: number;
  startingAfter?: string;
  endingBefore?: string;
}

async function describeTransaction(ctx: CommandContext, t: Transaction): Promise<[string, string][]> {
  const exponent = await ctx.exponents.of(t.currency);
  const optional = (label: string, value: unknown): [string, string][] =>
    value === undefined || value === null ? [] : [[label, String(value)]];
  const fee = feeOf(t);
  return [
    ['Transaction', t.id],
    ['Type', t.type],
    ['Status', t.status],
    ['Amount', `${formatAmount(t.amount, exponent)} ${t.currency}`],
    ['Account', t.account_id],
    ...optional('Counterparty', t.counterparty_account_id),
    ...optional('Reverses', t.original_transaction_id),
    ...optional('Reason', t.reversal_reason),
    ...(fee === undefined
      ? []
      : ([['Fee', `${formatAmount(fee, exponent)} ${t.currency}`]] as [string, string][])),
    ...optional('Failure reason', t.failure_reason),
    ...optional('Created', t.created_at),
    ...optional('Completed', t.completed_at),
  ];
}

export function transactionCommands(cli: Argv<GlobalArgs>, run: Run): Argv<GlobalArgs> {
  return cli
    .command(
      'transactions',
      'List your transactions',
      (y) =>
        pageOptions(
          y
            .option('account', { type: 'string', describe: 'Only this account' })
            .option('type', { type: 'string', choices: TRANSACTION_TYPES })
            .option('status', { type: 'string', choices: TRANSACTION_STATUSES })
            .option('from', { type: 'string', describe: 'From date, YYYY-MM-DD' })
            .option('to', { type: 'string', describe: 'To date, YYYY-MM-DD' }),
        ).example('$0 transactions --account 3f0c… --type deposit --from 2025-01-01', ''),
      run(async (ctx, argv: TransactionFilters) => {
        const query: HistoryQuery = {
          type: argv.type,
          status: argv.status,
          from: argv.from,
          to: argv.to,
          ...pageQuery(argv),
        };
        const body = argv.account
          ? await ctx.api.transactions.historyPage(argv.account, query)
          : await ctx.api.transactions.listPage(query);
        if (ctx.out.json) return ctx.out.data(body);
        const rows = await Promise.all(
          body.data.map(async (t) => [
            t.id,
            // A reversal says why: a refund, a dispute (its status says whether it was lost), a returned payout, a late payment.
            t.reversal_reason ? `${t.type} (${t.reversal_reason})` : t.type,
            t.status,
            formatAmount(t.amount, await ctx.exponents.of(t.currency)),
            t.currency,
            t.account_id,
            t.created_at ?? '',
          ]),
        );
        ctx.out.table(['ID', 'TYPE', 'STATUS', 'AMOUNT', 'CURRENCY', 'ACCOUNT', 'CREATED'], rows);
        paginationNote(ctx, body, argv);
      }),
    )
    .command(
      'transaction <id>',
      'Show one transaction and its status',
      idArgument('id', 'Transaction id', '$0 transaction 7a1c…'),
      run(async (ctx, argv: { id: string }) => {
        const body = await ctx.api.transactions.get(argv.id);
        if (ctx.out.json) return ctx.out.data(body);
        ctx.out.fields(await describeTransaction(ctx, body));
      }),
    );
}
