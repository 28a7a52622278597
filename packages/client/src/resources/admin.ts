import type { RequestOptions } from '../http-transport.js';
import { pagedList, type PagedList } from '../pagination.js';
import type {
  Account,
  AdminAccountQuery,
  AdminAction,
  AdminActionQuery,
  AdminTransaction,
  AdminTransactionQuery,
  ApiVersion,
  ChargebackExposure,
  ChargebackExposureQuery,
  DeadLetterList,
  DeadLetterQuery,
  DeadLetterQueue,
  DeadLetterReplay,
  DeadLetterReplayRequest,
  OverdrawnAccount,
  OverdrawnReport,
  Overview,
  OverviewQuery,
  Page,
  PageQuery,
  ProviderMismatch,
  ReconciliationDecisionRequest,
  ReconciliationItem,
  ReconciliationQuery,
  ReconciliationRun,
  TransactionTimeline,
} from '../types.js';
import type { ResourceDeps } from './resource-deps.js';
import { adminUsersResource } from './users.js';

/** The operator routes (admins only; anyone else gets 403). */
export function adminResource<V extends ApiVersion>(deps: ResourceDeps) {
  const { transport } = deps;
  const reconciliationPage = async (query: ReconciliationQuery = {}, options?: RequestOptions) =>
    transport.body<Page<ReconciliationItem<V>>>('listReconciliation', { query, options });
  const actionsPage = async (query: AdminActionQuery = {}, options?: RequestOptions) =>
    transport.body<Page<AdminAction>>('listAdminActions', { query, options });
  const accountsPage = async (query: AdminAccountQuery, options?: RequestOptions) =>
    transport.body<Page<Account>>('findAccounts', { query, options });
  const transactionsPage = async (query: AdminTransactionQuery = {}, options?: RequestOptions) =>
    transport.body<Page<AdminTransaction>>('findTransactions', { query, options });
  const overdrawnPage = async (query: PageQuery = {}, options?: RequestOptions) =>
    transport.body<OverdrawnReport>('listOverdrawnAccounts', { query, options });

  return {
    users: adminUsersResource(deps),
    reconciliation: {
      /**
       * What waits for an operator, told apart by `kind`: unconfirmed withdrawals, then the open cases; followed
       * by cursor, so an item settled or added while walking never makes the walk skip or repeat one.
       */
      list: (query: ReconciliationQuery = {}, options?: RequestOptions): PagedList<ReconciliationItem<V>> =>
        pagedList((window) => reconciliationPage({ ...query, ...window }, options), query),
      listPage: reconciliationPage,
      /** The whole list as a CSV report, unpaged. */
      async csv(options?: RequestOptions): Promise<string> {
        return transport.body<string>('listReconciliation', {
          query: { format: 'csv' },
          read: 'text',
          options,
        });
      },
      /** Reconciles with the provider's records now; 409 while a run is under way. */
      async run(options?: RequestOptions): Promise<ReconciliationRun> {
        return transport.body<ReconciliationRun>('runReconciliation', { options });
      },
      async getCase(caseId: string, options?: RequestOptions): Promise<ProviderMismatch> {
        return transport.body<ProviderMismatch>('getReconciliationCase', { params: { id: caseId }, options });
      },
      /**
       * Decides a case (`book`, `refund`, `reverse` or `nothing_owed`) with a reason kept in the trail of admin
       * actions.
       */
      async resolveCase(
        caseId: string,
        decision: ReconciliationDecisionRequest,
        options?: RequestOptions,
      ): Promise<ProviderMismatch> {
        return transport.body<ProviderMismatch>('resolveReconciliationCase', {
          params: { id: caseId },
          body: decision,
          options,
        });
      },
    },
    accounts: {
      /** One user's accounts (`user_id`), as they see them at GET /accounts, oldest first. */
      find: (query: AdminAccountQuery, options?: RequestOptions): PagedList<Account> =>
        pagedList((window) => accountsPage({ ...query, ...window }, options), query),
      findPage: accountsPage,
    },
    transactions: {
      /**
       * Every user's transactions, newest first, narrowed by any of the filters (type, status, account, user,
       * currency, dates, amounts with their currency, reference, metadata, `q` an id's start); every page.
       */
      find: (query: AdminTransactionQuery = {}, options?: RequestOptions): PagedList<AdminTransaction> =>
        pagedList((window) => transactionsPage({ ...query, ...window }, options), query),
      findPage: transactionsPage,
      /** Everything that happened to a transaction, oldest first; `sources` says which parts are missing. */
      async timeline(transactionId: string, options?: RequestOptions): Promise<TransactionTimeline> {
        return transport.body<TransactionTimeline>('getTransactionTimeline', {
          params: { id: transactionId },
          options,
        });
      },
    },
    actions: {
      /** The append-only trail of admin actions, oldest first; `actor` and `owner` narrow it. */
      list: (query: AdminActionQuery = {}, options?: RequestOptions): PagedList<AdminAction> =>
        pagedList((window) => actionsPage({ ...query, ...window }, options), query),
      listPage: actionsPage,
    },
    deadLetters: {
      /** The events a consumer queue gave up on, oldest first, left where they are. */
      async list(
        queue: DeadLetterQueue,
        query: DeadLetterQuery = {},
        options?: RequestOptions,
      ): Promise<DeadLetterList> {
        return transport.body<DeadLetterList>('listDeadLetters', { params: { queue }, query, options });
      },
      /** Moves dead letters back onto their queue (all of them without a `limit`); each applies once. */
      async replay(
        queue: DeadLetterQueue,
        replay: DeadLetterReplayRequest = {},
        options?: RequestOptions,
      ): Promise<DeadLetterReplay> {
        return transport.body<DeadLetterReplay>('replayDeadLetters', {
          params: { queue },
          body: replay,
          options,
        });
      },
    },
    overdrawnAccounts: {
      /**
       * Accounts a refund or lost dispute took below zero, furthest first; a page also reports, per currency, what
       * live users owe and what the platform lost on deleted users' deposits.
       */
      list: (query: PageQuery = {}, options?: RequestOptions): PagedList<OverdrawnAccount> =>
        pagedList((window) => overdrawnPage({ ...query, ...window }, options), query),
      listPage: overdrawnPage,
    },
    overview: {
      /** Activity per bucket over the last `hour` (1-minute buckets) or `day` (15-minute), and the current gauges. */
      async get(query: OverviewQuery = {}, options?: RequestOptions): Promise<Overview> {
        return transport.body<Overview>('getOverview', { query, options });
      },
    },
    chargebackExposure: {
      /** Card deposits inside the dispute window whose money has left: per currency, and users largest first. */
      async get(query: ChargebackExposureQuery = {}, options?: RequestOptions): Promise<ChargebackExposure> {
        return transport.body<ChargebackExposure>('getChargebackExposure', { query, options });
      },
    },
  };
}
