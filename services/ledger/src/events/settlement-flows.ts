import { releaseOf } from '../domain/settlement.js';
import type { Transaction } from '../domain/transaction.js';
import type { LedgerUnit } from '../data/ledger-store.js';
import { finish, settle, type FlowContext } from '../use-cases/settlement-requests.js';

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
