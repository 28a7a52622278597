import type { ProviderEventRecord, TimelineSource, WebhookEventRecord } from '@payments/contracts';
import type { Logger } from '@payments/service-kit';
import type { Page, PageRequest } from '../domain/history.js';
import type { TransactionSearch } from '../domain/transaction-search.js';
import {
  buildTimeline,
  type FormatMoney,
  type LedgerHistory,
  type TimelineEntry,
} from '../domain/timeline.js';
import type { Transaction } from '../domain/transaction.js';
import { refusalsOf } from './errors.js';

/** Where a transaction stands with the provider, as an operator sees it (no client secret). */
export interface ListedProviderPayment {
  provider: string;
  kind: 'payment' | 'payout';
  state: string;
  reference: string | null;
  attempts: number;
  lastError: string | null;
}

export interface ListedTransaction {
  transaction: Transaction;
  providerPayment: ListedProviderPayment | null;
}

export interface AdminTransactionStore {
  search(filter: TransactionSearch, page: PageRequest): Promise<Page<ListedTransaction>>;
  find(transactionId: string): Promise<ListedTransaction | null>;
  history(transactionId: string): Promise<LedgerHistory & { truncated: boolean }>;
}

/** What another service holds about a transaction: its part, or null when it did not answer. */
export interface TimelinePart<T> {
  read(keys: { transactionId: string; references: string[] }): Promise<{ data: T[]; hasMore: boolean }>;
}

export interface TransactionTimeline {
  listed: ListedTransaction;
  entries: TimelineEntry[];
  sources: Record<TimelineSource, 'ok' | 'unavailable'>;
  truncated: boolean;
}

/** Operators' reads of every user's transactions; the caller has been checked to be an admin. */
export interface AdminTransactions {
  search(filter: TransactionSearch, page: PageRequest): Promise<Page<ListedTransaction>>;
  timeline(transactionId: string, format: FormatMoney): Promise<TransactionTimeline>;
}

const refuse = refusalsOf<'RESOURCE_NOT_FOUND'>();

export function createAdminTransactions(deps: {
  store: AdminTransactionStore;
  providerEvents: TimelinePart<ProviderEventRecord>;
  webhookEvents: TimelinePart<WebhookEventRecord>;
  logger: Logger;
}): AdminTransactions {
  const { store, logger } = deps;

  /** A part that does not answer is left out and said to be; the rest of the timeline stands. */
  const partOf = async <T>(
    source: TimelineSource,
    part: TimelinePart<T>,
    keys: { transactionId: string; references: string[] },
  ) => {
    try {
      return { ...(await part.read(keys)), state: 'ok' as const };
    } catch (error) {
      logger.warn(
        { err: error, transaction_id: keys.transactionId, source },
        'a part of a transaction timeline is unavailable',
      );
      return { data: [] as T[], hasMore: false, state: 'unavailable' as const };
    }
  };

  return {
    search: (filter, page) => store.search(filter, page),

    async timeline(transactionId, format) {
      const listed = await store.find(transactionId);
      if (!listed) throw refuse('RESOURCE_NOT_FOUND', 'Transaction not found');
      const history = await store.history(transactionId);
      const references = [
        ...new Set(
          [listed.providerPayment?.reference, ...history.providerSteps.map((step) => step.reference)].filter(
            (reference): reference is string => typeof reference === 'string',
          ),
        ),
      ];
      const keys = { transactionId, references };
      const [providerEvents, webhookEvents] = await Promise.all([
        partOf('webhook-ingest', deps.providerEvents, keys),
        partOf('webhook-delivery', deps.webhookEvents, keys),
      ]);
      return {
        listed,
        entries: buildTimeline(listed.transaction, history, providerEvents.data, webhookEvents.data, format),
        sources: {
          ledger: 'ok',
          'webhook-ingest': providerEvents.state,
          'webhook-delivery': webhookEvents.state,
        },
        truncated: history.truncated || providerEvents.hasMore || webhookEvents.hasMore,
      };
    },
  };
}
