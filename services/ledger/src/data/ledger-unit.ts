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
  lockTransaction(transactionId: string): Promise<Transaction | null>;
  /** Reads user accounts without locking them: settlement locks them last, when it changes their balances. */
  findAccounts(accountIds: string[]): Promise<Map<string, Account>>;
  /**
   * Moves a pending transaction to a terminal status, records the events it announces, then applies its
   * settlement. Null, and nothing applied, when the transaction is no longer pending.
   */
  finishTransaction(
    transaction: Transaction,
    status: TerminalStatus,
    settlement: Settlement,
    options?: { reason?: string; announce?: (finished: Transaction) => AnyEvent[] },
  ): Promise<Transaction | null>;
  removeUser(userId: string, reason: string): Promise<RemovedUser>;
  enqueue(events: AnyEvent[]): Promise<void>;
}

export function createLedgerUnit(trx: Knex.Transaction, systemAccounts: SystemAccounts): LedgerUnit {
  // Journal first, balances last: the account rows (the contended ones) stay locked only until commit.
  const applySettlement = async (transactionId: string, settlement: Settlement) => {
    const systemTotals = new Map<string, bigint>();
    const entries = [];
    for (const leg of settlement.legs) {
      const accountId =
        leg.target.kind === 'account'
          ? leg.target.accountId
          : await systemAccounts.idOf(trx, leg.target.code, leg.currency);
      if (leg.target.kind === 'system') {
        systemTotals.set(accountId, (systemTotals.get(accountId) ?? 0n) + leg.amount);
      }
      entries.push({
        transaction_id: transactionId,
        account_id: accountId,
        amount: leg.amount.toString(),
        currency: leg.currency,
      });
    }
    if (entries.length > 0) await trx('entries').insert(entries);
    // User accounts in id order, then system accounts in id order: one global lock order, so no deadlocks.
    for (const change of accountChangesOf(settlement)) {
      const updated = await trx('accounts')
        .where({ id: change.accountId, kind: 'user' })
        .update({
          balance: trx.raw('balance + ?', [change.balance.toString()]),
          available_balance: trx.raw('available_balance + ?', [change.available.toString()]),
          updated_at: trx.fn.now(),
        });
      if (updated !== 1) throw new Error(`account ${change.accountId} vanished during settlement`);
    }
    for (const [accountId, amount] of [...systemTotals].sort(([a], [b]) => (a < b ? -1 : 1))) {
      await trx('accounts')
        .where({ id: accountId, kind: 'system' })
        .update({
          balance: trx.raw('balance + ?', [amount.toString()]),
          available_balance: trx.raw('available_balance + ?', [amount.toString()]),
          updated_at: trx.fn.now(),
        });
    }
  };

  const finishTransaction: LedgerUnit['finishTransaction'] = async (
    transaction,
    status,
    settlement,
    options = {},
  ) => {
    const rows: TransactionRow[] = await trx('transactions')
      .where({ id: transaction.id, status: 'pending' })
      .update({
        status,
        failure_reason: options.reason ?? null,
        updated_at: trx.fn.now(),
        completed_at: status === 'completed' ? trx.fn.now() : null,
      })
      .returning('*');
    const row = rows[0];
    if (!row) return null;
    const finished = toTransaction(row);
    if (options.announce) await enqueueEvents(trx, options.announce(finished));
    await applySettlement(transaction.id, settlement);
    return finished;
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

    async lockTransaction(transactionId) {
      const row: TransactionRow | undefined = await trx('transactions')
        .where({ id: transactionId })
        .first()
        .forUpdate();
      return row ? toTransaction(row) : null;
    },

    findAccounts,
    finishTransaction,

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
      const canceled: Transaction[] = [];
      for (const row of pendingRows) {
        const pending = toTransaction(row);
        const owned = accounts.some((account) => account.id === pending.accountId);
        const settlement = owned ? releaseOf(pending) : NO_SETTLEMENT;
        const done = await finishTransaction(pending, 'canceled', settlement, { reason });
        if (done) canceled.push(done);
      }
      const unclaimed: RemovedUser['unclaimed'] = [];
      const current = await trx('accounts')
        .where({ user_id: userId, kind: 'user' })
        .whereNot('balance', 0)
        .select<AccountRow[]>(ACCOUNT_COLUMNS);
      for (const account of current.map(toAccount)) {
        await applySettlement(randomUUID(), closingOf(account));
        unclaimed.push({ accountId: account.id, currency: account.currency, amount: account.balance });
      }
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
