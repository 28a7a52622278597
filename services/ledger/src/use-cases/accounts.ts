import { randomUUID } from 'node:crypto';
import type { AnyEvent } from '@payments/contracts';
import type { Logger, OutboxRelay } from '@payments/service-kit';
import type { Page, PageRequest } from '../domain/history.js';
import type { CurrencyUnit } from '../domain/money.js';
import type { Account } from '../domain/transaction.js';
import { removalObstacles, removalRefused, type UserHoldings } from '../domain/user-removal.js';
import type { Viewer } from '../domain/viewer.js';
import { accountOpenedEvent } from '../events/ledger-events.js';
import type { CurrencyDirectory } from './currencies.js';
import { refusalsOf } from './errors.js';
import type { OncePerEvent, UnitOfWork } from './unit-of-work.js';

/** What opening, reading and removing accounts may refuse with. */
export type AccountError =
  'INVALID_CURRENCY' | 'BUSINESS_RULE_VIOLATION' | 'AUTH_REQUIRED' | 'RESOURCE_NOT_FOUND' | 'ACCESS_DENIED';

export interface OpenAccount {
  userId: string;
  /** As the client gave it; any case, surrounding spaces allowed. */
  currency: string;
  metadata: Record<string, unknown>;
  correlationId: string;
}

/** A user's removal: done, with what it removed. */
export interface RemovedUser {
  accounts: number;
  transactions: number;
}

/** User accounts: opened within the per-user cap, read by their owner (or an admin), removed with their user. */
export interface Accounts {
  /** Opens an account in a supported currency; announced by AccountOpened. */
  open(request: OpenAccount): Promise<{ account: Account; currency: CurrencyUnit }>;
  list(userId: string, page: PageRequest): Promise<Page<Account>>;
  /** An account the viewer may read: their own, or any for an admin. */
  readable(accountId: string, viewer: Viewer): Promise<Account>;
  /** Any user account (the other services' internal reads). */
  find(accountId: string): Promise<Account>;
  /** Identity's deletion asks: removed, or refused (422) with why, nothing changed. */
  removeUser(userId: string, log: Pick<Logger, 'info'>): Promise<RemovedUser>;
  /**
   * UserDeleted: identity deletes a user only after the ledger removed them, so this finds nothing to do. Should
   * it find money or pending work, it leaves them for an operator: it never cancels a withdrawal the provider may be
   * paying out, nor moves money anywhere on its own.
   */
  removeDeletedUser(
    event: { eventId: string; userId: string },
    log: Pick<Logger, 'info' | 'error'>,
  ): Promise<void>;
}

export interface NewAccount {
  id: string;
  userId: string;
  currency: string;
  metadata: Record<string, unknown>;
}

export interface AccountUnit {
  /** Serialises account creation and removal per user, so the per-user cap holds under concurrency. */
  lockUser(userId: string): Promise<void>;
  /** Whether the ledger removed this user (no account may be opened for them any more). */
  isRemovedUser(userId: string): Promise<boolean>;
  countAccounts(userId: string): Promise<number>;
  insertAccount(account: NewAccount): Promise<Account>;
  enqueue(events: AnyEvent[]): Promise<void>;
  /**
   * What the user holds, read under the locks every money path takes (the user's, then their pending transactions,
   * then their accounts), so nothing can be accepted on their accounts until commit.
   */
  lockHoldings(userId: string): Promise<UserHoldings>;
  /** Removes the user's accounts and transactions, once lockHoldings found nothing in the way. */
  removeUser(userId: string): Promise<RemovedUser>;
}

export interface AccountStore extends UnitOfWork<AccountUnit>, OncePerEvent<AccountUnit> {
  findUserAccount(accountId: string): Promise<Account | null>;
  listUserAccounts(userId: string, page: PageRequest): Promise<Page<Account>>;
}

const refuse = refusalsOf<AccountError>();

export function createAccounts({
  store,
  currencies,
  outbox,
  maxAccountsPerUser,
}: {
  store: AccountStore;
  currencies: CurrencyDirectory;
  outbox: Pick<OutboxRelay, 'wake'>;
  maxAccountsPerUser: number;
}): Accounts {
  /** Accounts open only in a supported currency; the refusal lists the ones that are. */
  const supportedCurrency = async (given: string) => {
    const code = given.trim().toUpperCase();
    const currency = await currencies.find(code);
    if (currency?.supported) return currency;
    const supported = (await currencies.supported()).map((c) => c.code).sort();
    throw refuse(
      'INVALID_CURRENCY',
      `${code || 'The currency'} is not a supported currency. Supported currencies: ${supported.join(', ')}`,
      [{ field: 'currency', message: `must be one of ${supported.join(', ')}` }],
    );
  };

  /** Decides a removal under its locks: the user removed, or the reasons they cannot be, nothing changed. */
  const removeIfClear = async (unit: AccountUnit, userId: string) => {
    const obstacles = removalObstacles(await unit.lockHoldings(userId));
    if (obstacles.length > 0) return { removed: false as const, obstacles };
    return { removed: true as const, ...(await unit.removeUser(userId)) };
  };

  return {
    async open({ userId, currency: given, metadata, correlationId }) {
      const currency = await supportedCurrency(given);
      const account = await store.inTransaction(async (unit) => {
        await unit.lockUser(userId);
        // Once the ledger removed a user, their token is about to be revoked: nothing may land on a new account.
        if (await unit.isRemovedUser(userId))
          throw refuse('AUTH_REQUIRED', 'The user of this token was deleted');
        if ((await unit.countAccounts(userId)) >= maxAccountsPerUser) {
          throw refuse('BUSINESS_RULE_VIOLATION', `A user may hold at most ${maxAccountsPerUser} accounts`);
        }
        const opened = await unit.insertAccount({
          id: randomUUID(),
          userId,
          currency: currency.code,
          metadata,
        });
        await unit.enqueue([accountOpenedEvent(opened, correlationId)]);
        return opened;
      });
      outbox.wake();
      return { account, currency };
    },

    list: (userId, page) => store.listUserAccounts(userId, page),

    async readable(accountId, viewer) {
      const account = await store.findUserAccount(accountId);
      if (!account) throw refuse('RESOURCE_NOT_FOUND', 'Account not found');
      if (account.userId !== viewer.userId && viewer.role !== 'admin')
        throw refuse('ACCESS_DENIED', 'This account belongs to another user');
      return account;
    },

    async find(accountId) {
      const account = await store.findUserAccount(accountId);
      if (!account) throw refuse('RESOURCE_NOT_FOUND', 'Account not found');
      return account;
    },

    async removeUser(userId, log) {
      const removal = await store.inTransaction((unit) => removeIfClear(unit, userId));
      if (!removal.removed) throw removalRefused(removal.obstacles);
      const removed = { accounts: removal.accounts, transactions: removal.transactions };
      log.info({ user_id: userId, ...removed }, 'removed a user from the ledger');
      return removed;
    },

    async removeDeletedUser({ eventId, userId }, log) {
      await store.processEventsOnce([eventId], async (unit) => {
        const removal = await removeIfClear(unit, userId);
        if (!removal.removed) {
          log.error(
            { user_id: userId, obstacles: removal.obstacles },
            'a deleted user still holds money or pending transactions in the ledger; left for an operator',
          );
        } else if (removal.accounts > 0 || removal.transactions > 0) {
          log.info(
            { user_id: userId, accounts: removal.accounts, transactions: removal.transactions },
            'removed what was left of a deleted user',
          );
        }
      });
    },
  };
}
