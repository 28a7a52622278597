import { randomUUID } from 'node:crypto';
import type { MinorUnits } from '@payments/contracts';
import {
  contextFromCarrier,
  inSpan,
  SpanKind,
  startPoller,
  type Logger,
  type Metrics,
  type OutboxRelay,
  type TraceCarrier,
} from '@payments/service-kit';
import type { Mismatch } from '../domain/reconciliation.js';
import type { TransactionStatus } from '../domain/transaction.js';
import { ProviderRefusal, type PaymentProvider } from '../provider/payment-provider.js';
import { refusedByProvider, settle, type SettlementUnit } from './settlement-requests.js';
import type { UnitOfWork } from './unit-of-work.js';

/** What the ledger asked the provider for one transaction, and where that stands. */
export interface ProviderPayment {
  transactionId: string;
  kind: 'payment' | 'payout';
  provider: string;
  /** expired: its idempotency keys outlived the provider's memory of them; made no more (an operator's case). */
  state: 'requested' | 'created' | 'refused' | 'skipped' | 'closed' | 'expired';
  reference: string | null;
  clientSecret: string | null;
  /** Payments: the method the payer named with the deposit, confirmed as the payment is made; null: none. */
  paymentMethod: string | null;
  /** Payouts: the connected account paid out to, and the transfer that funded it. */
  destination: string | null;
  transfer: string | null;
  /** The transaction ended otherwise than paid: its payment is canceled, or its payout's transfer reversed. */
  cancelRequested: boolean;
  /** Claims so far; each claim counts one, so it is also the claim's fencing token. */
  attempts: number;
  lastError: string | null;
  /** The trace it was recorded in (the deposit's or withdrawal's): asked of the provider in it. */
  traceContext?: TraceCarrier | null;
}

/** One claim on a request: only its holder, with the request's attempts as they were claimed, may record. */
export type ProviderClaim = Pick<ProviderPayment, 'transactionId' | 'attempts' | 'state'>;

/** Work claimed for a while (the lease): the request and the transaction as it stood when claimed. */
export interface ProviderWork extends ProviderPayment {
  transactionStatus: TransactionStatus;
  amount: MinorUnits;
  currency: string;
  /**
   * How long ago this phase's idempotency keys were first used: the creation's since it was first claimed, an
   * undo's (cancellation, reversal) since the undo was.
   */
  keysAgeMs: number;
}

/** What is asked of the provider, from consuming a transaction's request until it is done (provider_payments). */
export interface ProviderRequestStore extends UnitOfWork<SettlementUnit> {
  /**
   * Records that a pending transaction is to be asked of the provider; false when it was already, or is not pending.
   * A payout goes to the connected account its user linked, as it is when recorded (null: none, refused later).
   */
  record(request: {
    transactionId: string;
    kind: ProviderPayment['kind'];
    provider: string;
    paymentMethod?: string | null;
  }): Promise<boolean>;
  /** Claims up to `limit` due requests, each for `leaseMs`; concurrent claimants skip each other's rows. */
  claim(limit: number, leaseMs: number): Promise<ProviderWork[]>;
  /** Extends a claim's lease; false once it was lost (claimed again, or ended). */
  renew(claim: ProviderClaim, leaseMs: number): Promise<boolean>;
  /** What a claim's holder found out; recorded only while the claim still holds. */
  created(
    claim: ProviderClaim,
    created: { reference: string; clientSecret?: string | null; transfer?: string },
  ): Promise<{ recorded: boolean; cancel: boolean }>;
  done(
    claim: ProviderClaim,
    state: 'refused' | 'skipped' | 'closed' | 'expired',
    error?: string | null,
  ): Promise<boolean>;
  retry(claim: ProviderClaim, delayMs: number, error: string): Promise<void>;
  /** Requests still waiting for the provider, and the age of the oldest in seconds. */
  backlog(): Promise<{ waiting: number; oldestSeconds: number }>;
  /** Opens reconciliation cases (a request whose keys expired); answers how many are new. */
  recordMismatches(mismatches: Mismatch[]): Promise<number>;
}

export interface ProviderRequestsOptions {
  store: ProviderRequestStore;
  provider: PaymentProvider;
  outbox: Pick<OutboxRelay, 'wake'>;
  logger: Logger;
  metrics: Metrics;
  /** How often due work is looked for while there is none; recorded work wakes it at once. */
  intervalMs?: number;
  /** How long a claim holds unless renewed (LEASE_MS; tests: far shorter). */
  leaseMs?: number;
}

export interface ProviderRequests {
  /** Records that a consumed request's transaction is to be asked of the provider, once, and looks for it now. */
  record(transactionId: string, kind: ProviderPayment['kind'], paymentMethod?: string | null): Promise<void>;
  stop(): Promise<void>;
}

/** Requests claimed per pass; each pass makes their calls concurrently. */
const BATCH = 50;
/**
 * How long a claimed request is left to its claimant unless renewed before another process may take it, and so
 * how long a call cut short by a crash waits to be made again. Its claimant renews it every third of that while its
 * calls are under way (a payout's two to four calls, each up to about 35 s with the library's retries), and stops
 * before its next call, recording nothing, once it lost it.
 */
const LEASE_MS = 45_000;
/**
 * How long before the provider forgets a key a request stops being made with it: far more than a lease, a whole
 * sequence of calls with their retries, and any difference between the provider's clock and the database's.
 */
const KEY_LIFETIME_MARGIN_MS = 60 * 60 * 1000;
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

/** The claim on a request was lost to another process (its lease ran out): it makes the calls now. */
class ClaimLost extends Error {
  override name = 'ClaimLost';
}

/**
 * Asks the payment provider for what consumed requests need (recorded in provider_payments, after the commit that
 * accepted each transaction): a deposit's payment (canceled once the deposit expired), a withdrawal's payout (its
 * transfer reversed should the payout fail). Every ledger process runs this; each claims different rows, and one
 * process at a time makes a request's calls. A call that fails for a passing reason is tried again with backoff
 * while the provider remembers its idempotency keys: a provider that is down delays payments, it loses none, and
 * one down for longer than that leaves the request to an operator (a `request_expired` case), as it stands. A
 * refusal fails the transaction with the provider's reason.
 */
export function startProviderRequests(options: ProviderRequestsOptions): ProviderRequests {
  const { store, provider, outbox, logger } = options;
  const leaseMs = options.leaseMs ?? LEASE_MS;
  const keysUsableForMs = provider.idempotencyKeyLifetimeMs - KEY_LIFETIME_MARGIN_MS;
  const calls = options.metrics.counter(
    'ledger_provider_calls_total',
    'Calls to the payment provider, by what was asked and how it ended',
    ['call', 'outcome'],
  );
  // Both gauges are read in the same scrape: one query answers both.
  let reading: ReturnType<typeof store.backlog> | null = null;
  const backlog = () =>
    (reading ??= store.backlog().finally(() => {
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

  const claimLost = (work: ProviderClaim) =>
    new ClaimLost(`another process holds the provider request of ${work.transactionId}`);

  /**
   * Keeps `work`'s claim while `calls` run: renewed every third of the lease, and checked before each call but the
   * first (`betweenCalls` throws ClaimLost once it was lost, or the error that kept it from being checked).
   * Renewal has ended when this settles.
   */
  const holdingClaim = async <T>(
    work: ProviderClaim,
    calls: (betweenCalls: () => Promise<void>) => Promise<T>,
  ): Promise<T> => {
    let lost = false;
    let renewal = Promise.resolve();
    const renew = () => {
      const renewed = renewal.then(async () => {
        if (!lost && !(await store.renew(work, leaseMs))) lost = true;
      });
      renewal = renewed.catch(() => undefined);
      return renewed;
    };
    const heartbeat = setInterval(() => {
      renew().catch((error: unknown) =>
        logger.warn(
          { err: error, transaction_id: work.transactionId },
          'a provider request could not be renewed',
        ),
      );
    }, leaseMs / 3);
    try {
      return await calls(async () => {
        await renew();
        if (lost) throw claimLost(work);
      });
    } finally {
      clearInterval(heartbeat);
      await renewal;
    }
  };

  const failedFor = async (work: ProviderWork, call: string, error: unknown) => {
    if (error instanceof ClaimLost) {
      calls.inc({ call, outcome: 'claim_lost' });
      logger.warn(
        { transaction_id: work.transactionId, attempts: work.attempts },
        'another process took over a provider request while its calls were under way; this one stops',
      );
      return;
    }
    if (error instanceof ProviderRefusal) {
      if (!(await store.renew(work, leaseMs))) return failedFor(work, call, claimLost(work));
      calls.inc({ call, outcome: 'refused' });
      logger.warn(
        { transaction_id: work.transactionId, code: error.code, reason: error.reason },
        'the payment provider refused the request; the transaction fails',
      );
      const context = { correlationId: `provider-refusal:${randomUUID()}`, logger };
      await store.inTransaction((unit) =>
        settle(unit, [refusedByProvider(work.transactionId, error.reason, context)]),
      );
      await store.done(work, 'refused', error.reason);
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
    await store.retry(work, delayMs, message);
    poller.wakeAt(Date.now() + delayMs);
  };

  /** Makes what the transaction needs at the provider: a deposit's payment, or a withdrawal's payout. */
  const make = async (
    work: ProviderWork,
    betweenCalls: () => Promise<void>,
  ): Promise<{ reference: string; clientSecret?: string | null; transfer?: string; declined?: string }> => {
    const money = { transactionId: work.transactionId, amount: work.amount, currency: work.currency };
    if (work.kind === 'payment')
      return provider.createPayment(
        work.paymentMethod ? { ...money, paymentMethod: work.paymentMethod } : money,
      );
    if (!work.destination) throw new ProviderRefusal('No payout account is linked to be paid out to');
    return provider.createPayout({ ...money, destination: work.destination }, { betweenCalls });
  };

  /**
   * Leaves a request whose keys the provider may have forgotten to an operator: made again, it could be made twice
   * (a second payment, a second transfer). Its transaction stays as it is, a withdrawal with its hold.
   */
  const expire = async (work: ProviderWork, call: string) => {
    // The case is about what the provider made, if that is known (a payout's transfer), else about the transaction.
    const reference = (work.kind === 'payout' ? work.transfer : null) ?? work.reference ?? work.transactionId;
    await store.recordMismatches([
      {
        kind: 'request_expired',
        reference,
        transactionId: work.transactionId,
        currency: work.currency,
        providerAmount: 0n,
        ledgerAmount: work.amount,
      },
    ]);
    if (!(await store.done(work, 'expired', work.lastError))) return;
    calls.inc({ call, outcome: 'expired' });
    logger.error(
      {
        transaction_id: work.transactionId,
        provider_reference: reference,
        keys_age_hours: Math.floor(work.keysAgeMs / 3_600_000),
        last_error: work.lastError,
      },
      `the provider request (${call}) outlived the provider's idempotency keys and is made no more: its ` +
        'transaction is left as it stands, for an operator to decide on its request_expired reconciliation case',
    );
  };

  const create = async (work: ProviderWork) => {
    const call = work.kind === 'payment' ? 'create_payment' : 'create_payout';
    if (work.transactionStatus !== 'pending' && work.attempts === 1) {
      // It ended before anything was asked: nothing to create (nor to undo).
      await store.done(work, 'skipped');
      return;
    }
    if (work.keysAgeMs >= keysUsableForMs) {
      await expire(work, call);
      return;
    }
    // Still pending, or ended after an earlier call whose answer was lost (a process killed while waiting for it, a
    // timeout): that call may have made it. Asked again with the same idempotency key, the provider answers with
    // what it made then (or makes it now), so it is known, and undone below when the ending asked for that.
    let created;
    try {
      created = await inSpan(
        `provider ${call}`,
        { kind: SpanKind.CLIENT, parent: contextFromCarrier(work.traceContext) },
        () => holdingClaim(work, (betweenCalls) => make(work, betweenCalls)),
      );
    } catch (error) {
      await failedFor(work, call, error);
      return;
    }
    const { recorded, cancel } = await store.created(work, created);
    if (!recorded) {
      await failedFor(work, call, claimLost(work));
      return;
    }
    calls.inc({ call, outcome: created.declined === undefined ? 'done' : 'declined' });
    if (created.declined !== undefined) {
      // Not a refusal: the payment is there for another method, and the provider's event records the reason.
      logger.info(
        {
          transaction_id: work.transactionId,
          provider_reference: created.reference,
          reason: created.declined,
        },
        'the payment provider created the payment and declined the payment method it was confirmed with',
      );
    } else {
      logger.info(
        { transaction_id: work.transactionId, provider_reference: created.reference },
        `the payment provider created the ${work.kind}`,
      );
    }
    if (cancel) poller.wake();
  };

  /** Undoes what was made: cancels a payment nobody paid, or reverses the transfer of a payout that failed. */
  const undo = async (work: ProviderWork) => {
    const call = work.kind === 'payment' ? 'cancel_payment' : 'reverse_transfer';
    if (work.keysAgeMs >= keysUsableForMs) {
      await expire(work, call);
      return;
    }
    try {
      await holdingClaim(work, async () => {
        if (work.kind === 'payment')
          await provider.cancelPayment(work.reference as string, work.transactionId);
        else if (work.transfer) await provider.reversePayout(work.transfer, work.transactionId);
      });
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
      await store.done(work, 'closed', error.reason);
      return;
    }
    calls.inc({ call, outcome: 'done' });
    await store.done(work, 'closed');
  };

  const perform = (work: ProviderWork) => (work.state === 'requested' ? create(work) : undo(work));

  const poller = startPoller({
    intervalMs: options.intervalMs ?? 1_000,
    idleMaxMs: 5_000,
    task: async () => {
      const due = await store.claim(BATCH, leaseMs);
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

  return {
    async record(transactionId, kind, paymentMethod = null) {
      // Recording twice records once.
      if (await store.record({ transactionId, kind, provider: provider.name, paymentMethod })) poller.wake();
    },
    stop: () => poller.stop(),
  };
}
