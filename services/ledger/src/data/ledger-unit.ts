import { toMinorUnits, type AnyEvent, type MinorUnits } from '@payments/contracts';
import { enqueueEvents, OUTBOX_INSERT_SQL, wakeRelaysAfterCommit, type Knex } from '@payments/service-kit';
import type { NewPlatformLoss, PlatformLoss, RemovedDeposit } from '../domain/platform-loss.js';
import type { Mismatch } from '../domain/reconciliation.js';
import { accountChangesOf, lossOf, type Settlement } from '../domain/settlement.js';
import type { Account, NewTransaction, TerminalStatus, Transaction } from '../domain/transaction.js';
import {
  ACCOUNT_COLUMNS,
  toAccount,
  toTransaction,
  USER_ACCOUNT,
  type AccountRow,
  type TransactionRow,
} from './records.js';
import { findRemovedDeposits, insertPlatformLoss } from './platform-losses.js';
import { requestProviderUndo } from './provider-payments.js';
import { recordUnmatchedObject } from './reconciliation.js';
import type { SystemAccounts } from './system-accounts.js';

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

/** The operations of one database transaction: every change to money goes through here. */
export interface LedgerUnit {
  /** Reads a user account and locks its balances until commit (as a settlement would). */
  lockAccount(accountId: string): Promise<Account | null>;
  /** Locks the reversals of a transaction (in id order) and reads them; lock the transaction itself first. */
  lockReversalsOf(originalTransactionId: string): Promise<Transaction[]>;
  /**
   * A deposit removed with its user, with its reversals and the losses booked on it, locked until commit so that
   * two refunds or disputes of it take turns; null when no deposit with this id was removed.
   */
  lockRemovedDeposit(depositId: string): Promise<RemovedDeposit | null>;
  /**
   * Books a removed user's deposit taken back by the provider against the platform loss account (see lossOf);
   * null, booking nothing, when a loss with its key was booked for the deposit already.
   */
  bookPlatformLoss(loss: NewPlatformLoss): Promise<PlatformLoss | null>;
  /** Remembers the provider's refunded total for a deposit, unless a higher one is remembered already. */
  reportRefundedTotal(depositId: string, refundedTotal: MinorUnits, reference: string): Promise<void>;
  /** The highest refunded total the provider reported for a deposit, with that report's reference. */
  reportedRefundOf(depositId: string): Promise<{ refundedTotal: MinorUnits; reference: string } | null>;
  /** Moves `amount` from available to held; false when the account has not that much available. */
  holdFunds(accountId: string, amount: MinorUnits): Promise<boolean>;
  insertTransaction(transaction: NewTransaction): Promise<Transaction>;
  /** Locks transactions in id order (the lock order every settlement shares) and reads them. */
  lockTransactions(transactionIds: string[]): Promise<Map<string, Transaction>>;
  /**
   * lockTransactions and findAccounts of the user accounts they involve (own and counterparty), in one
   * statement: the transactions locked in id order, their accounts read without a lock.
   */
  lockForSettlement(
    transactionIds: string[],
  ): Promise<{ transactions: Map<string, Transaction>; accounts: Map<string, Account> }>;
  /** Reads user accounts without locking them: settlement locks them last, when it changes their balances. */
  findAccounts(accountIds: string[]): Promise<Map<string, Account>>;
  /**
   * Moves pending transactions to their terminal status, records the events they announce, then applies their
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
   * Takes back a withdrawal's request to the provider if the outbox relay never published it (an attempt under
   * way is waited for, briefly); true when it was taken back, so the provider can never have seen it.
   */
  recallProviderRequest(transactionId: string): Promise<boolean>;
  /** Asks for what the provider made for these transactions to be undone (see provider-payments). */
  requestProviderUndo(transactionIds: readonly string[]): Promise<void>;
  /** Marks a pending withdrawal as awaiting reconciliation, once; true when this call marked it. */
  flagForReconciliation(transactionId: string): Promise<boolean>;
  /** A provider object the ledger never asked for, as a reconciliation case (see recordUnmatchedObject). */
  recordUnmatchedObject(mismatch: Mismatch, unlessKnown?: boolean): Promise<boolean>;
  enqueue(events: AnyEvent[]): Promise<void>;
}

interface BalanceChange {
  balance: bigint;
  available: bigint;
  system: boolean;
  /** Moved by a reversal, which alone may take a user account below zero. */
  overdraw: boolean;
}

interface EntryRow {
  transaction_id: string;
  account_id: string;
  amount: string;
  currency: string;
}

/** The rows of journal entries, from four arrays (transaction, account, amount, currency). */
const ENTRY_ROWS = `(transaction_id, account_id, amount, currency)
  SELECT * FROM unnest(?::uuid[], ?::uuid[], ?::bigint[], ?::text[])`;

/** The own (a_) and counterparty (c_) account columns of lockForSettlement, prefixed. */
const SETTLEMENT_ACCOUNT_COLUMNS = ['a', 'c']
  .flatMap((alias) => ACCOUNT_COLUMNS.map((column) => `${alias}.${column} AS ${alias}_${column}`))
  .join(', ');

/** How long an expiry waits for the outbox relay to finish publishing a withdrawal's request. */
const RELAY_WAIT = '2s';
const LOCK_NOT_AVAILABLE = '55P03';

export function createLedgerUnit(trx: Knex.Transaction, systemAccounts: SystemAccounts): LedgerUnit {
  // Journal and balances last, in one statement: the account rows (the contended ones) stay locked only until
  // commit.
  const applySettlements = async (
    settlements: { transactionId: string; settlement: Settlement }[],
    events: AnyEvent[],
  ) => {
    const entries: EntryRow[] = [];
    const changes = new Map<string, BalanceChange>();
    const change = (accountId: string, system: boolean) => {
      const current = changes.get(accountId) ?? { balance: 0n, available: 0n, system, overdraw: false };
      changes.set(accountId, current);
      return current;
    };
    for (const { transactionId, settlement } of settlements) {
      for (const leg of settlement.legs) {
        const accountId =
          leg.target.kind === 'account'
            ? leg.target.accountId
            : await systemAccounts.idOf(trx, leg.target.code, leg.currency);
        entries.push({
          transaction_id: transactionId,
          account_id: accountId,
          amount: leg.amount.toString(),
          currency: leg.currency,
        });
        if (leg.target.kind === 'system') {
          const total = change(accountId, true);
          total.balance += leg.amount;
          total.available += leg.amount;
        }
      }
      for (const { accountId, balance, available } of accountChangesOf(settlement)) {
        const total = change(accountId, false);
        total.balance += balance;
        total.available += available;
        if (settlement.mayOverdraw) total.overdraw = true;
      }
    }
    await writeJournal(events, entries, changes);
  };

  /**
   * The events the endings announce (the outbox), the journal entries and the balance moves, in one statement.
   * User accounts in id order, then system accounts in id order: one global lock order, so no deadlocks. The hot
   * system accounts (provider clearing) are locked last, once per database transaction. A reversal's move sets
   * how far below zero the account may be (its shortfall); every other move may only lower that, so the balance
   * check refuses any other way below zero.
   *
   * The ordered lock (`locked`, NO KEY UPDATE: the lock the UPDATE takes anyway, leaving the key share that keeps
   * an account from deletion compatible) is a materialized CTE the UPDATE reads through an uncorrelated count: a
   * one-time filter, evaluated in full before the UPDATE touches any row, so every lock is taken in order first,
   * as when it was a statement of its own. The outbox rows and the entries are data-modifying CTEs of the same
   * statement. Arrays, not a VALUES row per entry or account: a fixed number of parameters whatever the batch,
   * so parsing stays cheap.
   */
  const writeJournal = async (
    events: AnyEvent[],
    entries: EntryRow[],
    changes: Map<string, BalanceChange>,
  ) => {
    const ordered = [...changes]
      .filter(([, { balance, available }]) => balance !== 0n || available !== 0n)
      .sort(([a, x], [b, y]) => Number(x.system) - Number(y.system) || (a < b ? -1 : a > b ? 1 : 0));
    const parts: string[] = [];
    const bindings: unknown[] = [];
    if (events.length > 0) {
      parts.push(`outboxed AS (${OUTBOX_INSERT_SQL})`);
      bindings.push(JSON.stringify(events));
    }
    if (entries.length > 0) {
      parts.push(`journal AS (INSERT INTO entries ${ENTRY_ROWS})`);
      bindings.push(
        entries.map((entry) => entry.transaction_id),
        entries.map((entry) => entry.account_id),
        entries.map((entry) => entry.amount),
        entries.map((entry) => entry.currency),
      );
    }
    if (ordered.length === 0) {
      if (parts.length > 0) await trx.raw(`WITH ${parts.join(', ')} SELECT 1`, bindings as Knex.RawBinding[]);
      if (events.length > 0) wakeRelaysAfterCommit(trx);
      return;
    }
    const ids = ordered.map(([accountId]) => accountId);
    parts.push(`locked AS MATERIALIZED (
      SELECT id FROM accounts WHERE id = ANY(?::uuid[]) ORDER BY kind = 'system', id FOR NO KEY UPDATE
    )`);
    bindings.push(
      ids,
      ids,
      ordered.map(([, { balance }]) => balance.toString()),
      ordered.map(([, { available }]) => available.toString()),
      ordered.map(([, { system }]) => system),
      ordered.map(([, { overdraw }]) => overdraw),
      ordered.length,
    );
    const result: { rowCount: number } = await trx.raw(
      `WITH ${parts.join(', ')}
       UPDATE accounts AS a
       SET balance = a.balance + v.balance, available_balance = a.available_balance + v.available, updated_at = now(),
           reversal_shortfall = CASE
             WHEN v.overdraw THEN greatest(0, -(a.available_balance + v.available))
             ELSE least(a.reversal_shortfall, greatest(0, -(a.available_balance + v.available)))
           END
       FROM unnest(?::uuid[], ?::bigint[], ?::bigint[], ?::boolean[], ?::boolean[])
         AS v(id, balance, available, system, overdraw)
       WHERE a.id = v.id AND (a.kind = 'system') = v.system AND (SELECT count(*) FROM locked) = ?`,
      bindings as Knex.RawBinding[],
    );
    if (result.rowCount !== ordered.length) throw new Error('an account vanished during settlement');
    if (events.length > 0) wakeRelaysAfterCommit(trx);
  };

  const finishTransactions: LedgerUnit['finishTransactions'] = async (finishes) => {
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
    await applySettlements(
      ended.map(({ finished, settlement }) => ({ transactionId: finished.id, settlement })),
      ended.flatMap(({ announce, finished }) => announce?.(finished) ?? []),
    );
    return ended.map(({ finished }) => finished);
  };

  const recordFailedAttempts: LedgerUnit['recordFailedAttempts'] = async (attempts) => {
    if (attempts.length === 0) return [];
    const { rows }: { rows: TransactionRow[] } = await trx.raw(
      `UPDATE transactions AS t SET failure_reason = v.reason, updated_at = now()
       FROM unnest(?::uuid[], ?::text[]) AS v(id, reason)
       WHERE t.id = v.id AND t.status = 'pending'
       RETURNING t.*`,
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

  const findAccounts: LedgerUnit['findAccounts'] = async (accountIds) => {
    const { rows }: { rows: AccountRow[] } = await trx.raw(
      `SELECT ${ACCOUNT_COLUMNS.join(', ')} FROM accounts WHERE id = ANY(?::uuid[]) AND ${USER_ACCOUNT}`,
      [accountIds],
    );
    return new Map(rows.map((row) => [row.id, toAccount(row)]));
  };

  return {
    async lockAccount(accountId) {
      const row: AccountRow | undefined = await trx('accounts')
        .where({ id: accountId })
        .whereRaw(USER_ACCOUNT)
        .first(ACCOUNT_COLUMNS)
        .forNoKeyUpdate();
      return row ? toAccount(row) : null;
    },

    async lockReversalsOf(originalTransactionId) {
      const rows: TransactionRow[] = await trx('transactions')
        .where({ original_transaction_id: originalTransactionId, type: 'reversal' })
        .orderBy('id')
        .forUpdate();
      return rows.map(toTransaction);
    },

    async lockRemovedDeposit(depositId) {
      // An advisory lock, not the row's: the tombstone itself never changes.
      await trx.raw('SELECT pg_advisory_xact_lock(hashtextextended(?, 0))', [
        `ledger-removed-deposit:${depositId}`,
      ]);
      return (await findRemovedDeposits(trx, [depositId])).get(depositId) ?? null;
    },

    async bookPlatformLoss(loss) {
      const booked = await insertPlatformLoss(trx, loss);
      if (booked) await applySettlements([{ transactionId: booked.id, settlement: lossOf(booked) }], []);
      return booked;
    },

    async reportRefundedTotal(depositId, refundedTotal, reference) {
      await trx.raw(
        `INSERT INTO refund_reports (deposit_id, refunded_total, reference) VALUES (?, ?, ?)
         ON CONFLICT (deposit_id) DO UPDATE
         SET refunded_total = EXCLUDED.refunded_total, reference = EXCLUDED.reference, reported_at = now()
         WHERE refund_reports.refunded_total < EXCLUDED.refunded_total`,
        [depositId, refundedTotal.toString(), reference],
      );
    },

    async reportedRefundOf(depositId) {
      const row: { refunded_total: string; reference: string } | undefined = await trx('refund_reports')
        .where({ deposit_id: depositId })
        .first('refunded_total', 'reference');
      return row
        ? { refundedTotal: toMinorUnits(BigInt(row.refunded_total)), reference: row.reference }
        : null;
    },

    async holdFunds(accountId, amount) {
      const updated = await trx('accounts')
        .where({ id: accountId })
        .whereRaw(USER_ACCOUNT)
        .where('available_balance', '>=', amount.toString())
        .update({
          available_balance: trx.raw('available_balance - ?', [amount.toString()]),
          updated_at: trx.fn.now(),
        });
      return updated === 1;
    },

    async insertTransaction(transaction) {
      const rows: TransactionRow[] = await trx('transactions')
        .insert({
          id: transaction.id,
          account_id: transaction.accountId,
          user_id: transaction.userId,
          type: transaction.type,
          amount: transaction.amount.toString(),
          currency: transaction.currency,
          fee: transaction.fee.toString(),
          counterparty_account_id: transaction.counterpartyAccountId,
          counterparty_user_id: transaction.counterpartyUserId,
          exchange_rate: transaction.exchangeRate,
          converted_amount: transaction.convertedAmount?.toString() ?? null,
          converted_currency: transaction.convertedCurrency,
          payment_id: transaction.paymentId,
          original_transaction_id: transaction.originalTransactionId ?? null,
          reversal_reason: transaction.reversalReason ?? null,
          reversal_key: transaction.reversalKey ?? null,
          held_amount: transaction.heldAmount?.toString() ?? null,
        })
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

    findAccounts,
    finishTransactions,
    recordFailedAttempts,

    async recallProviderRequest(transactionId) {
      // The relay holds a row locked while it publishes it: wait for that attempt to end (published, or failed
      // and back to unpublished), but no longer than RELAY_WAIT; a relay stuck that long may have handed it out.
      const { rows: setting }: { rows: { value: string }[] } = await trx.raw(
        `SELECT current_setting('lock_timeout') AS value`,
      );
      try {
        return await trx.transaction(async (savepoint) => {
          await savepoint.raw(`SELECT set_config('lock_timeout', ?, true)`, [RELAY_WAIT]);
          const { rows }: { rows: { seq: string }[] } = await savepoint.raw(
            `SELECT seq FROM outbox
             WHERE published_at IS NULL AND event ->> 'type' = 'WithdrawalRequested'
               AND event -> 'data' ->> 'transaction_id' = ?
             FOR UPDATE`,
            [transactionId],
          );
          await savepoint.raw(`SELECT set_config('lock_timeout', ?, true)`, [setting[0]?.value ?? '0']);
          if (rows.length === 0) return false;
          await savepoint('outbox')
            .whereIn(
              'seq',
              rows.map((row) => row.seq),
            )
            .delete();
          return true;
        });
      } catch (error) {
        if ((error as { code?: string }).code === LOCK_NOT_AVAILABLE) return false;
        throw error;
      }
    },

    requestProviderUndo: (transactionIds) => requestProviderUndo(trx, transactionIds),

    async flagForReconciliation(transactionId) {
      const flagged = await trx('transactions')
        .where({ id: transactionId, status: 'pending', type: 'withdrawal' })
        .whereNull('reconciliation_required_at')
        .update({ reconciliation_required_at: trx.fn.now(), updated_at: trx.fn.now() });
      return flagged === 1;
    },

    recordUnmatchedObject: (mismatch, unlessKnown) => recordUnmatchedObject(trx, mismatch, unlessKnown),

    async enqueue(events) {
      await enqueueEvents(trx, events);
    },
  };
}
