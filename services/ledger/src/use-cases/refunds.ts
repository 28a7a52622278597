import { randomUUID } from 'node:crypto';
import { formatMinor, toMinorUnits, type MinorUnits, type RefundReason } from '@payments/contracts';
import { startPoller, type Logger, type OutboxRelay } from '@payments/service-kit';
import { requestFingerprint } from '../domain/idempotency.js';
import { readAmount } from '../domain/money.js';
import {
  disputeHoldOf,
  feeShareOf,
  isReversible,
  takenBack,
  refundRequestKey,
  type Adjustment,
} from '../domain/reversal.js';
import type { Transaction } from '../domain/transaction.js';
import type { Viewer } from '../domain/viewer.js';
import { ProviderRefusal, type PaymentProvider } from '../provider/payment-provider.js';
import type { NewAdminAction } from './admin-actions.js';
import { currencyUnitOf, type CurrencyDirectory } from './currencies.js';
import { refusalsOf } from './errors.js';
import { adjustDeposit, type ReversalUnit } from './reversals.js';
import { reversalOf } from './settlement-requests.js';
import type { UnitOfWork } from './unit-of-work.js';

export type RefundError =
  'RESOURCE_NOT_FOUND' | 'INVALID_AMOUNT' | 'INSUFFICIENT_FUNDS' | 'BUSINESS_RULE_VIOLATION' | 'CONFLICT';

/** POST /transaction/{id}/refund, by the deposit's owner or an admin. */
export interface RefundRequest {
  depositId: string;
  viewer: Viewer;
  /** As the client gave it (domain/money.ts reads it); undefined: all that is left. */
  amount: unknown;
  reason: RefundReason | null;
  idempotencyKey: string | null;
  /** The request's body as sent: a replay under the same idempotency key must send the same one. */
  body: unknown;
  correlationId: string;
  log: Logger;
}

/** What the provider is asked for one refund (refund_requests). */
export interface RefundAsk {
  refundId: string;
  depositId: string;
  /** The provider's payment refunded (Stripe: `pi_…`). */
  payment: string;
  amount: MinorUnits;
  currency: string;
  reason: RefundReason | null;
}

export interface RefundUnit extends ReversalUnit {
  /**
   * Claims an idempotency key for a refund (idempotency_keys, shared with the money requests); the earlier claim
   * when the key was used already, and then nothing is claimed.
   */
  claimKey(claim: {
    userId: string;
    key: string;
    fingerprint: string;
    transactionId: string;
  }): Promise<{ fingerprint: string; transactionId: string } | null>;
  /** The provider's payment a deposit was paid with (Stripe: `pi_…`); null when none was made. */
  providerPaymentOf(depositId: string): Promise<string | null>;
  insertRefundRequest(request: RefundAsk & { requestedBy: string }): Promise<void>;
  recordAdminAction(action: NewAdminAction): Promise<void>;
}

export interface RefundStore extends UnitOfWork<RefundUnit> {
  findKey(userId: string, key: string): Promise<{ fingerprint: string; transactionId: string } | null>;
  findTransaction(transactionId: string): Promise<Transaction | null>;
  /** The provider answered: its refund is recorded. */
  answered(refundId: string, providerRefund: string): Promise<void>;
  /** The provider could not be asked (passing): counted, to be asked again. */
  attemptFailed(refundId: string, error: string): Promise<void>;
  /** Pending refunds the provider has not answered, asked at least `olderThanMs` ago and no longer than `withinMs`. */
  unanswered(olderThanMs: number, withinMs: number, limit: number): Promise<RefundAsk[]>;
}

export interface Refunds {
  request(request: RefundRequest): Promise<{ transaction: Transaction; replayed: boolean }>;
  stop(): Promise<void>;
}

const refuse = refusalsOf<RefundError>();
const notFound = () => refuse('RESOURCE_NOT_FOUND', 'Transaction not found');

/** How long after its request a refund the provider did not answer is asked again, and how many at once. */
const RETRY_AFTER_MS = 10_000;
const RETRY_BATCH = 20;

/**
 * Refunds asked for through the API (ADR 0119). A refund is a reversal of its deposit, created pending with its net
 * amount held, under the deposit's row lock (so concurrent refunds never exceed what the deposit credited), then
 * asked of the provider with the reversal's id as its idempotency key. It is booked, or failed with its hold
 * released, through the reversal path (adjustDeposit) when the provider's answer or its event says so: whichever
 * comes first ends it, the other finds it ended.
 */
export function createRefunds({
  store,
  provider,
  currencies,
  maxAmount,
  outbox,
  logger,
  retryIntervalMs = 5_000,
}: {
  store: RefundStore;
  provider: PaymentProvider | null;
  currencies: CurrencyDirectory;
  maxAmount: number;
  outbox: Pick<OutboxRelay, 'wake'>;
  logger: Logger;
  retryIntervalMs?: number;
}): Refunds {
  /** The provider's word on a refund, through the reversal path: booked, failed, or (pending) nothing yet. */
  const settle = async (ask: RefundAsk, adjustment: Adjustment, correlationId: string, log: Logger) => {
    await store.inTransaction((unit) =>
      adjustDeposit(unit, ask.depositId, adjustment, { correlationId, logger: log }),
    );
    outbox.wake();
  };

  const askProvider = async (ask: RefundAsk, correlationId: string, log: Logger) => {
    if (!provider) return;
    const about = { transaction_id: ask.depositId, refund_id: ask.refundId };
    const adjustment = (kind: Adjustment['kind'], reference: string, failureReason?: string): Adjustment => ({
      kind,
      amount: ask.amount,
      currency: ask.currency,
      reference,
      refundId: ask.refundId,
      ...(failureReason && { failureReason }),
    });
    let created;
    try {
      created = await provider.createRefund({
        refundId: ask.refundId,
        transactionId: ask.depositId,
        payment: ask.payment,
        amount: ask.amount,
        currency: ask.currency,
        reason: ask.reason,
      });
    } catch (error) {
      if (error instanceof ProviderRefusal) {
        log.warn({ ...about, reason: error.reason }, 'the provider refused a refund');
        await settle(ask, adjustment('refund_failed', ask.payment, error.reason), correlationId, log);
        return;
      }
      const message = error instanceof Error ? error.message : String(error);
      log.warn({ ...about, err: error }, 'the provider could not be asked for a refund; asked again later');
      await store.attemptFailed(ask.refundId, message);
      return;
    }
    await store.answered(ask.refundId, created.reference);
    if (created.status === 'succeeded') {
      await settle(ask, adjustment('refund_succeeded', created.reference), correlationId, log);
    } else if (created.status === 'failed' || created.status === 'canceled') {
      const reason = created.failureReason
        ? `the provider could not refund (${created.failureReason})`
        : 'the provider could not refund';
      await settle(ask, adjustment('refund_failed', created.reference, reason), correlationId, log);
    }
  };

  // Refunds whose provider call was lost (a timeout, a restart) are asked again under the same key: the provider
  // makes each once. Past its memory of the key (Stripe: 24 hours) nothing is asked again.
  const retries =
    provider &&
    startPoller({
      intervalMs: retryIntervalMs,
      idleMaxMs: retryIntervalMs * 4,
      task: async () => {
        const due = await store.unanswered(
          RETRY_AFTER_MS,
          provider.idempotencyKeyLifetimeMs - 3_600_000,
          RETRY_BATCH,
        );
        for (const ask of due) await askProvider(ask, randomUUID(), logger);
        return due.length > 0;
      },
      onError: (error) => logger.error({ err: error }, 'refunds could not be asked again'),
    });

  const replay = async (
    earlier: { fingerprint: string; transactionId: string },
    fingerprint: string,
  ): Promise<{ transaction: Transaction; replayed: boolean }> => {
    if (earlier.fingerprint !== fingerprint) {
      throw refuse('CONFLICT', 'This Idempotency-Key was already used for a different request');
    }
    const transaction = await store.findTransaction(earlier.transactionId);
    if (!transaction) throw notFound();
    return { transaction, replayed: true };
  };

  return {
    async request({ depositId, viewer, amount, reason, idempotencyKey, body, correlationId, log }) {
      const fingerprint = requestFingerprint('refund', depositId, body ?? {});
      if (idempotencyKey !== null) {
        const earlier = await store.findKey(viewer.userId, idempotencyKey);
        if (earlier) return replay(earlier, fingerprint);
      }
      const isAdmin = viewer.role === 'admin';
      // Read first for its currency (which never changes): the amount is read before any lock is taken.
      const seen = await store.findTransaction(depositId);
      if (!seen || (!isAdmin && seen.userId !== viewer.userId)) throw notFound();
      const unit = await currencyUnitOf(currencies, seen.currency);
      const requested = amount === undefined ? null : readAmount(amount, unit, maxAmount);
      if (!provider) {
        throw refuse('BUSINESS_RULE_VIOLATION', 'No payment provider is configured to refund through');
      }
      const refundId = randomUUID();

      const outcome = await store.inTransaction(async (work) => {
        const deposit = (await work.lockTransactions([depositId])).get(depositId);
        if (!deposit || deposit.userId === null || (!isAdmin && deposit.userId !== viewer.userId))
          throw notFound();
        if (deposit.type !== 'deposit' || deposit.status !== 'completed') {
          throw refuse(
            'BUSINESS_RULE_VIOLATION',
            deposit.type === 'deposit'
              ? `Only a completed deposit can be refunded; this one is ${deposit.status}`
              : `Only a deposit can be refunded; this is a ${deposit.type}`,
          );
        }
        const payment = await work.providerPaymentOf(deposit.id);
        if (!payment) {
          throw refuse('BUSINESS_RULE_VIOLATION', 'The deposit was not paid through the payment provider');
        }
        if (idempotencyKey !== null) {
          const claimed = await work.claimKey({
            userId: viewer.userId,
            key: idempotencyKey,
            fingerprint,
            transactionId: refundId,
          });
          if (claimed) return { kind: 'replay' as const, claimed };
        }
        const reversals = await work.lockReversalsOf(deposit.id);
        if (!isReversible(deposit, reversals, { currency: deposit.currency })) {
          throw refuse('BUSINESS_RULE_VIOLATION', 'The deposit cannot be refunded');
        }
        // What is left: what the deposit credited, less the refunds (booked or pending) and disputes against it.
        const taken = takenBack(reversals);
        const left = deposit.amount - taken;
        const exponent = unit.exponent;
        if (left <= 0n) throw refuse('BUSINESS_RULE_VIOLATION', 'The deposit is already refunded in full');
        const refunding = toMinorUnits(requested ?? left);
        if (refunding > left) {
          throw refuse(
            'BUSINESS_RULE_VIOLATION',
            `At most ${formatMinor(left, exponent)} ${deposit.currency} of the deposit is left to refund`,
            [{ field: 'amount', message: `must be at most ${formatMinor(left, exponent)}` }],
          );
        }
        const fee = feeShareOf(deposit, taken, refunding);
        const net = refunding - fee;
        const account = await work.lockAccount(deposit.accountId);
        if (!account) throw refuse('BUSINESS_RULE_VIOLATION', 'The deposit’s account no longer exists');
        // The owner refunds from what they have; an admin's refund holds what there is, and takes the rest when
        // booked (as a lost dispute does: the account may go below zero, listed at /admin/overdrawn-accounts).
        const held = isAdmin ? disputeHoldOf(net, account.availableBalance) : toMinorUnits(net);
        if (held > 0n && !(await work.holdFunds(account.id, held))) {
          throw refuse(
            'INSUFFICIENT_FUNDS',
            `The available balance does not cover the refund's ${formatMinor(net, exponent)} ${deposit.currency}`,
          );
        }
        const created = await work.insertTransaction({
          ...reversalOf(deposit, deposit.userId, {
            amount: refunding,
            fee,
            paymentId: null,
            reversalReason: 'refund',
            reversalKey: refundRequestKey(refundId),
            heldAmount: held,
          }),
          id: refundId,
        });
        const ask: RefundAsk = {
          refundId,
          depositId: deposit.id,
          payment,
          amount: refunding,
          currency: deposit.currency,
          reason,
        };
        await work.insertRefundRequest({ ...ask, requestedBy: viewer.userId });
        if (isAdmin) {
          await work.recordAdminAction({
            actor: viewer.userId,
            action: 'transaction.refund',
            subject: `transaction:${deposit.id}`,
            owner: deposit.userId,
            reason,
            detail: {
              refund_id: refundId,
              amount: formatMinor(refunding, exponent),
              currency: deposit.currency,
            },
          });
        }
        return { kind: 'created' as const, created, ask };
      });

      if (outcome.kind === 'replay') return replay(outcome.claimed, fingerprint);
      log.info(
        { transaction_id: depositId, refund_id: refundId, amount: outcome.ask.amount.toString() },
        'a refund was asked for: its amount is held',
      );
      await askProvider(outcome.ask, correlationId, log);
      const transaction = (await store.findTransaction(refundId)) ?? outcome.created;
      return { transaction, replayed: false };
    },

    stop: async () => retries?.stop(),
  };
}
