import { toMinorUnits } from '@payments/contracts';
import { readByCursor, type Knex } from '@payments/service-kit';
import type { Page, PageRequest } from '../domain/history.js';
import type { TransactionSearch } from '../domain/transaction-search.js';
import type { LedgerHistory } from '../domain/timeline.js';
import type { AdminTransactionStore, ListedTransaction } from '../use-cases/admin-transactions.js';
import { toTransaction, withRefundReasons, type TransactionRow } from './records.js';

/** `pagination.total` counts this many matches at most: a count never walks the whole table. */
export const SEARCH_COUNT_CAP = 10_000;
/** Each part of a timeline keeps its newest this many rows. */
export const TIMELINE_PART_LIMIT = 200;

const NEWEST_FIRST = [
  { column: 'created_at', order: 'desc' as const },
  { column: 'id', order: 'desc' as const },
];

interface ListedRow extends TransactionRow {
  pp_provider: string | null;
  pp_kind: 'payment' | 'payout' | null;
  pp_state: string | null;
  pp_reference: string | null;
  pp_attempts: number | null;
  pp_last_error: string | null;
}

/** LIKE's own characters in a prefix are plain characters. */
const likePrefix = (prefix: string) => `${prefix.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;

function searched(knex: Knex, search: TransactionSearch): Knex.QueryBuilder {
  const query = knex('transactions');
  if (search.type) query.where('transactions.type', search.type);
  if (search.status) query.where('transactions.status', search.status);
  if (search.accountId) query.where('transactions.account_id', search.accountId);
  if (search.userId) query.where('transactions.user_id', search.userId);
  if (search.currency) query.where('transactions.currency', search.currency);
  if (search.from) query.where('transactions.created_at', '>=', search.from);
  if (search.through) query.where('transactions.created_at', '<=', search.through);
  if (search.amountMin !== undefined) query.where('transactions.amount', '>=', search.amountMin.toString());
  if (search.amountMax !== undefined) query.where('transactions.amount', '<=', search.amountMax.toString());
  if (search.reference !== undefined) query.where('transactions.reference', search.reference);
  if (search.metadata) query.whereRaw('transactions.metadata @> ?::jsonb', [JSON.stringify(search.metadata)]);
  const { idRange, referencePrefix } = search;
  if (idRange || referencePrefix !== undefined) {
    query.where((q) => {
      if (idRange) q.orWhereBetween('transactions.id', [idRange.low, idRange.high]);
      if (referencePrefix !== undefined) {
        q.orWhereIn(
          'transactions.id',
          knex('provider_payments')
            .select('transaction_id')
            .whereRaw(`reference LIKE ? ESCAPE '\\'`, [likePrefix(referencePrefix)]),
        );
      }
    });
  }
  return query;
}

const LISTED_COLUMNS = [
  'transactions.*',
  'pp.provider AS pp_provider',
  'pp.kind AS pp_kind',
  'pp.state AS pp_state',
  'pp.reference AS pp_reference',
  'pp.attempts AS pp_attempts',
  'pp.last_error AS pp_last_error',
];

async function toListed(knex: Knex, rows: ListedRow[]): Promise<ListedTransaction[]> {
  const transactions = await withRefundReasons(knex, rows.map(toTransaction));
  return transactions.map((transaction, i) => {
    const row = rows[i] as ListedRow;
    return {
      transaction,
      providerPayment:
        row.pp_kind === null
          ? null
          : {
              provider: row.pp_provider ?? '',
              kind: row.pp_kind,
              state: row.pp_state ?? 'requested',
              reference: row.pp_reference,
              attempts: row.pp_attempts ?? 0,
              lastError: row.pp_last_error,
            },
    };
  });
}

async function search(
  knex: Knex,
  filter: TransactionSearch,
  page: PageRequest,
): Promise<Page<ListedTransaction>> {
  const withProvider = () =>
    searched(knex, filter).leftJoin('provider_payments AS pp', 'pp.transaction_id', 'transactions.id');
  const counted = knex
    .count<{ count: string }[]>('*')
    .from(searched(knex, filter).select(knex.raw('1')).limit(SEARCH_COUNT_CAP).as('matches'));
  if (page.cursor) {
    const [{ rows, hasMore }, [count]] = await Promise.all([
      readByCursor<ListedRow>(
        knex,
        withProvider,
        LISTED_COLUMNS,
        { ...page, cursor: page.cursor },
        {
          keys: ['transactions.created_at', 'transactions.id'],
          direction: 'desc',
          idColumn: 'transactions.id',
        },
      ),
      counted,
    ]);
    return { data: await toListed(knex, rows), total: Number(count?.count ?? 0), hasMore };
  }
  const [rows, [count]] = await Promise.all([
    withProvider()
      .select(LISTED_COLUMNS)
      .orderBy(NEWEST_FIRST.map(({ column, order }) => ({ column: `transactions.${column}`, order })))
      .limit(page.limit)
      .offset(page.offset) as Promise<ListedRow[]>,
    counted,
  ]);
  return { data: await toListed(knex, rows), total: Number(count?.count ?? 0) };
}

async function history(knex: Knex, transactionId: string): Promise<LedgerHistory & { truncated: boolean }> {
  const newest = <T>(query: Knex.QueryBuilder) =>
    query.orderBy('id', 'desc').limit(TIMELINE_PART_LIMIT + 1) as Promise<T[]>;
  const [provider, steps, statuses, postings, reversals] = await Promise.all([
    knex('provider_payments').where({ transaction_id: transactionId }).first('provider') as Promise<
      { provider: string } | undefined
    >,
    newest<{
      at: Date;
      kind: 'payment' | 'payout';
      state: string;
      attempts: number;
      reference: string | null;
      last_error: string | null;
      cancel_requested: boolean;
    }>(knex('provider_request_log').where({ transaction_id: transactionId }).select('*')),
    newest<{ at: Date; status: string; failure_reason: string | null }>(
      knex('transaction_status_log').where({ transaction_id: transactionId }).select('*'),
    ),
    newest<{
      created_at: Date;
      account_id: string;
      amount: string;
      currency: string;
      user_id: string | null;
      system_code: string | null;
    }>(
      knex('entries')
        .leftJoin('accounts', 'accounts.id', 'entries.account_id')
        .where('entries.transaction_id', transactionId)
        .select(
          'entries.id',
          'entries.created_at',
          'entries.account_id',
          'entries.amount',
          'entries.currency',
          'accounts.user_id',
          'accounts.system_code',
        )
        .clearOrder()
        .orderBy('entries.id', 'desc')
        .limit(TIMELINE_PART_LIMIT + 1),
    ),
    knex('transactions')
      .where({ original_transaction_id: transactionId })
      .orderBy('created_at', 'desc')
      .limit(TIMELINE_PART_LIMIT + 1) as Promise<TransactionRow[]>,
  ]);
  const kept = <T>(rows: T[]) => rows.slice(0, TIMELINE_PART_LIMIT).reverse();
  return {
    provider: provider?.provider ?? null,
    providerSteps: kept(steps).map((row) => ({
      at: row.at,
      kind: row.kind,
      state: row.state,
      attempts: row.attempts,
      reference: row.reference,
      lastError: row.last_error,
      cancelRequested: row.cancel_requested,
    })),
    statusSteps: kept(statuses).map((row) => ({
      at: row.at,
      status: row.status,
      failureReason: row.failure_reason,
    })),
    postings: kept(postings).map((row) => ({
      at: row.created_at,
      accountId: row.account_id,
      userId: row.user_id,
      systemCode: row.system_code,
      amount: toMinorUnits(row.amount),
      currency: row.currency.trim(),
    })),
    reversals: await withRefundReasons(knex, kept(reversals).map(toTransaction)),
    truncated: [steps, statuses, postings, reversals].some((rows) => rows.length > TIMELINE_PART_LIMIT),
  };
}

export function createAdminTransactionRepository(knex: Knex): AdminTransactionStore {
  return {
    search: (filter, page) => search(knex, filter, page),
    async find(transactionId) {
      const [row] = (await searched(knex, {})
        .leftJoin('provider_payments AS pp', 'pp.transaction_id', 'transactions.id')
        .where('transactions.id', transactionId)
        .select(LISTED_COLUMNS)) as ListedRow[];
      return row ? ((await toListed(knex, [row]))[0] ?? null) : null;
    },
    history: (transactionId) => history(knex, transactionId),
  };
}
