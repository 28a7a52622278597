import type { Argv } from 'yargs';
import type {
  DeadLetterList,
  ProviderMismatch,
  ReconciliationDecisionRequest,
  ReconciliationItem,
  StatusChangeRequest,
  UnconfirmedWithdrawal,
} from '@payments/client';
import type { OverdrawnReport } from '@payments/contracts';
import {
  RECONCILIATION_DECISIONS,
  USER_STATUSES,
  WEBHOOK_DELIVERY_STATUSES,
} from '@payments/contracts/enums';
import { DEAD_LETTER_QUEUES } from '@payments/contracts/operations';
import { formatAmount } from '../amounts.js';
import type { CommandContext, GlobalArgs } from '../context.js';
import { CliError, EXIT, usageError } from '../exit-codes.js';
import { paginationNote } from './account-commands.js';
import type { Run } from './run.js';
import { isCsv } from './statement-commands.js';
import { printDeliveryLog, type DeliveryLogQuery } from './webhook-commands.js';

type Decision = ReconciliationDecisionRequest['decision'];
type UserStatus = StatusChangeRequest['status'];
type DeadLetterQueue = (typeof DEAD_LETTER_QUEUES)[number];

/** As the API lists it: the event envelope where the body is JSON, else the body as text. */
type DeadLetter = DeadLetterList['data'][number];

interface PageArgs {
  limit?: number;
  offset?: number;
}

/** The reason goes into the append-only trail of admin actions: it has to say something. */
const REASON_LENGTH = { min: 3, max: 1000 };

/** `--reason` where the API takes an optional one: kept in the trail of admin actions with what was done. */
export const OPTIONAL_REASON = {
  type: 'string',
  describe: 'Why; kept in the trail of admin actions (payments admin actions)',
} as const;

/** The reason as the API takes it: left out when none was given, refused when it says nothing. */
export function optionalReason(reason: string | undefined): { reason?: string } {
  if (reason === undefined) return {};
  const trimmed = reason.trim();
  if (trimmed.length === 0 || trimmed.length > REASON_LENGTH.max) {
    throw usageError(`--reason must say why in 1 to ${REASON_LENGTH.max} characters.`);
  }
  return { reason: trimmed };
}

const pageOptions = <T>(y: Argv<T>) =>
  y
    .option('limit', { type: 'number', describe: 'Page size (1-100)' })
    .option('offset', { type: 'number', describe: 'Skip this many' });

const isWithdrawal = (item: ReconciliationItem): item is UnconfirmedWithdrawal =>
  item.kind === 'unconfirmed_withdrawal';

async function money(ctx: CommandContext, value: number | string, currency: string): Promise<string> {
  return formatAmount(value, await ctx.exponents.of(currency));
}

/**
 * Per currency, what live users owe back next to what the platform lost for good on deleted users' deposits; then
 * those losses, newest first.
 */
async function printLosses(ctx: CommandContext, report: Partial<OverdrawnReport>): Promise<void> {
  if (!report.by_currency || !report.platform_losses) return;
  ctx.out.line('');
  ctx.out.line('By currency: owed back by users below zero, and lost by the platform');
  ctx.out.table(
    ['CURRENCY', 'ACCOUNTS BELOW ZERO', 'OWED BACK', 'LOSSES', 'LOST'],
    await Promise.all(
      report.by_currency.map(async (total) => [
        total.currency,
        String(total.overdrawn_accounts),
        await money(ctx, total.overdrawn_total, total.currency),
        String(total.losses),
        await money(ctx, total.losses_total, total.currency),
      ]),
    ),
  );
  ctx.out.line('');
  ctx.out.line("Platform losses: refunds and lost disputes of deleted users' deposits");
  ctx.out.table(
    ['LOSS', 'DEPOSIT', 'REASON', 'CURRENCY', 'TAKEN BACK', 'FEE RETURNED', 'LOST', 'BOOKED'],
    await Promise.all(
      report.platform_losses.map(async (loss) => [
        loss.id,
        loss.deposit_id,
        loss.reason,
        loss.currency,
        await money(ctx, loss.amount, loss.currency),
        await money(ctx, loss.fee, loss.currency),
        await money(ctx, loss.loss, loss.currency),
        loss.booked_at,
      ]),
    ),
  );
}

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

function reconciliationCommands(admin: Argv<GlobalArgs>, run: Run): Argv<GlobalArgs> {
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
              .example('$0 admin reconciliation list --csv > reconciliation.csv', 'For a spreadsheet'),
          run(async (ctx, argv: PageArgs & { csv?: boolean }) => {
            if (argv.csv) {
              if (argv.limit !== undefined || argv.offset !== undefined) {
                throw usageError('The CSV report is the whole list: leave out --limit and --offset.');
              }
              return printReconciliationCsv(ctx);
            }
            const body = await ctx.api.admin.reconciliation.listPage({
              limit: argv.limit,
              offset: argv.offset,
            });
            if (ctx.out.json) return ctx.out.data(body);
            const rows = await Promise.all(body.data.map((item) => reconciliationRow(ctx, item)));
            ctx.out.table(
              ['KIND', 'CASE', 'TRANSACTION', 'REFERENCE', 'PROVIDER', 'LEDGER', 'CURRENCY', 'SINCE'],
              rows,
            );
            paginationNote(ctx, body);
          }),
        )
        .command(
          'show <case-id>',
          'Show one mismatch case and any decision on it',
          (y) =>
            y
              .positional('case-id', { type: 'string', demandOption: true, describe: 'Case id' })
              .example('$0 admin reconciliation show 5d1e…', ''),
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

function userCommands(admin: Argv<GlobalArgs>, run: Run): Argv<GlobalArgs> {
  const setStatus =
    (status: UserStatus, done: string) =>
    async (ctx: CommandContext, argv: { userId: string; reason?: string }) => {
      const body = await ctx.api.admin.users.setStatus(argv.userId, {
        status,
        ...optionalReason(argv.reason),
      });
      if (ctx.out.json) return ctx.out.data(body);
      ctx.out.line(`User ${body.username} (${body.id}) ${done}.`);
    };
  return admin.command('users', 'Find users, and disable or enable them', (users) =>
    users
      .command(
        'find',
        'Users by exact username or e-mail, the start of either, or status (all when none is given)',
        (y) =>
          pageOptions(y)
            .option('username', { type: 'string', describe: 'Exactly this username, any case' })
            .option('email', { type: 'string', describe: 'Exactly this e-mail address, any case' })
            .option('query', {
              alias: 'q',
              type: 'string',
              describe: 'The start of a username or an e-mail address, any case',
            })
            .option('status', {
              type: 'string',
              choices: USER_STATUSES,
              describe: 'Only users with this status',
            })
            .example('$0 admin users find --query ali', 'alice, alina@example.com, …')
            .example('$0 admin users find --status locked', ''),
        run(
          async (
            ctx,
            argv: PageArgs & { username?: string; email?: string; query?: string; status?: UserStatus },
          ) => {
            const body = await ctx.api.admin.users.findPage({
              username: argv.username,
              email: argv.email,
              q: argv.query,
              status: argv.status,
              limit: argv.limit,
              offset: argv.offset,
            });
            if (ctx.out.json) return ctx.out.data(body);
            ctx.out.table(
              ['ID', 'USERNAME', 'EMAIL', 'ROLE', 'STATUS', 'CREATED'],
              body.data.map((u) => [u.id, u.username, u.email, u.role, u.status, u.created_at]),
            );
            paginationNote(ctx, body);
          },
        ),
      )
      .command(
        'disable <user-id>',
        'Disable a user: their tokens are revoked at once and their logins refused',
        (y) =>
          y
            .positional('user-id', { type: 'string', demandOption: true, describe: 'User id' })
            .option('reason', OPTIONAL_REASON)
            .example('$0 admin users disable 6801acf0… --reason "chargeback ring, ticket 77"', ''),
        run(setStatus('disabled', 'is disabled; their tokens are revoked')),
      )
      .command(
        'enable <user-id>',
        'Make a disabled or locked user active again',
        (y) =>
          y
            .positional('user-id', { type: 'string', demandOption: true, describe: 'User id' })
            .option('reason', OPTIONAL_REASON)
            .example('$0 admin users enable 6801acf0…', ''),
        run(setStatus('active', 'is active')),
      )
      .demandCommand(1, 'Say what to do with users: find, disable or enable.'),
  );
}

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

function deadLetterCommands(admin: Argv<GlobalArgs>, run: Run): Argv<GlobalArgs> {
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

/** Operators' views and decisions; the API answers them only for an admin's login (403 otherwise). */
export function adminCommands(cli: Argv<GlobalArgs>, run: Run): Argv<GlobalArgs> {
  return cli.command('admin', "Operators' commands (an admin's login)", (admin) =>
    deadLetterCommands(userCommands(reconciliationCommands(admin, run), run), run)
      .command(
        'actions',
        'The append-only trail of what admins did, to whose resources, and why',
        (y) =>
          pageOptions(y)
            .option('actor', { type: 'string', describe: "Only this admin's actions (user id)" })
            .option('owner', { type: 'string', describe: "Only actions on this user's resources (user id)" })
            .example('$0 admin actions --limit 50', '')
            .example('$0 admin actions --owner 6801acf0…', 'What admins did to one user'),
        run(async (ctx, argv: PageArgs & { actor?: string; owner?: string }) => {
          const body = await ctx.api.admin.actions.listPage({
            limit: argv.limit,
            offset: argv.offset,
            actor: argv.actor,
            owner: argv.owner,
          });
          if (ctx.out.json) return ctx.out.data(body);
          ctx.out.table(
            ['ID', 'WHEN', 'ACTOR', 'ACTION', 'SUBJECT', 'OWNER', 'REASON'],
            body.data.map((a) => [
              a.id,
              a.created_at,
              a.actor,
              a.action,
              a.subject,
              a.owner ?? '(platform)',
              a.reason ?? '',
            ]),
          );
          paginationNote(ctx, body);
        }),
      )
      .command(
        'overdrawn',
        'Accounts a refund or lost dispute took below zero, and the platform losses on deleted users',
        (y) => pageOptions(y).example('$0 admin overdrawn', ''),
        run(async (ctx, argv: PageArgs) => {
          const body = await ctx.api.admin.overdrawnAccounts.listPage({
            limit: argv.limit,
            offset: argv.offset,
          });
          if (ctx.out.json) return ctx.out.data(body);
          const rows = await Promise.all(
            body.data.map(async (a) => [
              a.id,
              a.user_id,
              a.currency,
              await money(ctx, a.balance, a.currency),
              await money(ctx, a.overdrawn_by, a.currency),
            ]),
          );
          ctx.out.table(['ACCOUNT', 'USER', 'CURRENCY', 'BALANCE', 'OVERDRAWN BY'], rows);
          paginationNote(ctx, body);
          await printLosses(ctx, body);
        }),
      )
      .command(
        'deliveries <endpoint-id>',
        "The delivery log of any user's webhook endpoint: status, attempts, last answer, next retry",
        (y) =>
          pageOptions(y)
            .positional('endpoint-id', { type: 'string', demandOption: true, describe: 'Endpoint id' })
            .option('status', { type: 'string', choices: WEBHOOK_DELIVERY_STATUSES })
            .example('$0 admin deliveries 653b6d43… --status failed', ''),
        run(async (ctx, argv: DeliveryLogQuery & { endpointId: string }) =>
          printDeliveryLog(ctx, argv.endpointId, argv),
        ),
      )
      .demandCommand(
        1,
        'Say what to do: users, reconciliation, actions, overdrawn, deliveries or dead-letters.',
      ),
  );
}
