import { randomUUID } from 'node:crypto';
import { toMinorUnits, type AnyEvent } from '@payments/contracts';
import type { Logger } from '@payments/service-kit';
import { decideConfirmation, type Confirmation } from '../domain/confirmation.js';
import { completionOf, NO_SETTLEMENT, releaseOf, type Settlement } from '../domain/settlement.js';
import type { Account, NewTransaction, TerminalStatus, Transaction } from '../domain/transaction.js';
import { reversedEvent, settledEvent, updatedEvent } from '../events/ledger-events.js';

/** How one pending transaction ends. */
export interface Finish {
  transaction: Transaction;
  status: TerminalStatus;
  settlement: Settlement;
  reason?: string;
  /** The events that announce the ending, built from the transaction as it ended. */
  announce?: (finished: Transaction) => AnyEvent[];
}

/** A pending transaction that stays pending with a new failure reason: a payment attempt failed. */
export interface FailedAttempt {
  transaction: Transaction;
  reason: string;
  /** The events that announce it, built from the transaction as it was recorded. */
  announce: (noted: Transaction) => AnyEvent[];
}

/**
 * What ending transactions does in one database transaction: every change to money goes through here. Balances
 * never go below zero but by a reversal: the database refuses it (the accounts_user_balances check, migrations
 * 001_accounts and 008_reversals), and entries balance per transaction and currency (the entries_balanced
 * trigger, migration 003_entries).
 */
export interface SettlementUnit {
  /** Locks transactions in id order (the lock order every settlement shares) and reads them. */
  lockTransactions(transactionIds: string[]): Promise<Map<string, Transaction>>;
  /**
   * lockTransactions, and the user accounts they involve (own and counterparty) read without a lock, in one
   * statement.
   */
  lockForSettlement(
    transactionIds: string[],
  ): Promise<{ transactions: Map<string, Transaction>; accounts: Map<string, Account> }>;
  /** Locks the reversals of a transaction (in id order) and reads them; lock the transaction itself first. */
  lockReversalsOf(originalTransactionId: string): Promise<Transaction[]>;
  insertTransaction(transaction: NewTransaction): Promise<Transaction>;
  /**
   * Moves pending transactions to their terminal status, records the events they announce, then books their
   * settlements, all with a fixed number of statements however many there are. Returns the transactions that
   * moved; one that is no longer pending is left out, and nothing of it is applied.
   */
  finishTransactions(finishes: Finish[]): Promise<Transaction[]>;
  /**
   * Records failed payment attempts on transactions that are still pending (their failure reason), and the events
   * that announce them. Returns the transactions recorded; one no longer pending is left out, unchanged.
   */
  recordFailedAttempts(attempts: FailedAttempt[]): Promise<Transaction[]>;
  /**
   * Asks for what the provider made for these transactions to be undone, as they ended otherwise than paid: a
   * deposit's payment canceled, a payout's transfer reversed. Due now where made, or once it is.
   */
  requestProviderUndo(transactionIds: readonly string[]): Promise<void>;
}

/** Where a flow comes from: the correlation id its events carry, and the log it writes to. */
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
export async function settle(unit: SettlementUnit, requests: SettlementRequest[]): Promise<Transaction[]> {
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

export function finish(
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
  unit: SettlementUnit,
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
export function reversalOf(
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
