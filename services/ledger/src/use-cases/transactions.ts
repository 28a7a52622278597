import type { HistoryFilter, Page, PageRequest } from '../domain/history.js';
import { canRead, type Transaction } from '../domain/transaction.js';
import type { Viewer } from '../domain/viewer.js';
import type { Accounts } from './accounts.js';
import { refusalsOf } from './errors.js';
import type { ProviderPayment } from './provider-requests.js';

/** What reading transactions may refuse with. */
export type TransactionError = 'RESOURCE_NOT_FOUND' | 'ACCESS_DENIED';

/** Whose history: everything a user sent or received, or everything that moved one account. */
export type HistoryScope = { userId: string } | { accountId: string };

/** A transaction as its reader sees it, with what the provider made for it. */
export interface ShownTransaction {
  transaction: Transaction;
  providerPayment: ProviderPayment | null;
  /** The payment's client secret lets whoever holds it pay: its owner sees it, and only while it is pending. */
  showSecret: boolean;
}

/** Transactions and their histories, read by whoever may (domain/transaction.ts, canRead). */
export interface Transactions {
  show(transactionId: string, viewer: Viewer): Promise<ShownTransaction>;
  /** The viewer's transactions, or with `accountId` one of their accounts' (an admin: any account's). */
  history(
    request: { viewer: Viewer; accountId: string | null },
    filter: HistoryFilter,
    page: PageRequest,
  ): Promise<Page<Transaction>>;
  /** Any transaction (the other services' internal reads). */
  find(transactionId: string): Promise<Transaction>;
  /** A deposit or withdrawal, for webhook-ingest to confirm for exactly its amount and currency. */
  findPayment(transactionId: string): Promise<Transaction>;
}

export interface TransactionStore {
  findTransaction(transactionId: string): Promise<Transaction | null>;
  listTransactions(scope: HistoryScope, filter: HistoryFilter, page: PageRequest): Promise<Page<Transaction>>;
  findProviderPayment(transactionId: string): Promise<ProviderPayment | null>;
}

const refuse = refusalsOf<TransactionError>();

export function createTransactions({
  store,
  accounts,
}: {
  store: TransactionStore;
  accounts: Pick<Accounts, 'readable'>;
}): Transactions {
  const find = async (transactionId: string) => {
    const transaction = await store.findTransaction(transactionId);
    if (!transaction) throw refuse('RESOURCE_NOT_FOUND', 'Transaction not found');
    return transaction;
  };

  return {
    async show(transactionId, viewer) {
      const transaction = await find(transactionId);
      if (!canRead(transaction, viewer))
        throw refuse('ACCESS_DENIED', 'This transaction belongs to another user');
      const providerPayment = await store.findProviderPayment(transaction.id);
      const showSecret = transaction.userId === viewer.userId && transaction.status === 'pending';
      return { transaction, providerPayment, showSecret };
    },

    async history({ viewer, accountId }, filter, page) {
      const scope = accountId
        ? { accountId: (await accounts.readable(accountId, viewer)).id }
        : { userId: viewer.userId };
      return store.listTransactions(scope, filter, page);
    },

    find,

    async findPayment(transactionId) {
      const transaction = await store.findTransaction(transactionId);
      const payment = transaction?.type === 'deposit' || transaction?.type === 'withdrawal';
      if (!transaction || !payment) throw refuse('RESOURCE_NOT_FOUND', 'Payment not found');
      return transaction;
    },
  };
}
