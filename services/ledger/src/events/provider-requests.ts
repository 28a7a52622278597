import { randomUUID } from 'node:crypto';
import { startPoller, type Logger, type Metrics, type OutboxRelay } from '@payments/service-kit';
import type { LedgerStore, ProviderWork } from '../data/ledger-store.js';
import { ProviderRefusal, type PaymentProvider } from '../provider/payment-provider.js';
import { refusedByProvider, settle } from './settlement-flows.js';

export interface ProviderRequestsOptions {
  store: LedgerStore;
  provider: PaymentProvider;
  outbox: Pick<OutboxRelay, 'wake'>;
  logger: Logger;
  metrics: Metrics;
  /** How often due work is looked for while there is none; recorded work wakes it at once. */
  intervalMs?: number;
}

export interface ProviderRequests {
  /** Work was recorded: look for it now. */
  wake(): void;
  stop(): Promise<void>;
}

/** Requests claimed per pass; each pass makes their calls concurrently. */
const BATCH = 50;
/**
 * How long a claimed request is left to its claimant before another process may take it: longer than a call with
 * all of the library's retries lasts (the Stripe adapter: 10 s per attempt, 3 attempts, about 35 s at worst), and
 * so how long a call cut short by a crash waits to be made again. Should it be taken while still under way, the
 * idempotency key makes the second call return the first one's payment.
 */
const LEASE_MS = 45_000;
const FIRST_RETRY_MS = 1_000;
const MAX_RETRY_MS = 300_000;

/**
 * Exponential backoff with equal jitter: the n-th failed attempt waits between half and all of 2^(n-1) s, at most
 * five minutes.
 */
export function retryDelayMs(attempts: number, random: () => number = Math.random): number {
  const ceiling = Math.min(FIRST_RETRY_MS * 2 ** Math.max(0, attempts - 1), MAX_RETRY_MS);
  return Math.round(ceiling / 2 + (random() * ceiling) / 2);
}

/**
 * Asks the payment provider for what consumed requests need (recorded in provider_payments, after the commit that
 * accepted each transaction): a deposit's payment (canceled once the deposit expired), a withdrawal's payout (its
 * transfer reversed should the payout fail). Every ledger process runs this; each claims different rows. A call
 * that fails for a passing reason is tried again with backoff, for as long as it takes: a provider that is down
 * delays payments, it loses none. A refusal fails the transaction with the provider's reason.
 */
export function startProviderRequests(options: ProviderRequestsOptions): ProviderRequests {
  const { store, provider, outbox, logger } = options;
  const calls = options.metrics.counter(
    'ledger_provider_calls_total',
    'Calls to the payment provider, by what was asked and how it ended',
    ['call', 'outcome'],
  );
  // Both gauges are read in the same scrape: one query answers both.
  let reading: ReturnType<typeof store.providerPayments.backlog> | null = null;
  const backlog = () =>
    (reading ??= store.providerPayments.backlog().finally(() => {
      reading = null;
    }));
  options.metrics.gauge(
    'ledger_provider_requests_waiting',
    'Requests to the payment provider not yet done (created, refused or undone)',
    async () => (await backlog()).waiting,
  );
  options.metrics.gauge(
    'ledger_provider_oldest_request_seconds',
    'How long the oldest request to the payment provider not yet done has waited',
    async () => (await backlog()).oldestSeconds,
  );

  const failedFor = async (work: ProviderWork, call: string, error: unknown) => {
    if (error instanceof ProviderRefusal) {
      calls.inc({ call, outcome: 'refused' });
      logger.warn(
        { transaction_id: work.transactionId, code: error.code, reason: error.reason },
        'the payment provider refused the request; the transaction fails',
      );
      const context = { correlationId: `provider-refusal:${randomUUID()}`, logger };
      await store.inTransaction((unit) =>
        settle(unit, [refusedByProvider(work.transactionId, error.reason, context)]),
      );
      await store.providerPayments.done(work.transactionId, 'refused', error.reason);
      outbox.wake();
      return;
    }
    calls.inc({ call, outcome: 'retry' });
    const delayMs = retryDelayMs(work.attempts);
    const message = error instanceof Error ? error.message : String(error);
    logger.warn(
      { transaction_id: work.transactionId, attempts: work.attempts, retry_in_ms: delayMs, err: message },
      'a call to the payment provider failed; it will be tried again',
    );
    await store.providerPayments.retry(work.transactionId, delayMs, message);
    poller.wakeAt(Date.now() + delayMs);
  };

  /** Makes what the transaction needs at the provider: a deposit's payment, or a withdrawal's payout. */
  const make = async (
    work: ProviderWork,
  ): Promise<{ reference: string; clientSecret?: string | null; transfer?: string }> => {
    const money = { transactionId: work.transactionId, amount: work.amount, currency: work.currency };
    if (work.kind === 'payment') return provider.createPayment(money);
    if (!work.destination) throw new ProviderRefusal('No payout account is linked to be paid out to');
    return provider.createPayout({ ...money, destination: work.destination });
  };

  const create = async (work: ProviderWork) => {
    const call = work.kind === 'payment' ? 'create_payment' : 'create_payout';
    if (work.transactionStatus !== 'pending' && work.attempts === 1) {
      // It ended before anything was asked: nothing to create (nor to undo).
      await store.providerPayments.done(work.transactionId, 'skipped');
      return;
    }
    // Still pending, or ended after an earlier call whose answer was lost (a process killed while waiting for it, a
    // timeout): that call may have made it. Asked again with the same idempotency key, the provider answers with
    // what it made then (or makes it now), so it is known, and undone below when the ending asked for that.
    let created;
    try {
      created = await make(work);
    } catch (error) {
      await failedFor(work, call, error);
      return;
    }
    calls.inc({ call, outcome: 'done' });
    const { cancel } = await store.providerPayments.created(work.transactionId, created);
    logger.info(
      { transaction_id: work.transactionId, provider_reference: created.reference },
      `the payment provider created the ${work.kind}`,
    );
    if (cancel) poller.wake();
  };

  /** Undoes what was made: cancels a payment nobody paid, or reverses the transfer of a payout that failed. */
  const undo = async (work: ProviderWork) => {
    const call = work.kind === 'payment' ? 'cancel_payment' : 'reverse_transfer';
    try {
      if (work.kind === 'payment') await provider.cancelPayment(work.reference as string, work.transactionId);
      else if (work.transfer) await provider.reversePayout(work.transfer, work.transactionId);
    } catch (error) {
      if (!(error instanceof ProviderRefusal)) {
        await failedFor(work, call, error);
        return;
      }
      // Nothing left to undo that the provider knows of: done all the same, and said.
      logger.warn(
        { transaction_id: work.transactionId, reason: error.reason },
        `the provider refused to ${call}`,
      );
      calls.inc({ call, outcome: 'refused' });
      await store.providerPayments.done(work.transactionId, 'closed', error.reason);
      return;
    }
    calls.inc({ call, outcome: 'done' });
    await store.providerPayments.done(work.transactionId, 'closed');
  };

  const perform = (work: ProviderWork) => (work.state === 'requested' ? create(work) : undo(work));

  const poller = startPoller({
    intervalMs: options.intervalMs ?? 1_000,
    idleMaxMs: 5_000,
    task: async () => {
      const due = await store.providerPayments.claim(BATCH, LEASE_MS);
      await Promise.all(
        due.map((work) =>
          perform(work).catch((error: unknown) =>
            logger.error(
              { err: error, transaction_id: work.transactionId },
              'a provider request could not be recorded',
            ),
          ),
        ),
      );
      return due.length > 0;
    },
    onError: (error) => logger.warn({ err: error }, 'looking for provider requests failed'),
  });
  poller.wake();

  return { wake: () => poller.wake(), stop: () => poller.stop() };
}
