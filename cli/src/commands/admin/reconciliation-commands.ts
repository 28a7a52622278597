import type { Argv } from 'yargs';
import type {
  ProviderMismatch,
  ReconciliationDecisionRequest,
  ReconciliationItem,
  UnconfirmedWithdrawal,
} from '@payments/client';
import { RECONCILIATION_DECISIONS } from '@payments/contracts/enums';
import type { CommandContext, GlobalArgs } from '../../context.js';
import { CliError, EXIT, usageError } from '../../exit-codes.js';
import type { Run } from '../run.js';
import { isCsv } from '../statement-commands.js';
import { idArgument } from '../id-argument.js';
import { pageOptions, pageQuery, paginationNote, type PageArgs } from '../paging.js';
import { money, REASON_LENGTH } from './admin-options.js';

type Decision = ReconciliationDecisionRequest['decision'];

const isWithdrawal = (item: ReconciliationItem): item is UnconfirmedWithdrawal =>
  item.kind === 'unconfirmed_withdrawal';

/** One row for either kind of item: a withdrawal has no case and only the books' side of the amount. */
async function reconciliationRow(ctx: CommandContext, item: ReconciliationItem): Promise<string[]> {
  if (isWithdrawal(item)) {
    return [
      item.kind,
      '',
      item.id,
      item.payment_id ?? '',
      '',
      await money(ctx, item.amount, item.currency),
      item.currency,
      item.reconciliation_required_at,
    ];
  }
  return [
    item.kind,
    item.id,
    item.transaction_id ?? '',
    item.provider_reference,
    await money(ctx, item.provider_amount, item.currency),
    await money(ctx, item.ledger_amount, item.currency),
    item.currency,
    item.found_at,
  ];
}

async function describeCase(ctx: CommandContext, found: ProviderMismatch): Promise<[string, string][]> {
  const optional = (label: string, value: string | undefined): [string, string][] =>
    value === undefined ? [] : [[label, value]];
  return [
    ['Case', found.id],
    ['Kind', found.kind],
    ['Status', found.status],
    ['Provider reference', found.provider_reference],
    ['Transaction', found.transaction_id ?? '(none in the ledger)'],
    ['By the provider', `${await money(ctx, found.provider_amount, found.currency)} ${found.currency}`],
    ['By the books', `${await money(ctx, found.ledger_amount, found.currency)} ${found.currency}`],
    ['Found', found.found_at],
    ['Last seen', found.last_seen_at],
    ...optional('Decision', found.decision),
    ...optional('Reason', found.reason),
    ...optional('Resolved by', found.resolved_by),
    ...optional('Resolved at', found.resolved_at),
  ];
}

async function printCase(ctx: CommandContext, found: ProviderMismatch): Promise<void> {
  if (ctx.out.json) return ctx.out.data(found);
  ctx.out.fields(await describeCase(ctx, found));
}

/** The whole open list as the API's CSV report, unpaged, printed as it came. */
async function printReconciliationCsv(ctx: CommandContext): Promise<void> {
  let csvAnswered = true;
  const report = await ctx.api.admin.reconciliation.csv({
    onResponse: ({ headers }) => {
      csvAnswered = isCsv(headers);
    },
  });
  if (!csvAnswered) {
    throw new CliError(EXIT.unavailable, 'The API did not answer the reconciliation report as CSV.');
  }
  ctx.out.text(report);
}

export function reconciliationCommands(admin: Argv<GlobalArgs>, run: Run): Argv<GlobalArgs> {
  return admin.command(
    'reconciliation',
    "What disagrees with the payment provider's records, and the decisions on it",
    (reconciliation) =>
      reconciliation
        .command(
          'list',
          'Withdrawals awaiting their confirmation, then the open mismatches with the provider',
          (y) =>
            pageOptions(y)
              .option('csv', {
                type: 'boolean',
                describe: "Print the whole list as the API's CSV report (unpaged) instead",
              })
              .example('$0 admin reconciliation list', '')
              .example('$0 admin reconciliation list --starting-after 5d1e…', 'The page after that item')
              .example('$0 admin reconciliation list --csv > reconciliation.csv', 'For a spreadsheet'),
          run(async (ctx, argv: PageArgs & { csv?: boolean }) => {
            if (argv.csv) {
              const paged = [argv.limit, argv.offset, argv.startingAfter, argv.endingBefore];
              if (paged.some((option) => option !== undefined)) {
                throw usageError(
                  'The CSV report is the whole list: leave out --limit and --offset, and the cursors.',
                );
              }
              return printReconciliationCsv(ctx);
            }
            const body = await ctx.api.admin.reconciliation.listPage(pageQuery(argv));
            if (ctx.out.json) return ctx.out.data(body);
            const rows = await Promise.all(body.data.map((item) => reconciliationRow(ctx, item)));
            ctx.out.table(
              ['KIND', 'CASE', 'TRANSACTION', 'REFERENCE', 'PROVIDER', 'LEDGER', 'CURRENCY', 'SINCE'],
              rows,
            );
            paginationNote(ctx, body, argv);
          }),
        )
        .command(
          'show <case-id>',
          'Show one mismatch case and any decision on it',
          idArgument('case-id', 'Case id', '$0 admin reconciliation show 5d1e…'),
          run(async (ctx, argv: { caseId: string }) => {
            await printCase(ctx, await ctx.api.admin.reconciliation.getCase(argv.caseId));
          }),
        )
        .command(
          'resolve <case-id>',
          "Decide a case: book what the provider's records say, give back money the books never took in, or record that nothing is owed",
          (y) =>
            y
              .positional('case-id', { type: 'string', demandOption: true, describe: 'Case id' })
              .option('decision', {
                type: 'string',
                choices: RECONCILIATION_DECISIONS,
                demandOption: true,
                describe:
                  "book: apply the provider's records to the books; refund: give an extra capture back to its " +
                  'payer at the provider; reverse: take an extra transfer back from the connected account; ' +
                  'nothing_owed: leave the books',
              })
              .option('reason', {
                type: 'string',
                demandOption: true,
                describe: `Why, ${REASON_LENGTH.min}-${REASON_LENGTH.max} characters; kept in the trail of admin actions`,
              })
              .example('$0 admin reconciliation resolve 5d1e… --decision book --reason "refund missed"', ''),
          run(async (ctx, argv: { caseId: string; decision: Decision; reason: string }) => {
            const reason = argv.reason.trim();
            if (reason.length < REASON_LENGTH.min || reason.length > REASON_LENGTH.max) {
              throw usageError(
                `--reason must say why in ${REASON_LENGTH.min} to ${REASON_LENGTH.max} characters.`,
              );
            }
            const decided = await ctx.api.admin.reconciliation.resolveCase(argv.caseId, {
              decision: argv.decision,
              reason,
            });
            await printCase(ctx, decided);
          }),
        )
        .command(
          'run',
          "Reconcile with the provider's records now, rather than at the next interval",
          (y) => y.example('$0 admin reconciliation run', ''),
          run(async (ctx) => {
            const body = await ctx.api.admin.reconciliation.run();
            if (ctx.out.json) return ctx.out.data(body);
            ctx.out.fields([
              ['Since', body.since],
              ['Cursor', body.cursor],
              ['Checked', String(body.checked)],
              ['Agreed', String(body.agreed)],
              ['Unsettled', String(body.unsettled)],
              ['Mismatches', String(body.mismatches)],
              ['Opened', String(body.opened)],
              ['Cleared', String(body.cleared)],
            ]);
          }),
        )
        .demandCommand(1, 'Say what to do with reconciliation: list, show, resolve or run.'),
  );
}
