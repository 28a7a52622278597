import { randomUUID } from 'node:crypto';
import type { Argv } from 'yargs';
import type { MoneyOptions, MoneyRequest, Transaction } from '@payments/client';
import { minorToNumber } from '@payments/contracts/money';
import { formatAmount, parseUserAmount } from '../amounts.js';
import type { CommandContext, GlobalArgs } from '../context.js';
import { CliError, EXIT } from '../exit-codes.js';
import { feeOf, TERMINAL_STATUSES, waitForTransaction } from '../transaction-wait.js';
import type { Run } from './run.js';

interface MoneyArgs {
  amount: string;
  currency?: string;
  wait: boolean;
  timeout: number;
  'idempotency-key'?: string;
}

interface PayArgs {
  'pay-with'?: string;
  'provider-url': string;
  'publishable-key': string;
}

type Operation = 'deposit' | 'withdraw' | 'transfer';

/** The client's call for one operation, the account (and a transfer's destination) bound in. */
type Send = (amount: MoneyRequest, options: MoneyOptions) => Promise<Transaction>;

const NOUN: Record<Operation, string> = { deposit: 'Deposit', withdraw: 'Withdrawal', transfer: 'Transfer' };

/**
 * Sends a money operation with an Idempotency-Key (the given one, so a retry never moves money twice, or a new
 * one, which the client's own retries reuse), then reads its transaction until it is terminal. Returns the settled
 * transaction and the account's balance after it, or null with --no-wait.
 */
async function moveMoney(
  ctx: CommandContext,
  operation: Operation,
  accountId: string,
  args: MoneyArgs,
  send: Send,
  pay?: (accepted: Transaction) => Promise<void>,
): Promise<{ transaction: Transaction; exponent: number; balance: number } | null> {
  const currency = (args.currency ?? (await ctx.api.accounts.get(accountId)).currency).toUpperCase();
  const exponent = await ctx.exponents.of(currency);
  const minor = parseUserAmount(args.amount, currency, exponent);
  const key = args['idempotency-key'] ?? randomUUID();
  let transaction: Transaction;
  try {
    transaction = await send({ amount: minorToNumber(minor, exponent), currency }, { idempotencyKey: key });
  } catch (error) {
    const failure = ctx.failure(error);
    if (failure instanceof CliError && failure.exitCode === EXIT.unavailable) {
      failure.details.push(
        `It may have been accepted; retrying with --idempotency-key ${key} never repeats it.`,
      );
    }
    throw failure;
  }
  await pay?.(transaction);
  if (!args.wait) {
    if (ctx.out.json) ctx.out.data({ transaction, idempotency_key: key });
    else ctx.out.line(`${NOUN[operation]} accepted: transaction ${transaction.id} is ${transaction.status}.`);
    ctx.out.note(`Check it with: payments transaction ${transaction.id}`, 'dim');
    return null;
  }
  const outcome = await waitForTransaction(ctx.api.transactions, transaction, {
    timeoutMs: args.timeout * 1000,
    spinner: ctx.interactive,
    label: `Waiting for ${NOUN[operation].toLowerCase()} ${transaction.id}`,
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

/**
 * Pays an accepted deposit as the payer's app would: waits until the provider's payment is there (its client
 * secret, shown to the owner), then confirms it at the provider with the publishable key and the given test method.
 * A declined attempt leaves the deposit pending: it says so and exits, without waiting.
 */
async function payAtProvider(
  ctx: CommandContext,
  accepted: Transaction,
  method: string,
  args: PayArgs & MoneyArgs,
): Promise<void> {
  const ready = await waitForTransaction(ctx.api.transactions, accepted, {
    timeoutMs: args.timeout * 1000,
    spinner: ctx.interactive,
    label: `Waiting for the provider's payment of ${accepted.id}`,
    until: (t) => TERMINAL_STATUSES.includes(t.status) || t.provider_payment?.client_secret !== undefined,
    // The payer is waiting to pay: look often (the payment usually exists within a fraction of a second).
    maxDelayMs: 200,
  });
  const payment = ready.transaction.provider_payment;
  if (!payment?.client_secret) {
    throw new CliError(
      ready.done ? EXIT.businessRule : EXIT.timeout,
      `Deposit ${accepted.id} has no payment to pay at the provider (it is ${ready.transaction.status}).`,
    );
  }
  const { default: Stripe } = await import('stripe');
  const url = new URL(args['provider-url']);
  const provider = new Stripe(args['publishable-key'], {
    host: url.hostname,
    port: Number(url.port || (url.protocol === 'http:' ? 80 : 443)),
    protocol: url.protocol === 'http:' ? 'http' : 'https',
    maxNetworkRetries: 2,
  });
  try {
    // What Stripe.js sends: the publishable key and the payment's client secret.
    await provider.paymentIntents.confirm(payment.reference, {
      payment_method: method,
      client_secret: payment.client_secret,
    } as Parameters<typeof provider.paymentIntents.confirm>[1]);
  } catch (error) {
    if (
      error instanceof Stripe.errors.StripeConnectionError ||
      error instanceof Stripe.errors.StripeAPIError
    ) {
      throw new CliError(EXIT.unavailable, `The provider at ${args['provider-url']} cannot be reached.`, [
        'Check --provider-url / PAYMENTS_PROVIDER_URL.',
      ]);
    }
    if (
      error instanceof Stripe.errors.StripeInvalidRequestError &&
      error.code === 'payment_intent_unexpected_state' &&
      error.payment_intent?.status === 'succeeded'
    ) {
      // Paid already (the sandbox plays a payer who did not wait): the deposit completes all the same.
      ctx.out.note(`The payment of deposit ${accepted.id} was made before this card was tried.`, 'dim');
      return;
    }
    if (error instanceof Stripe.errors.StripeCardError) {
      if (ctx.out.json) ctx.out.data({ transaction: ready.transaction, payment_error: error.message });
      throw new CliError(
        EXIT.transactionFailed,
        `Payment attempt for deposit ${accepted.id} declined: ${error.message}`,
        [`The deposit stays pending: pay again with --pay-with and another method, or leave it to expire.`],
      );
    }
    if (error instanceof Stripe.errors.StripeError) {
      throw new CliError(EXIT.businessRule, `The provider refused the payment: ${error.message}`);
    }
    throw error;
  }
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
    .option('idempotency-key', { type: 'string', describe: 'Reuse to retry safely; generated when omitted' });
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
              "Pay it yourself, as the payer's app would, with one of the provider's test payment methods " +
              '(pm_card_visa, pm_card_chargeDeclined, …)',
          })
          .option('provider-url', {
            type: 'string',
            default: process.env.PAYMENTS_PROVIDER_URL ?? 'http://127.0.0.1:3005',
            describe: "Where the provider's API answers the payer (or PAYMENTS_PROVIDER_URL)",
          })
          .option('publishable-key', {
            type: 'string',
            default: process.env.PAYMENTS_PUBLISHABLE_KEY ?? 'pk_test_sandbox_development_only',
            describe: "The provider's publishable key the payer confirms with (or PAYMENTS_PUBLISHABLE_KEY)",
          })
          .example('$0 deposit 3f0c… 25.50 --no-wait', 'prints the pending transaction id')
          .example('$0 deposit 3f0c… 25 --pay-with pm_card_chargeDeclined', 'shows the declined attempt'),
      run(async (ctx, argv: MoneyArgs & PayArgs & { account_id: string }) => {
        const method = argv['pay-with'];
        const pay = method
          ? (accepted: Transaction) => payAtProvider(ctx, accepted, method, argv)
          : undefined;
        const send: Send = (amount, options) => ctx.api.money.deposit(argv.account_id, amount, options);
        const done = await moveMoney(ctx, 'deposit', argv.account_id, argv, send, pay);
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
        const send: Send = (amount, options) => ctx.api.money.withdraw(argv.account_id, amount, options);
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
        const send: Send = (amount, options) =>
          ctx.api.money.transfer(
            argv.from_account_id,
            { to_account_id: argv.to_account_id, ...amount },
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
