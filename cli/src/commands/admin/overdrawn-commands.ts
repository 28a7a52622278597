import type { Argv } from 'yargs';
import type { OverdrawnReport } from '@payments/contracts';
import type { CommandContext, GlobalArgs } from '../../context.js';
import type { Run } from '../run.js';
import { pageOptions, pageQuery, paginationNote, type PageArgs } from '../paging.js';
import { money } from './admin-options.js';

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

/** Accounts below zero, and what the platform lost on deleted users' deposits. */
export function overdrawnCommands(admin: Argv<GlobalArgs>, run: Run): Argv<GlobalArgs> {
  return admin.command(
    'overdrawn',
    'Accounts a refund or lost dispute took below zero, and the platform losses on deleted users',
    (y) => pageOptions(y).example('$0 admin overdrawn', ''),
    run(async (ctx, argv: PageArgs) => {
      const body = await ctx.api.admin.overdrawnAccounts.listPage({
        ...pageQuery(argv),
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
      paginationNote(ctx, body, argv);
      await printLosses(ctx, body);
    }),
  );
}
