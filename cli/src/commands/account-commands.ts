import type { Argv } from 'yargs';
import type { Account, PayoutAccount } from '@payments/client';
import { formatAmount } from '../amounts.js';
import type { CommandContext, GlobalArgs } from '../context.js';
import { usageError } from '../exit-codes.js';
import { idArgument } from './id-argument.js';
import { pageOptions, pageQuery, paginationNote, type PageArgs } from './paging.js';
import type { Run } from './run.js';
import { momentOf } from './statement-commands.js';

export function parseMetadata(pairs: readonly string[]): Record<string, string> {
  const metadata: Record<string, string> = {};
  for (const pair of pairs) {
    const at = pair.indexOf('=');
    if (at <= 0) throw usageError(`Metadata must be key=value, got "${pair}".`);
    metadata[pair.slice(0, at)] = pair.slice(at + 1);
  }
  return metadata;
}

/** Whether the provider pays out to a payout account, and what it still needs if not. */
function readinessLine(account: PayoutAccount): string {
  if (account.payouts_enabled) return 'Payouts are enabled.';
  const due = account.requirements.currently_due;
  const reason = account.requirements.disabled_reason;
  return (
    `Payouts are not enabled yet${reason ? ` (${reason})` : ''}` +
    `${due.length > 0 ? `; still due: ${due.join(', ')}` : ''}.`
  );
}

export async function describeAccount(ctx: CommandContext, account: Account): Promise<[string, string][]> {
  const exponent = await ctx.exponents.of(account.currency);
  return [
    ['Account', account.id],
    ['Currency', account.currency],
    ['Balance', formatAmount(account.balance, exponent)],
    ...(account.available_balance === undefined
      ? []
      : ([['Available', formatAmount(account.available_balance, exponent)]] as [string, string][])),
    ['Metadata', JSON.stringify(account.metadata ?? {})],
    ['Created', account.created_at ?? ''],
  ];
}

export function accountCommands(cli: Argv<GlobalArgs>, run: Run): Argv<GlobalArgs> {
  return cli
    .command('account', 'Open, list and show accounts', (account) =>
      account
        .command(
          'create <currency>',
          'Open an account in a currency; prints its id',
          (y) =>
            y
              .positional('currency', {
                type: 'string',
                demandOption: true,
                describe: 'ISO 4217 code, e.g. USD',
              })
              .option('metadata', {
                type: 'string',
                array: true,
                default: [],
                describe: 'key=value, repeatable',
              })
              .example('$0 account create USD --metadata purpose=savings', ''),
          run(async (ctx, argv: { currency: string; metadata: string[] }) => {
            const metadata = parseMetadata(argv.metadata);
            const body = await ctx.api.accounts.open({
              currency: argv.currency.toUpperCase(),
              ...(argv.metadata.length ? { metadata } : {}),
            });
            if (ctx.out.json) return ctx.out.data(body);
            ctx.out.line(body.id);
          }),
        )
        .command(
          'list',
          'List your accounts',
          (y) => pageOptions(y).example('$0 account list --limit 10', ''),
          run(async (ctx, argv: PageArgs) => {
            const body = await ctx.api.accounts.listPage(pageQuery(argv));
            if (ctx.out.json) return ctx.out.data(body);
            const rows = await Promise.all(
              body.data.map(async (a) => {
                const exponent = await ctx.exponents.of(a.currency);
                return [
                  a.id,
                  a.currency,
                  formatAmount(a.balance, exponent),
                  a.available_balance === undefined ? '' : formatAmount(a.available_balance, exponent),
                  a.created_at ?? '',
                ];
              }),
            );
            ctx.out.table(['ID', 'CURRENCY', 'BALANCE', 'AVAILABLE', 'CREATED'], rows);
            paginationNote(ctx, body, argv);
          }),
        )
        .command(
          'show <id>',
          'Show one account',
          idArgument('id', 'Account id', '$0 account show 3f0c…'),
          run(async (ctx, argv: { id: string }) => {
            const body = await ctx.api.accounts.get(argv.id);
            if (ctx.out.json) return ctx.out.data(body);
            ctx.out.fields(await describeAccount(ctx, body));
          }),
        )
        .demandCommand(1, 'Say what to do with accounts: create, list or show.'),
    )
    .command('payout-account', 'Link, show and replace where your withdrawals are paid out', (payout) =>
      payout
        .command(
          'link',
          "Make your account at the payment provider and link it; prints where to finish the provider's onboarding",
          (y) => y.example('$0 payout-account link', 'Linked payout account acct_… (stripe).'),
          run(async (ctx) => {
            const body = await ctx.api.payoutAccount.link();
            if (ctx.out.json) return ctx.out.data(body);
            ctx.out.line(`Linked payout account ${body.account} (${body.provider}).`);
            ctx.out.line(readinessLine(body));
            if (body.onboarding_url)
              ctx.out.line(`Finish the provider's onboarding at: ${body.onboarding_url}`);
          }),
        )
        .command(
          ['show', '$0'],
          'Show the payout account your withdrawals go to, and whether the provider pays out to it',
          (y) => y.example('$0 payout-account', 'Payouts:    enabled'),
          run(async (ctx) => {
            const body = await ctx.api.payoutAccount.get();
            if (ctx.out.json) return ctx.out.data(body);
            ctx.out.fields([
              ['Account', body.account],
              ['Provider', body.provider],
              ['Payouts', body.payouts_enabled ? 'enabled' : 'disabled'],
              ['Still due', body.requirements.currently_due.join(', ') || 'nothing'],
              ['Disabled', body.requirements.disabled_reason ?? '-'],
              ['Linked', body.created_at],
            ]);
          }),
        )
        .command(
          'replace',
          'Replace your payout account by a new one made at the provider (refused while a withdrawal is pending)',
          (y) =>
            y
              .option('replaces', {
                type: 'string',
                describe: 'The account to replace (default: the one linked now)',
              })
              .example('$0 payout-account replace', 'Replaced acct_old by payout account acct_new (stripe).'),
          run(async (ctx, argv: { replaces?: string }) => {
            const replaces = argv.replaces ?? (await ctx.api.payoutAccount.get()).account;
            const body = await ctx.api.payoutAccount.replace({ replaces });
            if (ctx.out.json) return ctx.out.data(body);
            ctx.out.line(`Replaced ${replaces} by payout account ${body.account} (${body.provider}).`);
            ctx.out.line(readinessLine(body));
            if (body.onboarding_url)
              ctx.out.line(`Finish the provider's onboarding at: ${body.onboarding_url}`);
          }),
        ),
    )
    .command(
      'balance <account_id>',
      'Print an account balance, now or at a past moment',
      (y) =>
        y
          .positional('account_id', { type: 'string', demandOption: true, describe: 'Account id' })
          .option('at', {
            type: 'string',
            describe: 'The balance at this moment: YYYY-MM-DD (midnight UTC) or an RFC 3339 date-time',
          })
          .example('$0 balance 3f0c…', 'Account 3f0c… balance: 100.00 USD')
          .example(
            '$0 balance 3f0c… --at 2026-11-01',
            'Account 3f0c… balance at 2026-11-01T00:00:00.000Z: …',
          ),
      run(async (ctx, argv: { account_id: string; at?: string }) => {
        const body =
          argv.at === undefined
            ? await ctx.api.balances.get(argv.account_id)
            : await ctx.api.balances.at(argv.account_id, momentOf(argv.at, 'at'));
        if (ctx.out.json) return ctx.out.data(body);
        const exponent = await ctx.exponents.of(body.currency);
        const when = 'at' in body ? ` at ${body.at}` : '';
        ctx.out.line(
          `Account ${body.account_id} balance${when}: ${formatAmount(body.balance, exponent)} ${body.currency}`,
        );
      }),
    );
}
