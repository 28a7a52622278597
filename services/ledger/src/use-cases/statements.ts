import type { StatementEntry, StatementPeriod } from '../domain/statement.js';
import type { Account } from '../domain/transaction.js';
import type { Viewer } from '../domain/viewer.js';
import type { Accounts } from './accounts.js';
import { refusalsOf } from './errors.js';

/** What reading statements and balances may refuse with. */
export type StatementError = 'RESOURCE_NOT_FOUND' | 'ACCESS_DENIED' | 'VALIDATION_ERROR';

export interface StatementPageRequest {
  /** The id of the last entry of the previous page. */
  startingAfter?: string;
  limit: number;
}

/** Balances in minor units at the period's edges, and one page of its entries, oldest first. */
export interface StatementSlice {
  opening: bigint;
  closing: bigint;
  /** The balance before the page's first entry. */
  pageStart: bigint;
  entries: StatementEntry[];
  hasMore: boolean;
}

/** An account's statements and balances, read by its owner or an admin. */
export interface Statements {
  /** A page of the account's statement for the period; refused when the page cursor is not one of its entries. */
  statement(request: {
    viewer: Viewer;
    accountId: string;
    period: StatementPeriod;
    page: StatementPageRequest;
  }): Promise<{ account: Account; slice: StatementSlice }>;
  /** The account as it stands, and with `at` its booked balance at that past moment. */
  balance(request: {
    viewer: Viewer;
    accountId: string;
    at: Date | null;
  }): Promise<{ account: Account; balanceAt: bigint | null }>;
}

export interface StatementStore {
  /** One page of an account's statement, from one snapshot; null when the page cursor is not in the period. */
  readStatement(
    accountId: string,
    period: StatementPeriod,
    page: StatementPageRequest,
  ): Promise<StatementSlice | null>;
  /** The account's balance at a past moment, from its entries. */
  balanceAt(accountId: string, at: Date): Promise<bigint>;
}

const refuse = refusalsOf<StatementError>();

export function createStatements({
  store,
  accounts,
}: {
  store: StatementStore;
  accounts: Pick<Accounts, 'readable'>;
}): Statements {
  return {
    async statement({ viewer, accountId, period, page }) {
      const account = await accounts.readable(accountId, viewer);
      const slice = await store.readStatement(account.id, period, page);
      if (!slice) {
        throw refuse('VALIDATION_ERROR', 'Invalid query parameters', [
          { field: 'starting_after', message: 'must be the id of an entry of this statement' },
        ]);
      }
      return { account, slice };
    },
    async balance({ viewer, accountId, at }) {
      const account = await accounts.readable(accountId, viewer);
      return { account, balanceAt: at && (await store.balanceAt(account.id, at)) };
    },
  };
}
