import { randomUUID } from 'node:crypto';
import type { Argv } from 'yargs';
import type { RefundRequest } from '@payments/client';
import { REFUND_REASONS } from '@payments/contracts/enums';
import { minorToNumber } from '@payments/contracts/money';
import { formatAmount, parseUserAmount } from '../amounts.js';
import type { GlobalArgs } from '../context.js';
import { CliError, EXIT } from '../exit-codes.js';
import { waitForTransaction } from '../transaction-wait.js';
import { printAccepted, sendOnce } from './money-commands.js';
import type { Run } from './run.js';

interface RefundArgs {
  transaction_id: string;
  amount?: string;
  reason?: RefundRequest['reason'];
  wait: boolean;
  timeout: number;
  'idempotency-key'?: string;
}

/**
 * `payments refund TRANSACTION [AMOUNT]`: refunds a completed card deposit through the provider (all that is left,
 * or AMOUNT), then waits until the provider has confirmed (or refused) the refund.
 */
export function refundCommands(cli: Argv<GlobalArgs>, run: Run): Argv<GlobalArgs> {
  return cli.command(
    'refund <transaction_id> [amount]',
    'Refund a completed card deposit, in whole or in part, and wait for the provider',
    (y) =>
      y
        .positional('transaction_id', { type: 'string', demandOption: true, describe: 'The deposit' })
        .positional('amount', { type: 'string', describe: 'Decimal amount; all that is left when omitted' })
        .option('reason', {
          type: 'string',
          choices: REFUND_REASONS,
          describe: 'Why, as the provider records it',
        })
        .option('wait', {
          type: 'boolean',
          default: true,
          describe: 'Wait until the refund settles (--no-wait)',
        })
        .option('timeout', { type: 'number', default: 60, describe: 'Seconds to wait before giving up' })
        .option('idempotency-key', {
          type: 'string',
          describe: 'Reuse to retry safely; generated when omitted',
        })
        .example('$0 refund 7b1e…', 'Refunded 100.00 USD of deposit 7b1e…: refund 2c9d… completed.')
        .example('$0 refund 7b1e… 25 --reason requested_by_customer', 'a partial refund'),
    run(async (ctx, argv: RefundArgs) => {
      const key = argv['idempotency-key'] ?? randomUUID();
      const body: RefundRequest = {};
      if (argv.amount !== undefined) {
        const deposit = await ctx.api.transactions.get(argv.transaction_id);
        const exponent = await ctx.exponents.of(deposit.currency);
        const minor = parseUserAmount(argv.amount, deposit.currency, exponent);
        body.amount = minorToNumber(minor, exponent);
      }
      if (argv.reason) body.reason = argv.reason;
      const refund = await sendOnce(ctx, key, () =>
        ctx.api.transactions.refund(argv.transaction_id, body, { idempotencyKey: key }),
      );
      const exponent = await ctx.exponents.of(refund.currency);
      const amount = `${formatAmount(refund.amount, exponent)} ${refund.currency}`;
      if (!argv.wait) {
        printAccepted(ctx, 'Refund', refund, key);
        return;
      }
      const outcome = await waitForTransaction(ctx.api.transactions, refund, {
        timeoutMs: argv.timeout * 1000,
        spinner: ctx.interactive,
        label: `Waiting for refund ${refund.id}`,
      });
      const settled = outcome.transaction;
      if (ctx.out.json) ctx.out.data({ transaction: settled, idempotency_key: key });
      if (!outcome.done) {
        throw new CliError(
          EXIT.timeout,
          `Gave up waiting after ${argv.timeout} s: refund ${settled.id} is still ${settled.status}.`,
          [`Check it with: payments transaction ${settled.id}`],
        );
      }
      if (settled.status !== 'completed') {
        throw new CliError(
          EXIT.transactionFailed,
          `Refund ${settled.id} ${settled.status}: ${(settled.failure_reason ?? 'no reason given').replace(/\.$/, '')}.`,
        );
      }
      if (!ctx.out.json) {
        ctx.out.line(`Refunded ${amount} of deposit ${argv.transaction_id}: refund ${settled.id} completed.`);
      }
    }),
  );
}
