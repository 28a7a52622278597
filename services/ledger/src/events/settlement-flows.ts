import { randomUUID } from 'node:crypto';
import { toMinorUnits } from '@payments/contracts';
import { decidePlatformLoss, lossAmountOf } from '../domain/platform-loss.js';
import {
  decideReversal,
  disputeHoldOf,
  isReversible,
  type Adjustment,
  type NewReversal,
} from '../domain/reversal.js';
import { completionOf, releaseOf } from '../domain/settlement.js';
import type { Transaction } from '../domain/transaction.js';
import type { LedgerUnit } from '../data/ledger-store.js';
import {
  finish,
  reversalOf,
  settle,
  type Finish,
  type FlowContext,
} from '../use-cases/settlement-requests.js';
import { reversedEvent } from './ledger-events.js';

/** What an expired hold came to: canceled and released, or (a withdrawal) flagged for reconciliation. */
export type HoldExpiry = 'canceled' | 'flagged' | null;

/**
 * A withdrawal or transfer that held funds past its expiry. A transfer (settled by the ledger itself) is canceled
 * and its hold released. A withdrawal is canceled only if its request never left the ledger: its outbox row is
 * taken back in this same database transaction. One the provider may have received keeps its hold, stays pending
 * and is flagged for reconciliation, so a late payout.paid or payout.failed still settles it, once.
 */
export async function expireHold(
  unit: LedgerUnit,
  transactionId: string,
  cutoff: Date,
  context: FlowContext,
): Promise<HoldExpiry> {
  const held = (await unit.lockTransactions([transactionId])).get(transactionId);
  if (!held || held.status !== 'pending' || held.type === 'deposit' || held.createdAt >= cutoff) return null;
  if (held.type === 'withdrawal' && !(await unit.recallProviderRequest(held.id))) {
    if (!(await unit.flagForReconciliation(held.id))) return null;
    context.logger.warn(
      { transaction_id: held.id, account_id: held.accountId, amount: held.amount.toString() },
      'a withdrawal handed to the provider got no confirmation in time; it keeps its hold and awaits reconciliation',
    );
    return 'flagged';
  }
  const [canceled] = await settle(unit, [
    {
      transactionId,
      decide(transaction) {
        if (transaction?.status !== 'pending') return null;
        const reason = 'No confirmation arrived in time; the hold expired';
        return finish(transaction, 'canceled', releaseOf(transaction), context, reason);
      },
    },
  ]);
  return canceled ? 'canceled' : null;
}

/**
 * A deposit nobody paid in time ends canceled (it moved no money), and its payment is canceled at the provider.
 * Should the provider capture that payment all the same, it is credited as a late payment (see creditReturnedMoney).
 * Null when it was no longer pending.
 */
export async function expireDeposit(
  unit: LedgerUnit,
  transactionId: string,
  cutoff: Date,
  context: FlowContext,
): Promise<Transaction | null> {
  const [canceled] = await settle(unit, [
    {
      transactionId,
      decide(transaction) {
        if (transaction?.type !== 'deposit' || transaction.status !== 'pending') return null;
        if (transaction.createdAt >= cutoff) return null;
        const reason = 'No payment arrived in time; the deposit expired';
        return finish(transaction, 'canceled', releaseOf(transaction), context, reason);
      },
    },
  ]);
  // Its payment, if the provider made one, is canceled there too, so nobody pays a deposit that ended.
  if (canceled) await unit.requestProviderUndo([canceled.id]);
  return canceled ?? null;
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
  unit: LedgerUnit,
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
  unit: LedgerUnit,
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
async function bookReportedRefund(unit: LedgerUnit, deposit: Transaction, context: FlowContext) {
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
  unit: LedgerUnit,
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
