import { randomUUID } from 'node:crypto';
import { toMinorUnits, type MinorUnits } from '@payments/contracts';
import type { Logger, Metrics, OutboxRelay } from '@payments/service-kit';
import type { Page, PageRequest } from '../domain/history.js';
import type { ObjectClaim } from '../domain/provider-object.js';
import {
  decidePlatformLoss,
  lossAmountOf,
  type NewPlatformLoss,
  type PlatformLoss,
  type RemovedDeposit,
} from '../domain/platform-loss.js';
import {
  decideReversal,
  disputeHoldOf,
  isReversible,
  type Adjustment,
  type NewReversal,
} from '../domain/reversal.js';
import { completionOf, releaseOf } from '../domain/settlement.js';
import type { Account, Transaction } from '../domain/transaction.js';
import { reversedEvent } from '../events/ledger-events.js';
import type { ProviderPayments } from './provider-payments.js';
import { reversalOf, type Finish, type FlowContext, type SettlementUnit } from './settlement-requests.js';
import type { OncePerEvent } from './unit-of-work.js';

/** A refund or dispute of a deposit, as the provider reported it (PaymentAdjusted). */
export interface AdjustmentReport {
  eventId: string;
  correlationId: string;
  /** The payment the adjustment is about, and the transaction it names. */
  claim: ObjectClaim;
  adjustment: Adjustment;
}

/** Per currency, the overdrawn accounts, and how far below zero they are in all (minor units). */
export interface OverdrawnTotal {
  currency: string;
  accounts: number;
  overdrawnBy: MinorUnits;
}

/** Per currency: how many losses were booked, what the provider took back and what fee revenue gave back. */
export interface LossTotal {
  currency: string;
  count: number;
  amount: MinorUnits;
  fee: MinorUnits;
}

/** What reversals cost: the accounts they took below zero, and the platform's losses on removed users' deposits. */
export interface OverdrawnReport {
  /** A page of the accounts reversals took below zero, furthest below first. */
  accounts: Page<Account>;
  /** Per currency, what live users owe back. */
  overdrawn: OverdrawnTotal[];
  /** Per currency, what the platform lost for good. */
  lossTotals: LossTotal[];
  /** The latest losses, newest first (LOSSES_SHOWN of them). */
  losses: PlatformLoss[];
}

/**
 * Money the provider takes back from a completed deposit (refunds, disputes: ADRs 0051, 0084), booked as reversals
 * linked to it; for a deposit whose user was removed, as the platform's loss (ADR 0093).
 */
export interface Reversals {
  /**
   * Books a refund or dispute of the deposit the report's payment counts for (provider-payments.ts), once per
   * event. Refused with AdjustmentTooEarlyError while the deposit has not settled yet, to be tried again.
   */
  adjust(report: AdjustmentReport, log: Logger): Promise<void>;
  overdrawn(page: PageRequest): Promise<OverdrawnReport>;
}

/** What booking reversals does in one database transaction, besides ending transactions. */
export interface ReversalUnit extends SettlementUnit {
  /** Reads a user account and locks its balances until commit (as a settlement would). */
  lockAccount(accountId: string): Promise<Account | null>;
  /** Moves `amount` from available to held; false when the account has not that much available. */
  holdFunds(accountId: string, amount: MinorUnits): Promise<boolean>;
  /**
   * A deposit removed with its user, with its reversals and the losses booked on it, locked until commit so that
   * two refunds or disputes of it take turns; null when no deposit with this id was removed.
   */
  lockRemovedDeposit(depositId: string): Promise<RemovedDeposit | null>;
  /**
   * Books a removed user's deposit taken back by the provider against the platform loss account (lossOf in
   * domain/settlement.ts); null, booking nothing, when a loss with its key was booked for the deposit already.
   */
  bookPlatformLoss(loss: NewPlatformLoss): Promise<PlatformLoss | null>;
  /** Remembers the provider's refunded total for a deposit, unless a higher one is remembered already. */
  reportRefundedTotal(depositId: string, refundedTotal: MinorUnits, reference: string): Promise<void>;
  /** The highest refunded total the provider reported for a deposit, with that report's reference. */
  reportedRefundOf(depositId: string): Promise<{ refundedTotal: MinorUnits; reference: string } | null>;
}

export interface ReversalStore extends OncePerEvent<ReversalUnit> {
  /** User accounts a reversal took below zero (the provider took back money the user had spent). */
  listOverdrawnAccounts(page: PageRequest): Promise<Page<Account>>;
  countOverdrawnAccounts(): Promise<number>;
  overdrawnTotals(): Promise<OverdrawnTotal[]>;
  /** Refunds and lost disputes of removed users' deposits booked against the platform loss accounts, newest first. */
  listPlatformLosses(limit: number): Promise<PlatformLoss[]>;
  platformLossTotals(): Promise<LossTotal[]>;
  countPlatformLosses(): Promise<number>;
}

/** The platform losses listed with the overdrawn accounts, newest first (`lossTotals` counts every one). */
const LOSSES_SHOWN = 100;

export function createReversals({
  store,
  providerPayments,
  outbox,
  metrics,
}: {
  store: ReversalStore;
  providerPayments: Pick<ProviderPayments, 'transactionFor'>;
  outbox: Pick<OutboxRelay, 'wake'>;
  metrics: Metrics;
}): Reversals {
  metrics.gauge(
    'ledger_accounts_overdrawn_by_reversal',
    'User accounts a refund or lost dispute took below zero (listed at GET /admin/overdrawn-accounts)',
    () => store.countOverdrawnAccounts(),
  );
  metrics.gauge(
    'ledger_platform_losses',
    "Refunds and lost disputes of removed users' deposits booked against the platform loss accounts " +
      '(listed at GET /admin/overdrawn-accounts)',
    () => store.countPlatformLosses(),
  );

  return {
    // Refunds and disputes are rare: each in a database transaction of its own, under the deposit's row lock.
    async adjust({ eventId, correlationId, claim, adjustment }, log) {
      const taken =
        adjustment.kind === 'dispute_won' || adjustment.kind === 'refund_failed' ? 0n : adjustment.amount;
      const money = { currency: adjustment.currency, amount: taken, adjustment: true };
      const transactionId = await providerPayments.transactionFor({ eventId, claim, money }, log);
      if (!transactionId) return;
      await store.processEventsOnce([eventId], async (unit) => {
        await adjustDeposit(unit, transactionId, adjustment, { correlationId, logger: log });
      });
      outbox.wake();
    },

    async overdrawn(page) {
      const [accounts, overdrawn, lossTotals, losses] = await Promise.all([
        store.listOverdrawnAccounts(page),
        store.overdrawnTotals(),
        store.platformLossTotals(),
        store.listPlatformLosses(LOSSES_SHOWN),
      ]);
      return { accounts, overdrawn, lossTotals, losses };
    },
  };
}

/** Thrown for an adjustment that came before its deposit settled: the broker redelivers it later. */
export class AdjustmentTooEarlyError extends Error {
  override name = 'AdjustmentTooEarlyError';
}

/** Completes a reversal (booked, announced) or cancels it (a dispute won: only its hold comes back). */
function endReversal(reversal: Transaction, status: 'completed' | 'canceled', context: FlowContext): Finish {
  if (status === 'canceled') {
    return {
      transaction: reversal,
      status,
      settlement: releaseOf(reversal),
      reason: 'The dispute was won; nothing was reversed',
    };
  }
  return {
    transaction: reversal,
    status,
    settlement: completionOf(reversal),
    announce: (finished) => [reversedEvent(finished, context.correlationId)],
  };
}

/**
 * A provider's refund or dispute of a deposit (see decideReversal), in one database transaction: the deposit
 * locked first, then its reversals, then the account. Resolves with the reversal it created or ended, if any. For
 * a deposit whose user was removed, the platform loses what is taken back (takeBackRemovedDeposit).
 *
 * A refund's total is remembered for the deposit: an open dispute may leave it no room now (the two never reverse
 * more than the deposit together), and when that dispute is won, the remembered refund is booked in the same
 * database transaction. Otherwise the refund would be lost for good, and the user would keep money the provider
 * gave back to the payer.
 */
export async function adjustDeposit(
  unit: ReversalUnit,
  depositId: string,
  adjustment: Adjustment,
  context: FlowContext,
): Promise<Transaction | null> {
  const original = (await unit.lockTransactions([depositId])).get(depositId) ?? null;
  if (!original) {
    await takeBackRemovedDeposit(unit, depositId, adjustment, context);
    return null;
  }
  const reversals = await unit.lockReversalsOf(original.id);
  const decision = decideReversal(original, reversals, adjustment);
  const about = { transaction_id: depositId, adjustment: adjustment.kind, reference: adjustment.reference };
  if (decision.action === 'retry')
    throw new AdjustmentTooEarlyError(`deposit ${depositId}: ${decision.reason}`);
  if (
    adjustment.kind === 'refund' &&
    adjustment.amount > 0n &&
    isReversible(original, reversals, adjustment)
  ) {
    await unit.reportRefundedTotal(original.id, adjustment.amount, adjustment.reference);
  }
  if (decision.action === 'ignore') {
    context.logger.info({ ...about, reason: decision.reason }, 'provider adjustment changes nothing');
    return null;
  }
  const deposit = original;
  if (decision.action === 'fail') {
    const [ended] = await unit.finishTransactions([
      {
        transaction: decision.reversal,
        status: 'failed',
        settlement: releaseOf(decision.reversal),
        reason: decision.reason,
      },
    ]);
    context.logger.warn({ ...about, reason: decision.reason }, 'a refund failed at the provider: released');
    return ended ?? null;
  }
  if (decision.action === 'finish') {
    const [ended] = await unit.finishTransactions([endReversal(decision.reversal, decision.status, context)]);
    if (ended?.status === 'canceled') await bookReportedRefund(unit, deposit, context);
    return ended ?? null;
  }
  return bookReversal(unit, deposit, decision.reversal, adjustment.reference, context);
}

/**
 * A refund or dispute of a deposit the ledger no longer holds. Its user was removed (with a zero balance: the money
 * had left), so what the provider takes back is the platform's loss, booked against the platform loss account once
 * per refunded total or lost dispute, under a lock on the removed deposit (decidePlatformLoss). For no deposit at
 * all, nothing is booked.
 */
async function takeBackRemovedDeposit(
  unit: ReversalUnit,
  depositId: string,
  adjustment: Adjustment,
  context: FlowContext,
): Promise<void> {
  const about = { transaction_id: depositId, adjustment: adjustment.kind, reference: adjustment.reference };
  const removed = await unit.lockRemovedDeposit(depositId);
  if (!removed) {
    context.logger.warn({ ...about, reason: 'no such transaction' }, 'provider adjustment changes nothing');
    return;
  }
  const decision = decidePlatformLoss(removed, adjustment);
  if (decision.action === 'ignore') {
    context.logger.info(
      { ...about, reason: decision.reason },
      "provider adjustment of a removed user's deposit books nothing",
    );
    return;
  }
  const booked = await unit.bookPlatformLoss({
    id: randomUUID(),
    depositId,
    ...decision.loss,
    currency: removed.deposit.currency,
    reference: adjustment.reference,
    correlationId: context.correlationId,
  });
  if (!booked) return;
  context.logger.warn(
    {
      ...about,
      platform_loss_id: booked.id,
      amount: booked.amount.toString(),
      loss: lossAmountOf(booked).toString(),
      currency: booked.currency,
    },
    "the provider took back money of a removed user's deposit: booked as a platform loss",
  );
}

/** Books what the deposit's remembered refund adds now that a dispute no longer stands in its way, if anything. */
async function bookReportedRefund(unit: ReversalUnit, deposit: Transaction, context: FlowContext) {
  const reported = await unit.reportedRefundOf(deposit.id);
  if (!reported) return;
  const refund: Adjustment = {
    kind: 'refund',
    amount: reported.refundedTotal,
    currency: deposit.currency,
    reference: reported.reference,
  };
  const decision = decideReversal(deposit, await unit.lockReversalsOf(deposit.id), refund);
  if (decision.action !== 'create') return;
  context.logger.info(
    { transaction_id: deposit.id, reference: reported.reference },
    'a dispute was won: the refund it held back is booked',
  );
  await bookReversal(unit, deposit, decision.reversal, reported.reference, context);
}

/** Creates a reversal of the deposit: an open dispute holds what it can, anything else is booked at once. */
async function bookReversal(
  unit: ReversalUnit,
  deposit: Transaction,
  reversal: NewReversal,
  reference: string,
  context: FlowContext,
): Promise<Transaction | null> {
  const about = { transaction_id: deposit.id, reversal: reversal.reason, reference };
  const account = await unit.lockAccount(deposit.accountId);
  if (!account || deposit.userId === null) {
    context.logger.error(
      about,
      'a provider reversed a deposit whose account no longer exists; left for an operator',
    );
    return null;
  }
  const held =
    reversal.status === 'pending'
      ? disputeHoldOf(reversal.amount - reversal.fee, account.availableBalance)
      : toMinorUnits(0n);
  const created = await unit.insertTransaction(
    reversalOf(deposit, deposit.userId, {
      amount: reversal.amount,
      fee: reversal.fee,
      paymentId: reference,
      reversalReason: reversal.reason,
      reversalKey: reversal.key,
      heldAmount: held,
    }),
  );
  if (held > 0n && !(await unit.holdFunds(account.id, held))) {
    throw new Error(`account ${account.id} lost its available balance under its lock`);
  }
  if (reversal.status === 'pending') {
    context.logger.info({ ...about, held: held.toString() }, 'a dispute opened: its amount is held');
    return created;
  }
  const [ended] = await unit.finishTransactions([endReversal(created, reversal.status, context)]);
  return ended ?? null;
}
