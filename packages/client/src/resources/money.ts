import { randomUUID } from '../runtime.js';
import { RequestTimeoutError } from '../errors.js';
import { sleep, type RequestOptions } from '../http-transport.js';
import { pagedList, type PagedList } from '../pagination.js';
import type {
  ApiVersion,
  DepositRequest,
  HistoryQuery,
  MoneyRequest,
  Page,
  RefundRequest,
  Transaction,
  TransferRequest,
} from '../types.js';
import type { ResourceDeps } from './resource-deps.js';

export interface MoneyOptions extends RequestOptions {
  /**
   * The key the server deduplicates this operation on: the same key with the same body replays the first answer
   * (another body is a 409). Generated (a random UUID) when left out; every retry of the call reuses it, so a lost
   * answer never moves money twice. Pass your own to make a retry of your own safe too.
   */
  idempotencyKey?: string;
}

/** Deposits, withdrawals and transfers: accepted at once (202) as a pending transaction. */
export function moneyResource<V extends ApiVersion>({ transport }: ResourceDeps) {
  const move =
    <Body extends MoneyRequest>(operation: 'deposit' | 'withdraw' | 'transfer') =>
    async (accountId: string, body: Body, options: MoneyOptions = {}): Promise<Transaction<V>> => {
      const { idempotencyKey = randomUUID(), ...rest } = options;
      return transport.body<Transaction<V>>(operation, {
        params: { id: accountId },
        body,
        idempotencyKey,
        options: rest,
      });
    };
  return {
    /**
     * Pending until the payment provider confirms it; see `transactions.waitUntilSettled`. With `payment_method`
     * the provider is asked to pay it with that method at once; a decline leaves it pending with `failure_reason`.
     */
    deposit: move<DepositRequest>('deposit'),
    /** Holds amount + fee now; debited when the provider pays out. */
    withdraw: move<MoneyRequest>('withdraw'),
    /** To any account; converted at the rate fixed now when the currencies differ. */
    transfer: move<TransferRequest>('transfer'),
  };
}

export interface WaitOptions extends RequestOptions {
  /** Between reads; default 500 ms. */
  intervalMs?: number;
  /** How long to wait in all; default 60 s. */
  waitMs?: number;
}

export function transactionsResource<V extends ApiVersion>({ transport }: ResourceDeps) {
  const listPage = async (query: HistoryQuery = {}, options?: RequestOptions) =>
    transport.body<Page<Transaction<V>>>('listTransactions', { query, options });
  const historyPage = async (accountId: string, query: HistoryQuery = {}, options?: RequestOptions) =>
    transport.body<Page<Transaction<V>>>('listAccountTransactions', {
      params: { id: accountId },
      query,
      options,
    });
  const get = async (transactionId: string, options?: RequestOptions): Promise<Transaction<V>> =>
    transport.body<Transaction<V>>('getTransaction', { params: { id: transactionId }, options });

  return {
    /** Your transactions, newest first, every page; filter by account, type, status and day. */
    list: (query: HistoryQuery = {}, options?: RequestOptions): PagedList<Transaction<V>> =>
      pagedList((window) => listPage({ ...query, ...window }, options), query),
    listPage,
    /** One account's history, newest first, every page. */
    history: (
      accountId: string,
      query: HistoryQuery = {},
      options?: RequestOptions,
    ): PagedList<Transaction<V>> =>
      pagedList((window) => historyPage(accountId, { ...query, ...window }, options), query),
    historyPage,
    /** A transaction with its status (and, for a pending deposit, how to pay it: `provider_payment`). */
    get,
    /**
     * Refunds a completed card deposit through the payment provider: all that is left of it, or `amount`. Answers
     * the refund, a `reversal` of the deposit, pending (its net amount held) until the provider confirms it; see
     * `waitUntilSettled`. Safe to retry, as the money operations are (`idempotencyKey`).
     */
    async refund(
      depositId: string,
      body: RefundRequest = {},
      options: MoneyOptions = {},
    ): Promise<Transaction<V>> {
      const { idempotencyKey = randomUUID(), ...rest } = options;
      return transport.body<Transaction<V>>('refundTransaction', {
        params: { id: depositId },
        body,
        idempotencyKey,
        options: rest,
      });
    },
    /** Reads the transaction until it is no longer `pending` (completed, failed or canceled). */
    async waitUntilSettled(transactionId: string, options: WaitOptions = {}): Promise<Transaction<V>> {
      const { intervalMs = 500, waitMs = 60_000, ...rest } = options;
      const deadline = Date.now() + waitMs;
      for (;;) {
        const transaction = await get(transactionId, rest);
        if (transaction.status !== 'pending') return transaction;
        if (Date.now() + intervalMs > deadline) {
          throw new RequestTimeoutError(`Transaction ${transactionId} was still pending after ${waitMs} ms`);
        }
        await sleep(intervalMs, rest.signal);
      }
    },
  };
}
