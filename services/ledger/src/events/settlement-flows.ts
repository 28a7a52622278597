import type { Logger } from '@payments/service-kit';
import { decideConfirmation, type Confirmation } from '../domain/confirmation.js';
import { completionOf, NO_SETTLEMENT, releaseOf, type Settlement } from '../domain/settlement.js';
import type { Account, TerminalStatus, Transaction } from '../domain/transaction.js';
import type { Finish, LedgerUnit } from '../data/ledger-store.js';
import { settledEvent } from './ledger-events.js';

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
  decide(transaction: Transaction | null, accounts: ReadonlyMap<string, Account>): Finish | null;
}

/**
 * Runs requests in one database transaction: locks their transactions (in id order), reads their accounts,
 * decides each in turn, then writes every ending at once. A later request for the same transaction sees it as
 * the earlier one left it, exactly as if they had run one after the other. Returns the transactions that ended.
 */
export async function settle(unit: LedgerUnit, requests: SettlementRequest[]): Promise<Transaction[]> {
  const transactions = await unit.lockTransactions(requests.map((request) => request.transactionId));
  const accountIds = new Set<string>();
  for (const { accountId, counterpartyAccountId } of transactions.values()) {
    accountIds.add(accountId);
    if (counterpartyAccountId) accountIds.add(counterpartyAccountId);
  }
  const accounts = accountIds.size > 0 ? await unit.findAccounts([...accountIds]) : new Map();
  const finishes: Finish[] = [];
  for (const request of requests) {
    const transaction = transactions.get(request.transactionId) ?? null;
    const finish = request.decide(transaction, accounts);
    if (!finish || !transaction) continue;
    finishes.push(finish);
    transactions.set(transaction.id, { ...transaction, status: finish.status });
  }
  return unit.finishTransactions(finishes);
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

const fail = (transaction: Transaction, reason: string, context: FlowContext) =>
  finish(transaction, 'failed', releaseOf(transaction), context, reason);

/** A provider's confirmation of a deposit or payout: completes or fails it, once, and never for another amount. */
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
        context.logger.info(
          { transaction_id: transactionId, reason: decision.reason },
          'payment confirmation ignored',
        );
        return null;
      }
      if (decision.action === 'fail') return fail(transaction, decision.reason, context);
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
