import { randomUUID } from 'node:crypto';
import { toMinorUnits } from '@payments/contracts';
import type { Logger } from '@payments/service-kit';
import { decideConfirmation, type Confirmation } from '../domain/confirmation.js';
import { decidePlatformLoss, lossAmountOf } from '../domain/platform-loss.js';
import {
  decideReversal,
  disputeHoldOf,
  isReversible,
  type Adjustment,
  type NewReversal,
} from '../domain/reversal.js';
import { completionOf, NO_SETTLEMENT, releaseOf, type Settlement } from '../domain/settlement.js';
import type { Account, NewTransaction, TerminalStatus, Transaction } from '../domain/transaction.js';
import type { FailedAttempt, Finish, LedgerUnit } from '../data/ledger-store.js';
import { reversedEvent, settledEvent, updatedEvent } from './ledger-events.js';

export interface FlowContext {
  correlationId: string;
  logger: Logger;
}

/**
 * One thing that may end a transaction: decides, from the transaction as it stands under its row lock and the
 * user accounts it involves, how it ends (null: it stays as it is).
 */
export interface SettlementRequest {
  transactionId: string;
  decide(transaction: Transaction | null, accounts: ReadonlyMap<string, Account>): Outcome | null;
}

/**
 * Money the provider gave back against an ended transaction (a paid payout that came back, a payment captured after
 * its deposit ended): a new reversal linked to it credits the user, once per transaction.
 */
export interface ReturnedMoney {
  original: Transaction;
  kind: 'payout_returned' | 'late_payment';
  /** The provider's reference, shown as the reversal's payment id. */
  reference: string;
  context: FlowContext;
}

type Outcome = Finish | FailedAttempt | ReturnedMoney;

const isFinish = (outcome: Outcome): outcome is Finish => 'settlement' in outcome;
const isReturnedMoney = (outcome: Outcome): outcome is ReturnedMoney => 'original' in outcome;

/**
 * Runs requests in one database transaction: locks their transactions (in id order) and reads their accounts,
 * decides each in turn, then writes every ending at once. A later request for the same transaction sees it as
 * the earlier one left it, exactly as if they had run one after the other. Returns the transactions that ended.
 */
export async function settle(unit: LedgerUnit, requests: SettlementRequest[]): Promise<Transaction[]> {
  const { transactions, accounts } = await unit.lockForSettlement(
    requests.map((request) => request.transactionId),
  );
  const finishes: Finish[] = [];
  // By transaction: the last failed attempt recorded wins, and an ending in the same batch drops it.
  const attempts = new Map<string, FailedAttempt>();
  const returns = new Map<string, ReturnedMoney>();
  for (const request of requests) {
    const transaction = transactions.get(request.transactionId) ?? null;
    const outcome = request.decide(transaction, accounts);
    if (!outcome || !transaction) continue;
    if (isReturnedMoney(outcome)) {
      // Once per transaction: a second report of the same return in this batch changes nothing.
      if (!returns.has(transaction.id)) returns.set(transaction.id, outcome);
    } else if (isFinish(outcome)) {
      finishes.push(outcome);
      attempts.delete(transaction.id);
      transactions.set(transaction.id, { ...transaction, status: outcome.status });
    } else {
      // A later request for it sees the reason, as if recorded already.
      attempts.set(transaction.id, outcome);
      transactions.set(transaction.id, { ...transaction, failureReason: outcome.reason });
    }
  }
  await unit.recordFailedAttempts([...attempts.values()]);
  // Booked in the same statement as the endings, so every account is locked once, in the shared order.
  for (const returned of returns.values()) {
    const credit = await creditReturnedMoney(unit, returned, accounts);
    if (credit) finishes.push(credit);
  }
  const finished = await unit.finishTransactions(finishes);
  await unit.requestProviderUndo(finished.flatMap(payoutToUndo));
  return finished;
}

/**
 * A payout that did not reach the user's bank (failed before it was paid, or came back after) leaves its money on
 * the user's connected account at the provider; the withdrawal it served is undone there (its transfer reversed),
 * since the ledger gives the money back to the user.
 */
function payoutToUndo(ended: Transaction): string[] {
  if (ended.type === 'withdrawal' && ended.status !== 'completed') return [ended.id];
  if (ended.reversalReason === 'payout_returned' && ended.originalTransactionId)
    return [ended.originalTransactionId];
  return [];
}

function finish(
  transaction: Transaction,
  status: TerminalStatus,
  settlement: Settlement,
  context: FlowContext,
  reason?: string,
): Finish {
  return {
    transaction,
    status,
    settlement,
    reason,
    announce: (finished) => [settledEvent(finished, context.correlationId)],
  };
}

/**
 * The reversal that credits money the provider gave back, created pending and ended by the caller's
 * finishTransactions; null when one was booked already (by another event reporting the same return) or the account
 * is gone. The original is locked by the settlement, so the check and the insert cannot race.
 */
async function creditReturnedMoney(
  unit: LedgerUnit,
  { original, kind, reference, context }: ReturnedMoney,
  accounts: ReadonlyMap<string, Account>,
): Promise<Finish | null> {
  const about = { transaction_id: original.id, reversal: kind, reference };
  if ((await unit.lockReversalsOf(original.id)).some((reversal) => reversal.reversalReason === kind)) {
    context.logger.info(about, 'the money the provider returned is booked already');
    return null;
  }
  const account = accounts.get(original.accountId);
  if (!account || original.userId === null) {
    context.logger.error(
      about,
      'the provider returned money for an account that no longer exists; left for an operator',
    );
    return null;
  }
  const created = await unit.insertTransaction(
    reversalOf(original, original.userId, {
      amount: original.amount,
      // A late payment is booked as its deposit would have been, fee included; a returned payout's fee stays earned.
      fee: kind === 'late_payment' ? original.fee : toMinorUnits(0n),
      paymentId: reference,
      reversalReason: kind,
      reversalKey: kind,
      heldAmount: toMinorUnits(0n),
    }),
  );
  context.logger.warn(
    { ...about, reversal_id: created.id, amount: created.amount.toString() },
    kind === 'payout_returned'
      ? 'a paid payout came back: its amount is credited back to the user'
      : 'the provider captured a payment after its deposit ended: it is credited',
  );
  return {
    transaction: created,
    status: 'completed',
    settlement: completionOf(created),
    announce: (finished) => [reversedEvent(finished, context.correlationId)],
  };
}

/** A new reversal of `original`, on its account and in its currency, owned by `userId`. */
function reversalOf(
  original: Transaction,
  userId: string,
  fields: Pick<NewTransaction, 'amount' | 'fee' | 'paymentId'> &
    Required<Pick<NewTransaction, 'reversalReason' | 'reversalKey' | 'heldAmount'>>,
): NewTransaction {
  return {
    id: randomUUID(),
    accountId: original.accountId,
    userId,
    type: 'reversal',
    currency: original.currency,
    counterpartyAccountId: null,
    counterpartyUserId: null,
    exchangeRate: null,
    convertedAmount: null,
    convertedCurrency: null,
    originalTransactionId: original.id,
    ...fields,
  };
}

const fail = (transaction: Transaction, reason: string, context: FlowContext) =>
  finish(transaction, 'failed', releaseOf(transaction), context, reason);

/**
 * A provider's confirmation of a deposit or payout: completes, fails or cancels it, once, and never for another
 * amount; a failed attempt only records its reason on the transaction, which stays pending.
 */
export function confirmPayment(
  transactionId: string,
  confirmation: Confirmation,
  context: FlowContext,
): SettlementRequest {
  return {
    transactionId,
    decide(transaction, accounts) {
      if (!transaction) {
        context.logger.warn(
          { transaction_id: transactionId },
          'payment confirmation for an unknown transaction; ignored',
        );
        return null;
      }
      const decision = decideConfirmation(transaction, confirmation);
      if (decision.action === 'ignore') {
        const about = { transaction_id: transactionId, reason: decision.reason };
        if (decision.contradicts) {
          context.logger.error(
            about,
            'the provider reports another outcome than the ledger booked; left for an operator to settle',
          );
        } else context.logger.info(about, 'payment confirmation ignored');
        return null;
      }
      if (decision.action === 'fail') return fail(transaction, decision.reason, context);
      if (decision.action === 'credit_back') {
        return {
          original: transaction,
          kind: decision.kind,
          reference: confirmation.reference ?? transactionId,
          context,
        };
      }
      if (decision.action === 'cancel') {
        return finish(transaction, 'canceled', releaseOf(transaction), context, decision.reason);
      }
      if (decision.action === 'note') {
        context.logger.info(
          { transaction_id: transactionId, reason: decision.reason },
          'a payment attempt failed; the transaction stays pending',
        );
        return {
          transaction,
          reason: decision.reason,
          announce: (noted) => [updatedEvent(noted, context.correlationId)],
        };
      }
      if (!accounts.has(transaction.accountId)) {
        context.logger.error(
          { transaction_id: transactionId },
          'payment confirmed for an account that no longer exists',
        );
        return finish(transaction, 'failed', NO_SETTLEMENT, context, 'The account no longer exists');
      }
      return finish(transaction, 'completed', completionOf(transaction), context);
    },
  };
}

/** The provider refused to make a deposit's payment or a withdrawal's payout: it fails, releasing any hold. */
export function refusedByProvider(
  transactionId: string,
  reason: string,
  context: FlowContext,
): SettlementRequest {
  return {
    transactionId,
    decide(transaction) {
      if (transaction?.status !== 'pending') return null;
      return fail(transaction, `The payment provider refused it: ${reason}`, context);
    },
  };
}

/**
 * An operator found that the provider never made what a deposit or withdrawal asked for, and its request can no
 * longer be made (its keys expired): it fails, releasing any hold, and its owner may ask again.
 */
export function neverMade(transactionId: string, context: FlowContext): SettlementRequest {
  return {
    transactionId,
    decide(transaction) {
      if (transaction?.status !== 'pending' || transaction.type === 'transfer') return null;
      return fail(transaction, 'The payment provider never made it, as an operator found', context);
    },
  };
}

/** Settles an accepted transfer: source debited, destination credited, fee booked. */
export function settleTransfer(transactionId: string, context: FlowContext): SettlementRequest {
  return {
    transactionId,
    decide(transaction, accounts) {
      if (!transaction || transaction.type !== 'transfer' || transaction.status !== 'pending') {
        context.logger.info({ transaction_id: transactionId }, 'no pending transfer to settle');
        return null;
      }
      const destinationId = transaction.counterpartyAccountId as string;
      const destination = accounts.get(destinationId);
      if (!accounts.has(transaction.accountId)) {
        return finish(transaction, 'failed', NO_SETTLEMENT, context, 'The account no longer exists');
      }
      if (!destination) return fail(transaction, 'The destination account no longer exists', context);
      const expectedCurrency = transaction.convertedCurrency ?? transaction.currency;
      if (destination.currency !== expectedCurrency) {
        return fail(transaction, `The destination account no longer holds ${expectedCurrency}`, context);
      }
      const settlement = completionOf(transaction, {
        accountId: destination.id,
        currency: destination.currency,
      });
      return finish(transaction, 'completed', settlement, context);
    },
  };
}

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
