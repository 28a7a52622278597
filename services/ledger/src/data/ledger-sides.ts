import type { Knex } from '@payments/service-kit';
import type { LedgerSide } from '../domain/reconciliation.js';
import { findRemovedDeposits } from './platform-losses.js';
import { toTransaction, type TransactionRow } from './records.js';

/** Which of these transactions were removed with their users. */
export async function removedAmong(knex: Knex, transactionIds: string[]): Promise<Set<string>> {
  if (transactionIds.length === 0) return new Set();
  const removed: string[] = await knex('removed_transactions')
    .whereRaw('transaction_id = ANY(?::uuid[])', [transactionIds])
    .pluck('transaction_id');
  return new Set(removed);
}

/**
 * The transactions the provider's records name, with their reversals and any undo still to be made; a deposit
 * removed with its user as it was kept, the platform losses booked on it counted as its reversals.
 */
export async function ledgerSides(knex: Knex, transactionIds: string[]): Promise<Map<string, LedgerSide>> {
  const sides = new Map<string, LedgerSide>();
  if (transactionIds.length === 0) return sides;
  // One after the other: `knex` may be a database transaction, one connection.
  const transactions = await knex('transactions')
    .whereRaw('id = ANY(?::uuid[])', [transactionIds])
    .select<TransactionRow[]>('*');
  const reversals = await knex('transactions')
    .whereRaw('original_transaction_id = ANY(?::uuid[])', [transactionIds])
    .select<TransactionRow[]>('*');
  const requests: {
    transaction_id: string;
    kind: 'payment' | 'payout';
    state: string;
    reference: string | null;
    transfer: string | null;
    cancel_requested: boolean;
  }[] = await knex('provider_payments')
    .whereRaw('transaction_id = ANY(?::uuid[])', [transactionIds])
    .select('transaction_id', 'kind', 'state', 'reference', 'transfer', 'cancel_requested');
  const asked = new Map(requests.map((request) => [request.transaction_id, request]));
  for (const row of transactions) {
    const request = asked.get(row.id);
    sides.set(row.id, {
      transaction: toTransaction(row),
      reversals: [],
      undoPending:
        request !== undefined &&
        request.cancel_requested &&
        (request.state === 'requested' || request.state === 'created'),
      // A payout's money moved by its transfer: that is the object reconciliation reads. A request skipped because
      // its transaction ended first asked the provider for nothing: whatever names the transaction is foreign to it.
      asked:
        request && request.state !== 'skipped'
          ? {
              state: request.state,
              reference: request.kind === 'payout' ? request.transfer : request.reference,
            }
          : null,
    });
  }
  for (const row of reversals) {
    const reversal = toTransaction(row);
    sides.get(reversal.originalTransactionId as string)?.reversals.push(reversal);
  }
  const gone = transactionIds.filter((id) => !sides.has(id));
  for (const [id, { deposit, reversals: kept, providerReference }] of await findRemovedDeposits(knex, gone)) {
    sides.set(id, {
      transaction: deposit,
      reversals: kept,
      undoPending: false,
      asked: providerReference ? { state: 'created', reference: providerReference } : null,
      removed: true,
    });
  }
  return sides;
}
