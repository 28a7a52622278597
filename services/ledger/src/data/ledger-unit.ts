import { randomUUID } from 'node:crypto';
import type { AnyEvent, MinorUnits } from '@payments/contracts';
import { enqueueEvents, type Knex } from '@payments/service-kit';
import {
  accountChangesOf,
  closingOf,
  NO_SETTLEMENT,
  releaseOf,
  type Settlement,
} from '../domain/settlement.js';
import type { Account, NewTransaction, TerminalStatus, Transaction } from '../domain/transaction.js';
import {
  ACCOUNT_COLUMNS,
  fromSnapshot,
  toAccount,
  toTransaction,
  transactionSnapshot,
  type AccountRow,
  type TransactionRow,
} from './records.js';
import type { SystemAccounts } from './system-accounts.js';

export interface IdempotencyClaim {
  userId: string;
  key: string;
  fingerprint: string;
  transactionId: string;
}

export type ClaimOutcome =
  { kind: 'claimed' } | { kind: 'existing'; fingerprint: string; transaction: Transaction };

export interface NewAccount {
  id: string;
  userId: string;
  currency: string;
  metadata: Record<string, unknown>;
}

/** How one pending transaction ends. */
export interface Finish {
  transaction: Transaction;
  status: TerminalStatus;
  settlement: Settlement;
  reason?: string;
  /** The events that announce the ending, built from the transaction as it ended. */
  announce?: (finished: Transaction) => AnyEvent[];
}

export interface RemovedUser {
  accounts: number;
  transactions: number;
  canceled: Transaction[];
  /** Balances left on deleted accounts, moved to the unclaimed-funds system account. */
  unclaimed: { accountId: string; currency: string; amount: bigint }[];
}

/** The operations of one database transaction: every change to money goes through here. */
export interface LedgerUnit {
  /** Serialises account creation per user, so the per-user cap holds under concurrency. */
  lockUser(userId: string): Promise<void>;
  countAccounts(userId: string): Promise<number>;
  insertAccount(account: NewAccount): Promise<Account>;
  /** Takes an idempotency key, or finds who took it; a concurrent claimant waits for the first to commit. */
  claimIdempotencyKey(claim: IdempotencyClaim): Promise<ClaimOutcome>;
  recordIdempotentResponse(userId: string, key: string, transaction: Transaction): Promise<void>;
  /** Reads a user account and keeps it from being deleted until commit (balances may still move). */
  shareAccount(accountId: string): Promise<Account | null>;
  /** Moves `amount` from available to held; false when the account has not that much available. */
  holdFunds(accountId: string, amount: MinorUnits): Promise<boolean>;
  insertTransaction(transaction: NewTransaction): Promise<Transaction>;
  /** Locks transactions in id order (the lock order every settlement shares) and reads them. */
  lockTransactions(transactionIds: string[]): Promise<Map<string, Transaction>>;
  /** Reads user accounts without locking them: settlement locks them last, when it changes their balances. */
  findAccounts(accountIds: string[]): Promise<Map<string, Account>>;
  /**
   * Moves pending transactions to their terminal status, records the events they announce, then applies their
   * settlements, all with a fixed number of statements however many there are. Returns the transactions that
   * moved; one that is no longer pending is left out, and nothing of it is applied.
   */
  finishTransactions(finishes: Finish[]): Promise<Transaction[]>;
  removeUser(userId: string, reason: string): Promise<RemovedUser>;
  enqueue(events: AnyEvent[]): Promise<void>;
}

export function createLedgerUnit(trx: Knex.Transaction, systemAccounts: SystemAccounts): LedgerUnit {
  // Journal first, balances last: the account rows (the contended ones) stay locked only until commit.
  const applySettlements = async (settlements: { transactionId: string; settlement: Settlement }[]) => {
    const entries = [];
    const changes = new Map<string, { balance: bigint; available: bigint; system: boolean }>();
    const change = (accountId: string, system: boolean) => {
      const current = changes.get(accountId) ?? { balance: 0n, available: 0n, system };
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
      }
    }
    if (entries.length > 0) await trx('entries').insert(entries);
    await moveBalances(changes);
  };

  /**
   * User accounts in id order, then system accounts in id order: one global lock order, so no deadlocks. The
   * hot system accounts (provider clearing) are locked last, once per database transaction.
   */
  const moveBalances = async (
    changes: Map<string, { balance: bigint; available: bigint; system: boolean }>,
  ) => {
    const ordered = [...changes]
      .filter(([, { balance, available }]) => balance !== 0n || available !== 0n)
      .sort(([a, x], [b, y]) => Number(x.system) - Number(y.system) || (a < b ? -1 : a > b ? 1 : 0));
    if (ordered.length === 0) return;
    if (ordered.length > 1) {
      // The lock the UPDATE below takes anyway (NO KEY UPDATE: it leaves the key share that keeps an account
      // from deletion compatible), only taken first and in order.
      await trx.raw(
        `SELECT 1 FROM accounts WHERE id = ANY(?::uuid[]) ORDER BY kind = 'system', id FOR NO KEY UPDATE`,
        [ordered.map(([accountId]) => accountId)],
      );
    }
    const result: { rowCount: number } = await trx.raw(
      `UPDATE accounts AS a
       SET balance = a.balance + v.balance, available_balance = a.available_balance + v.available, updated_at = now()
       FROM (VALUES ${ordered.map(() => '(?::uuid, ?::bigint, ?::bigint, ?::boolean)').join(', ')})
         AS v(id, balance, available, system)
       WHERE a.id = v.id AND (a.kind = 'system') = v.system`,
      ordered.flatMap(([accountId, { balance, available, system }]) => [
        accountId,
        balance.toString(),
        available.toString(),
        system,
      ]),
    );
    if (result.rowCount !== ordered.length) throw new Error('an account vanished during settlement');
  };

  const finishTransactions: LedgerUnit['finishTransactions'] = async (finishes) => {
    if (finishes.length === 0) return [];
    const ids = new Set(finishes.map(({ transaction }) => transaction.id));
    if (ids.size !== finishes.length) throw new Error('a transaction can end only once per statement');
    const { rows }: { rows: TransactionRow[] } = await trx.raw(
      `UPDATE transactions AS t
       SET status = v.status, failure_reason = v.reason, updated_at = now(),
           completed_at = CASE WHEN v.status = 'completed' THEN now() END
       FROM (VALUES ${finishes.map(() => '(?::uuid, ?::text, ?::text)').join(', ')}) AS v(id, status, reason)
       WHERE t.id = v.id AND t.status = 'pending'
       RETURNING t.*`,
      finishes.flatMap(({ transaction, status, reason }) => [transaction.id, status, reason ?? null]),
    );
    const finishedById = new Map(rows.map((row) => [row.id, toTransaction(row)]));
    const ended = finishes.flatMap((finish) => {
      const finished = finishedById.get(finish.transaction.id);
      return finished ? [{ ...finish, finished }] : [];
    });
    await enqueueEvents(
      trx,
      ended.flatMap(({ announce, finished }) => announce?.(finished) ?? []),
    );
    await applySettlements(
      ended.map(({ finished, settlement }) => ({ transactionId: finished.id, settlement })),
    );
    return ended.map(({ finished }) => finished);
  };

  const findAccounts: LedgerUnit['findAccounts'] = async (accountIds) => {
    const rows = await trx('accounts')
      .whereIn('id', accountIds)
      .where('kind', 'user')
      .select<AccountRow[]>(ACCOUNT_COLUMNS);
    return new Map(rows.map((row) => [row.id, toAccount(row)]));
  };

  return {
    async lockUser(userId) {
      await trx.raw('SELECT pg_advisory_xact_lock(hashtextextended(?, 0))', [`ledger-user:${userId}`]);
    },

    async countAccounts(userId) {
      const row = await trx('accounts')
        .where({ user_id: userId, kind: 'user' })
        .count<{ count: string }[]>('*');
      return Number(row[0]?.count ?? 0);
    },

    async insertAccount(account) {
      const rows: AccountRow[] = await trx('accounts')
        .insert({
          id: account.id,
          user_id: account.userId,
          kind: 'user',
          currency: account.currency,
          metadata: JSON.stringify(account.metadata),
        })
        .returning(ACCOUNT_COLUMNS);
      return toAccount(rows[0] as AccountRow);
    },

    async claimIdempotencyKey(claim) {
      const inserted = await trx('idempotency_keys')
        .insert({
          user_id: claim.userId,
          key: claim.key,
          fingerprint: claim.fingerprint,
          transaction_id: claim.transactionId,
        })
        .onConflict(['user_id', 'key'])
        .ignore()
        .returning('key');
      if (inserted.length > 0) return { kind: 'claimed' };
      const existing: { fingerprint: string; response: Record<string, unknown> } = await trx(
        'idempotency_keys',
      )
        .where({ user_id: claim.userId, key: claim.key })
        .first('fingerprint', 'response');
      return {
        kind: 'existing',
        fingerprint: existing.fingerprint,
        transaction: fromSnapshot(existing.response),
      };
    },

    async recordIdempotentResponse(userId, key, transaction) {
      await trx('idempotency_keys')
        .where({ user_id: userId, key })
        .update({ response: JSON.stringify(transactionSnapshot(transaction)) });
    },

    async shareAccount(accountId) {
      const row: AccountRow | undefined = await trx('accounts')
        .where({ id: accountId, kind: 'user' })
        .first(ACCOUNT_COLUMNS)
        .forKeyShare();
      return row ? toAccount(row) : null;
    },

    async holdFunds(accountId, amount) {
      const updated = await trx('accounts')
        .where({ id: accountId, kind: 'user' })
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
        })
        .returning('*');
      return toTransaction(rows[0] as TransactionRow);
    },

    async lockTransactions(transactionIds) {
      const rows: TransactionRow[] = await trx('transactions')
        .whereIn('id', [...new Set(transactionIds)])
        .orderBy('id')
        .forUpdate();
      return new Map(rows.map((row) => [row.id, toTransaction(row)]));
    },

    findAccounts,
    finishTransactions,

    async removeUser(userId, reason) {
      // Transactions before accounts: the order every settlement takes its locks in.
      const pendingRows: TransactionRow[] = await trx('transactions')
        .where({ user_id: userId, status: 'pending' })
        .orderBy('id')
        .forUpdate();
      const accounts = await trx('accounts')
        .where({ user_id: userId, kind: 'user' })
        .orderBy('id')
        .forUpdate()
        .select<AccountRow[]>(ACCOUNT_COLUMNS);
      const canceled = await finishTransactions(
        pendingRows.map(toTransaction).map((pending) => ({
          transaction: pending,
          status: 'canceled' as const,
          settlement: accounts.some((account) => account.id === pending.accountId)
            ? releaseOf(pending)
            : NO_SETTLEMENT,
          reason,
        })),
      );
      const current = await trx('accounts')
        .where({ user_id: userId, kind: 'user' })
        .whereNot('balance', 0)
        .select<AccountRow[]>(ACCOUNT_COLUMNS);
      const closing = current.map(toAccount);
      await applySettlements(
        closing.map((account) => ({ transactionId: randomUUID(), settlement: closingOf(account) })),
      );
      const unclaimed: RemovedUser['unclaimed'] = closing.map((account) => ({
        accountId: account.id,
        currency: account.currency,
        amount: account.balance,
      }));
      // A completed transfer with another user is part of their history too: it stays, without this user.
      const shared = (query: Knex.QueryBuilder) =>
        query
          .where({ type: 'transfer', status: 'completed' })
          .whereNotNull('counterparty_user_id')
          .whereNot('counterparty_user_id', userId);
      const transactions = await trx('transactions').where({ user_id: userId }).whereNot(shared).delete();
      await trx('transactions').where({ user_id: userId }).update({ user_id: null });
      await trx('transactions')
        .where({ counterparty_user_id: userId })
        .update({ counterparty_user_id: null });
      await trx('idempotency_keys').where({ user_id: userId }).delete();
      const removed = await trx('accounts').where({ user_id: userId, kind: 'user' }).delete();
      return { accounts: removed, transactions, canceled, unclaimed };
    },

    async enqueue(events) {
      await enqueueEvents(trx, events);
    },
  };
}
