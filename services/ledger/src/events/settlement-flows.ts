import type { Logger } from '@payments/service-kit';
import { decideConfirmation, type Confirmation } from '../domain/confirmation.js';
import { completionOf, NO_SETTLEMENT, releaseOf, type Settlement } from '../domain/settlement.js';
import type { TerminalStatus, Transaction } from '../domain/transaction.js';
import type { LedgerUnit } from '../data/ledger-store.js';
import { settledEvent } from './ledger-events.js';

export interface FlowContext {
  correlationId: string;
  logger: Logger;
}

async function finish(
  unit: LedgerUnit,
  transaction: Transaction,
  status: TerminalStatus,
  settlement: Settlement,
  context: FlowContext,
  reason?: string,
): Promise<Transaction | null> {
  return unit.finishTransaction(transaction, status, settlement, {
    reason,
    announce: (finished) => [settledEvent(finished, context.correlationId)],
  });
}

const fail = (unit: LedgerUnit, transaction: Transaction, reason: string, context: FlowContext) =>
  finish(unit, transaction, 'failed', releaseOf(transaction), context, reason);

/** A provider's confirmation of a deposit or payout: completes or fails it, once, and never for another amount. */
export async function confirmPayment(
  unit: LedgerUnit,
  transactionId: string,
  confirmation: Confirmation,
  context: FlowContext,
): Promise<Transaction | null> {
  const transaction = await unit.lockTransaction(transactionId);
  if (!transaction) {
    context.logger.warn(
      { transaction_id: transactionId },
      'payment confirmation for an unknown transaction; ignored',
    );
    return null;
  }
  const decision = decideConfirmation(transaction, confirmation);
  if (decision.action === 'ignore') {
    context.logger.info(
      { transaction_id: transactionId, reason: decision.reason },
      'payment confirmation ignored',
    );
    return null;
  }
  if (decision.action === 'fail') return fail(unit, transaction, decision.reason, context);
  const accounts = await unit.findAccounts([transaction.accountId]);
  if (!accounts.has(transaction.accountId)) {
    context.logger.error(
      { transaction_id: transactionId },
      'payment confirmed for an account that no longer exists',
    );
    return finish(unit, transaction, 'failed', NO_SETTLEMENT, context, 'The account no longer exists');
  }
  return finish(unit, transaction, 'completed', completionOf(transaction), context);
}

/** Settles an accepted transfer in one database transaction: source debited, destination credited, fee booked. */
export async function settleTransfer(
  unit: LedgerUnit,
  transactionId: string,
  context: FlowContext,
): Promise<Transaction | null> {
  const transaction = await unit.lockTransaction(transactionId);
  if (!transaction || transaction.type !== 'transfer' || transaction.status !== 'pending') {
    context.logger.info({ transaction_id: transactionId }, 'no pending transfer to settle');
    return null;
  }
  const destinationId = transaction.counterpartyAccountId as string;
  const accounts = await unit.findAccounts([transaction.accountId, destinationId]);
  const destination = accounts.get(destinationId);
  if (!accounts.has(transaction.accountId)) {
    return finish(unit, transaction, 'failed', NO_SETTLEMENT, context, 'The account no longer exists');
  }
  if (!destination) return fail(unit, transaction, 'The destination account no longer exists', context);
  const expectedCurrency = transaction.convertedCurrency ?? transaction.currency;
  if (destination.currency !== expectedCurrency) {
    return fail(unit, transaction, `The destination account no longer holds ${expectedCurrency}`, context);
  }
  return finish(
    unit,
    transaction,
    'completed',
    completionOf(transaction, { accountId: destination.id, currency: destination.currency }),
    context,
  );
}

/** Cancels a withdrawal or transfer that held funds for too long and gives the hold back. */
export async function cancelExpiredHold(
  unit: LedgerUnit,
  transactionId: string,
  cutoff: Date,
  context: FlowContext,
): Promise<Transaction | null> {
  const transaction = await unit.lockTransaction(transactionId);
  if (!transaction || transaction.status !== 'pending' || transaction.createdAt >= cutoff) return null;
  const reason = 'No confirmation arrived in time; the hold expired';
  return finish(unit, transaction, 'canceled', releaseOf(transaction), context, reason);
}
