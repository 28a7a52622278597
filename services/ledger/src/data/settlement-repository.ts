import { enqueueEvents, type Knex } from '@payments/service-kit';
import type { Account, Transaction } from '../domain/transaction.js';
import type { SettlementUnit } from '../use-cases/settlement-requests.js';
import type { SettlementStore } from '../use-cases/settlement.js';
import { createJournal } from './journal.js';
import {
  ACCOUNT_COLUMNS,
  toAccount,
  toTransaction,
  transactionColumns,
  type AccountRow,
  type TransactionRow,
} from './records.js';
import { createSystemAccounts, type SystemAccounts } from './system-accounts.js';
import { unitOfWork } from './unit-of-work.js';

/** The own (a_) and counterparty (c_) account columns of lockForSettlement, prefixed. */
const SETTLEMENT_ACCOUNT_COLUMNS = ['a', 'c']
  .flatMap((alias) => ACCOUNT_COLUMNS.map((column) => `${alias}.${column} AS ${alias}_${column}`))
  .join(', ');

/** Settlement's operations in the database transaction `trx`: locks, endings, and the journal behind them. */
export function settlementUnitOf(trx: Knex.Transaction, systemAccounts: SystemAccounts): SettlementUnit {
  const journal = createJournal(trx, systemAccounts);

  const finishTransactions: SettlementUnit['finishTransactions'] = async (finishes) => {
    if (finishes.length === 0) return [];
    const ids = new Set(finishes.map(({ transaction }) => transaction.id));
    if (ids.size !== finishes.length) throw new Error('a transaction can end only once per statement');
    const { rows }: { rows: TransactionRow[] } = await trx.raw(
      `UPDATE transactions AS t
       SET status = v.status, failure_reason = v.reason, updated_at = now(),
           completed_at = CASE WHEN v.status = 'completed' THEN now() END
       FROM unnest(?::uuid[], ?::text[], ?::text[]) AS v(id, status, reason)
       WHERE t.id = v.id AND t.status = 'pending'
       RETURNING t.*`,
      [
        finishes.map(({ transaction }) => transaction.id),
        finishes.map(({ status }) => status),
        // knex's binding types know no arrays with nulls; pg sends them as SQL NULL elements.
        finishes.map(({ reason }) => reason ?? null) as string[],
      ],
    );
    const finishedById = new Map(rows.map((row) => [row.id, toTransaction(row)]));
    const ended = finishes.flatMap((finish) => {
      const finished = finishedById.get(finish.transaction.id);
      return finished ? [{ ...finish, finished }] : [];
    });
    await journal.book(
      ended.map(({ finished, settlement }) => ({ transactionId: finished.id, settlement })),
      ended.flatMap(({ announce, finished }) => announce?.(finished) ?? []),
    );
    return ended.map(({ finished }) => finished);
  };

  const recordFailedAttempts: SettlementUnit['recordFailedAttempts'] = async (attempts) => {
    if (attempts.length === 0) return [];
    // Each attempt noted is kept with its time too, for the admin overview's decline rate (ADR 0127).
    const { rows }: { rows: TransactionRow[] } = await trx.raw(
      `WITH noted AS (
         UPDATE transactions AS t SET failure_reason = v.reason, updated_at = now()
         FROM unnest(?::uuid[], ?::text[]) AS v(id, reason)
         WHERE t.id = v.id AND t.status = 'pending'
         RETURNING t.*
       ), kept AS (
         INSERT INTO payment_attempt_failures (transaction_id, reason) SELECT id, failure_reason FROM noted
       )
       SELECT * FROM noted`,
      [attempts.map(({ transaction }) => transaction.id), attempts.map(({ reason }) => reason)],
    );
    const recordedById = new Map(rows.map((row) => [row.id, toTransaction(row)]));
    const recorded = attempts.flatMap((attempt) => {
      const noted = recordedById.get(attempt.transaction.id);
      return noted ? [{ attempt, noted }] : [];
    });
    await enqueueEvents(
      trx,
      recorded.flatMap(({ attempt, noted }) => attempt.announce(noted)),
    );
    return recorded.map(({ noted }) => noted);
  };

  return {
    async insertTransaction(transaction) {
      const rows: TransactionRow[] = await trx('transactions')
        .insert({ ...transactionColumns(transaction), reversal_key: transaction.reversalKey ?? null })
        .returning('*');
      return toTransaction(rows[0] as TransactionRow);
    },

    async lockTransactions(transactionIds) {
      const { rows }: { rows: TransactionRow[] } = await trx.raw(
        `SELECT * FROM transactions WHERE id = ANY(?::uuid[]) ORDER BY id FOR UPDATE`,
        [[...new Set(transactionIds)]],
      );
      return new Map(rows.map((row) => [row.id, toTransaction(row)]));
    },

    async lockForSettlement(transactionIds) {
      // The accounts of a pending transaction cannot be removed meanwhile (a user's removal waits for, or
      // refuses over, their pending transactions), so reading them in the locking statement sees what a read
      // after it would.
      const { rows }: { rows: (TransactionRow & Record<string, unknown>)[] } = await trx.raw(
        `SELECT t.*, ${SETTLEMENT_ACCOUNT_COLUMNS}
         FROM (SELECT * FROM transactions WHERE id = ANY(?::uuid[]) ORDER BY id FOR UPDATE) AS t
         LEFT JOIN accounts AS a ON a.id = t.account_id AND (a.kind = 'user') IS TRUE
         LEFT JOIN accounts AS c ON c.id = t.counterparty_account_id AND (c.kind = 'user') IS TRUE`,
        [[...new Set(transactionIds)]],
      );
      const transactions = new Map<string, Transaction>();
      const accounts = new Map<string, Account>();
      for (const row of rows) {
        transactions.set(row.id, toTransaction(row));
        for (const prefix of ['a_', 'c_']) {
          const id = row[`${prefix}id`] as string | null;
          if (id === null || accounts.has(id)) continue;
          const account: Record<string, unknown> = {};
          for (const column of ACCOUNT_COLUMNS) account[column] = row[`${prefix}${column}`];
          accounts.set(id, toAccount(account as unknown as AccountRow));
        }
      }
      return { transactions, accounts };
    },

    async lockReversalsOf(originalTransactionId) {
      const rows: TransactionRow[] = await trx('transactions')
        .where({ original_transaction_id: originalTransactionId, type: 'reversal' })
        .orderBy('id')
        .forUpdate();
      return rows.map(toTransaction);
    },

    finishTransactions,
    recordFailedAttempts,

    async requestProviderUndo(transactionIds) {
      if (transactionIds.length === 0) return;
      await trx.raw(
        `UPDATE provider_payments
         SET cancel_requested = true, updated_at = now(),
             next_attempt_at = CASE WHEN state = 'created' THEN now() ELSE next_attempt_at END
         WHERE transaction_id = ANY(?::uuid[]) AND NOT cancel_requested`,
        [[...transactionIds]],
      );
    },
  };
}

export function createSettlementRepository(
  knex: Knex,
  systemAccounts: SystemAccounts = createSystemAccounts(),
): SettlementStore {
  return {
    ...unitOfWork(knex, (trx) => settlementUnitOf(trx, systemAccounts)),
    async pendingTransfers(acceptedBefore, notBefore, limit) {
      const rows: { id: string }[] = await knex('transactions')
        .where('status', 'pending')
        .where('type', 'transfer')
        .where('created_at', '<', acceptedBefore)
        .where('created_at', '>=', notBefore)
        .orderBy('created_at')
        .limit(limit)
        .select('id');
      return rows.map((row) => row.id);
    },
  };
}
