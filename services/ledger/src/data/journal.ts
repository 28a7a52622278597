import type { AnyEvent } from '@payments/contracts';
import {
  OUTBOX_INSERT_SQL,
  outboxInsertBindings,
  wakeRelaysAfterCommit,
  type Knex,
} from '@payments/service-kit';
import { accountChangesOf, type Settlement } from '../domain/settlement.js';
import type { SystemAccounts } from './system-accounts.js';

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

/** One transaction's settlement, as the journal books it. */
export interface Booking {
  transactionId: string;
  settlement: Settlement;
}

/**
 * The journal of one database transaction: books settlements (their entries, on user and system accounts) and
 * the balance moves they make, with the events that announce them, in one statement however many there are.
 */
export interface Journal {
  book(bookings: Booking[], events: AnyEvent[]): Promise<void>;
}

export function createJournal(trx: Knex.Transaction, systemAccounts: SystemAccounts): Journal {
  // Journal and balances last, in one statement: the account rows (the contended ones) stay locked only until
  // commit.
  const book = async (settlements: Booking[], events: AnyEvent[]) => {
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
      bindings.push(...outboxInsertBindings(events));
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

  return { book };
}
