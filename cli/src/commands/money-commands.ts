import { randomUUID } from 'node:crypto';
import type { Argv } from 'yargs';
import type { DepositRequest, MoneyOptions, Transaction } from '@payments/client';
import { minorToNumber } from '@payments/contracts/money';
import { formatAmount, parseUserAmount } from '../amounts.js';
import type { CommandContext, GlobalArgs } from '../context.js';
import { CliError, EXIT } from '../exit-codes.js';
import { feeOf, TERMINAL_STATUSES, waitForTransaction } from '../transaction-wait.js';
import { parseMetadata } from './account-commands.js';
import type { Run } from './run.js';

interface MoneyArgs {
  amount: string;
  currency?: string;
  wait: boolean;
  timeout: number;
  'idempotency-key'?: string;
  reference?: string;
  metadata: string[];
}

interface PayArgs {
  'pay-with'?: string;
}

type Operation = 'deposit' | 'withdraw' | 'transfer';

/** The client's call for one operation, the account (and a transfer's destination) bound in. */
type Send = (body: DepositRequest, options: MoneyOptions) => Promise<Transaction>;

const NOUN: Record<Operation, string> = { deposit: 'Deposit', withdraw: 'Withdrawal', transfer: 'Transfer' };

/**
 * Sends a money request under its Idempotency-Key. When the API could not be reached, the request may still have
 * been accepted: the error says which key retries it without moving money twice.
 */
export async function sendOnce(
  ctx: CommandContext,
  key: string,
  send: () => Promise<Transaction>,
): Promise<Transaction> {
  try {
    return await send();
  } catch (error) {
    const failure = ctx.failure(error);
    if (failure instanceof CliError && failure.exitCode === EXIT.unavailable) {
      failure.details.push(
        `It may have been accepted; retrying with --idempotency-key ${key} never repeats it.`,
      );
    }
    throw failure;
  }
}

/** What --no-wait prints: the accepted transaction, and how to look at it later. */
export function printAccepted(
  ctx: CommandContext,
  noun: string,
  transaction: Transaction,
  key: string,
): void {
  if (ctx.out.json) ctx.out.data({ transaction, idempotency_key: key });
  else ctx.out.line(`${noun} accepted: transaction ${transaction.id} is ${transaction.status}.`);
  ctx.out.note(`Check it with: payments transaction ${transaction.id}`, 'dim');
}

/**
 * Sends a money operation with an Idempotency-Key (the given one, so a retry never moves money twice, or a new
 * one, which the client's own retries reuse), then reads its transaction until it is terminal. Returns the settled
 * transaction and the account's balance after it, or null with --no-wait. With a payment method (a deposit's
 * --pay-with), the provider pays it as it makes the payment: a declined attempt, which leaves the deposit pending
 * with its reason, ends the wait too.
 */
async function moveMoney(
  ctx: CommandContext,
  operation: Operation,
  accountId: string,
  args: MoneyArgs,
  send: Send,
  paymentMethod?: string,
): Promise<{ transaction: Transaction; exponent: number; balance: number } | null> {
  const metadata = parseMetadata(args.metadata);
  const currency = (args.currency ?? (await ctx.api.accounts.get(accountId)).currency).toUpperCase();
  const exponent = await ctx.exponents.of(currency);
  const minor = parseUserAmount(args.amount, currency, exponent);
  const key = args['idempotency-key'] ?? randomUUID();
  const body: DepositRequest = {
    amount: minorToNumber(minor, exponent),
    currency,
    ...(args.metadata.length > 0 ? { metadata } : {}),
    ...(args.reference !== undefined ? { reference: args.reference } : {}),
    ...(paymentMethod !== undefined ? { payment_method: paymentMethod } : {}),
  };
  const transaction = await sendOnce(ctx, key, () => send(body, { idempotencyKey: key }));
  // The payer may pay in a browser once the provider made the payment: said once, on stderr (stdout stays the result);
  // not when this command pays it with a named method.
  let shownPaymentUrl = paymentMethod !== undefined;
  const showPaymentUrl = (t: Transaction) => {
    const url = t.provider_payment?.payment_url;
    if (shownPaymentUrl || url === undefined || t.status !== 'pending' || ctx.out.json) return;
    shownPaymentUrl = true;
    ctx.out.note(`Pay it in a browser: ${url}`);
  };
  if (!args.wait) {
    printAccepted(ctx, NOUN[operation], transaction, key);
    showPaymentUrl(transaction);
    return null;
  }
  const outcome = await waitForTransaction(ctx.api.transactions, transaction, {
    timeoutMs: args.timeout * 1000,
    spinner: ctx.interactive,
    label: `Waiting for ${NOUN[operation].toLowerCase()} ${transaction.id}`,
    // A pending deposit with a reason had its payment attempt declined (the method named here: nobody else has
    // tried to pay it); it stays pending for another method.
    until: (t) =>
      TERMINAL_STATUSES.includes(t.status) || (paymentMethod !== undefined && t.failure_reason !== null),
    // The payer is waiting: look often (the provider answers within a fraction of a second).
    ...(paymentMethod !== undefined ? { maxDelayMs: 300 } : {}),
    onLook: showPaymentUrl,
  });
  const settled = outcome.transaction;
  if (!outcome.done) {
    if (ctx.out.json) ctx.out.data({ transaction: settled, idempotency_key: key });
    throw new CliError(
      EXIT.timeout,
      `Gave up waiting after ${args.timeout} s: transaction ${settled.id} is still ${settled.status}.`,
      [`Check it with: payments transaction ${settled.id}`],
    );
  }
  if (settled.status === 'pending') {
    if (ctx.out.json) ctx.out.data({ transaction: settled, idempotency_key: key });
    throw new CliError(
      EXIT.transactionFailed,
      `Payment attempt for deposit ${settled.id} declined: ${settled.failure_reason ?? 'no reason given'}`,
      [
        'The deposit stays pending (until it expires) and credits nothing: deposit again with another ' +
          '--pay-with method.',
      ],
    );
  }
  if (settled.status !== 'completed') {
    if (ctx.out.json) ctx.out.data({ transaction: settled });
    throw new CliError(
      EXIT.transactionFailed,
      `${NOUN[operation]} ${settled.id} ${settled.status}: ${(settled.failure_reason ?? 'no reason given').replace(/\.$/, '')}.`,
    );
  }
  const balance = await ctx.api.balances.get(accountId);
  if (ctx.out.json) ctx.out.data({ transaction: settled, balance });
  const fee = feeOf(settled);
  if (fee !== undefined && fee > 0 && !ctx.out.json)
    ctx.out.note(`Fee: ${formatAmount(fee, exponent)} ${currency}`, 'dim');
  return { transaction: settled, exponent, balance: balance.balance };
}

function moneyOptions<T extends GlobalArgs>(y: Argv<T>) {
  return y
    .positional('amount', { type: 'string', demandOption: true, describe: 'Decimal amount, e.g. 100.50' })
    .option('currency', { type: 'string', describe: "Defaults to the account's currency" })
    .option('wait', {
      type: 'boolean',
      default: true,
      describe: 'Wait until the transaction settles (--no-wait)',
    })
    .option('timeout', { type: 'number', default: 60, describe: 'Seconds to wait before giving up' })
    .option('idempotency-key', { type: 'string', describe: 'Reuse to retry safely; generated when omitted' })
    .option('reference', {
      type: 'string',
      describe: 'Your own name for it (an order, an invoice), unique among your transactions',
    })
    .option('metadata', {
      type: 'string',
      array: true,
      default: [],
      describe: 'key=value of your own, repeatable',
    });
}

export function moneyCommands(cli: Argv<GlobalArgs>, run: Run): Argv<GlobalArgs> {
  return cli
    .command(
      'deposit <account_id> <amount>',
      'Deposit money and wait for the payment to complete',
      (y) =>
        moneyOptions(
          y.positional('account_id', { type: 'string', demandOption: true, describe: 'Account id' }),
        )
          .example('$0 deposit 3f0c… 100', 'Deposited 100.00 to account 3f0c…. New balance: 100.00')
          .option('pay-with', {
            type: 'string',
            describe:
              "Pay it at once with this payment method (pm_…): one of the provider's test methods " +
              '(pm_card_visa, pm_card_chargeDeclined, …)',
          })
          .example('$0 deposit 3f0c… 25.50 --no-wait', 'prints the pending transaction id')
          .example(
            '$0 deposit 3f0c… 25 --reference order-8812 --metadata order=8812',
            'your own names for it',
          )
          .example('$0 deposit 3f0c… 25 --pay-with pm_card_chargeDeclined', 'shows the declined attempt'),
      run(async (ctx, argv: MoneyArgs & PayArgs & { account_id: string }) => {
        const send: Send = (body, options) => ctx.api.money.deposit(argv.account_id, body, options);
        const done = await moveMoney(ctx, 'deposit', argv.account_id, argv, send, argv['pay-with']);
        if (!done || ctx.out.json) return;
        const amount = formatAmount(done.transaction.amount, done.exponent);
        const balance = formatAmount(done.balance, done.exponent);
        ctx.out.line(`Deposited ${amount} to account ${argv.account_id}. New balance: ${balance}`);
      }),
    )
    .command(
      'withdraw <account_id> <amount>',
      'Withdraw money and wait for the payout to complete',
      (y) =>
        moneyOptions(
          y.positional('account_id', { type: 'string', demandOption: true, describe: 'Account id' }),
        ).example('$0 withdraw 3f0c… 40', 'Withdrew 40.00 from account 3f0c…. New balance: 60.00'),
      run(async (ctx, argv: MoneyArgs & { account_id: string }) => {
        const send: Send = (body, options) => ctx.api.money.withdraw(argv.account_id, body, options);
        const done = await moveMoney(ctx, 'withdraw', argv.account_id, argv, send);
        if (!done || ctx.out.json) return;
        const amount = formatAmount(done.transaction.amount, done.exponent);
        const balance = formatAmount(done.balance, done.exponent);
        ctx.out.line(`Withdrew ${amount} from account ${argv.account_id}. New balance: ${balance}`);
      }),
    )
    .command(
      'transfer <from_account_id> <to_account_id> <amount>',
      'Move money between accounts and wait for it to settle',
      (y) =>
        moneyOptions(
          y
            .positional('from_account_id', { type: 'string', demandOption: true, describe: 'Source account' })
            .positional('to_account_id', {
              type: 'string',
              demandOption: true,
              describe: 'Destination account',
            }),
        ).example('$0 transfer 3f0c… 9a71… 10', 'Transferred 10.00 from account 3f0c… to account 9a71…. …'),
      run(async (ctx, argv: MoneyArgs & { from_account_id: string; to_account_id: string }) => {
        const send: Send = (body, options) =>
          ctx.api.money.transfer(
            argv.from_account_id,
            { to_account_id: argv.to_account_id, ...body },
            options,
          );
        const done = await moveMoney(ctx, 'transfer', argv.from_account_id, argv, send);
        if (!done || ctx.out.json) return;
        const amount = formatAmount(done.transaction.amount, done.exponent);
        const balance = formatAmount(done.balance, done.exponent);
        ctx.out.line(
          `Transferred ${amount} from account ${argv.from_account_id} to account ${argv.to_account_id}. ` +
            `New balance: ${balance}`,
        );
      }),
    );
}
