import {
  keysetCondition,
  readingDirection,
  turned,
  unknownCursor,
  type Knex,
  type KeysetOrder,
} from '@payments/service-kit';
import type { HistoryFilter, Page, PageRequest } from '../domain/history.js';
import type { Transaction } from '../domain/transaction.js';
import type { HistoryScope, TransactionStore } from '../use-cases/transactions.js';
import { countHistory, type HistoryOwner } from './history-counts.js';
import { findProviderPayment } from './provider-payment-repository.js';
import { toTransaction, withRefundReasons, type TransactionRow } from './records.js';

/**
 * Newest first. A transfer shows in the receiver's history once it has completed. Sent and received rows are
 * read as two index-ordered branches, each cut at offset + limit, so a page stays cheap for a busy account.
 * The total comes from the history counters, or, for a date range they cannot answer, from counting the rows.
 * By cursor, each branch is read from the cursor's (created_at, id) on, so rows added meanwhile never shift a page.
 */
const NEWEST_FIRST: KeysetOrder = { keys: ['created_at', 'id'], direction: 'desc' };

async function listTransactions(
  knex: Knex,
  scope: HistoryScope,
  filter: HistoryFilter,
  page: PageRequest,
): Promise<Page<Transaction>> {
  const filtered = (query: Knex.QueryBuilder) => {
    if (filter.type) query.where('type', filter.type);
    if (filter.status) query.where('status', filter.status);
    if (filter.from) query.where('created_at', '>=', filter.from);
    if (filter.before) query.where('created_at', '<', filter.before);
    if (filter.reference !== undefined) query.where('reference', filter.reference);
    if (filter.metadata) query.whereRaw('metadata @> ?::jsonb', [JSON.stringify(filter.metadata)]);
    return query;
  };
  // The owner's own fields are not the receiver's to search by: a filter on them leaves received transfers out.
  const byOwnFields = filter.reference !== undefined || filter.metadata !== undefined;
  const owner: HistoryOwner =
    'accountId' in scope ? { kind: 'account', id: scope.accountId } : { kind: 'user', id: scope.userId };
  const [ownColumn, receivedColumn] =
    owner.kind === 'account'
      ? (['account_id', 'counterparty_account_id'] as const)
      : (['user_id', 'counterparty_user_id'] as const);
  const sent = () => filtered(knex('transactions').where(ownColumn, owner.id));
  // Transfers between a user's own accounts are already among the sent ones.
  const received = () =>
    filtered(
      knex('transactions')
        .where({ [receivedColumn]: owner.id, type: 'transfer', status: 'completed' })
        .where((q) => {
          q.whereNot(ownColumn, owner.id).orWhereNull(ownColumn);
        })
        .whereRaw(byOwnFields ? 'false' : 'true'),
    );
  const newestFirst = [
    { column: 'created_at', order: 'desc' as const },
    { column: 'id', order: 'desc' as const },
  ];
  const total =
    filter.from || filter.before || byOwnFields
      ? countRows([sent(), received()])
      : countHistory(knex, owner, filter);
  if (page.cursor) {
    const { cursor } = page;
    // The cursor must be in this history, whatever the filters: another user's transaction names nothing here.
    const inHistory = (query: Knex.QueryBuilder) =>
      query.where('transactions.id', cursor.id).first(knex.raw('1 AS found')) as Promise<unknown>;
    const ofOwner = () => knex('transactions').where(ownColumn, owner.id);
    const receivedByOwner = () =>
      knex('transactions')
        .where({ [receivedColumn]: owner.id, type: 'transfer', status: 'completed' })
        .where((q) => {
          q.whereNot(ownColumn, owner.id).orWhereNull(ownColumn);
        });
    const reach = page.limit + 1;
    const branch = (query: Knex.QueryBuilder) =>
      keysetCondition(
        knex,
        query.select('*'),
        knex('transactions').where('id', cursor.id),
        NEWEST_FIRST,
        cursor,
      ).limit(reach);
    const reading = readingDirection(NEWEST_FIRST, cursor);
    const [found, receivedFound, rows, counted] = await Promise.all([
      inHistory(ofOwner()),
      inHistory(receivedByOwner()),
      knex
        .select<TransactionRow[]>('*')
        .from(knex.unionAll([branch(sent()), branch(received())], true).as('history'))
        .orderBy([
          { column: 'created_at', order: reading },
          { column: 'id', order: reading },
        ])
        .limit(reach),
      total,
    ]);
    if (!found && !receivedFound) throw unknownCursor(cursor);
    return {
      data: await withRefundReasons(knex, turned(rows.slice(0, page.limit), cursor).map(toTransaction)),
      total: counted,
      hasMore: rows.length > page.limit,
    };
  }
  const reach = page.offset + page.limit;
  const [rows, counted] = await Promise.all([
    knex
      .select<TransactionRow[]>('*')
      .from(
        knex
          .unionAll(
            [
              sent().select('*').orderBy(newestFirst).limit(reach),
              received().select('*').orderBy(newestFirst).limit(reach),
            ],
            true,
          )
          .as('history'),
      )
      .orderBy(newestFirst)
      .limit(page.limit)
      .offset(page.offset),
    total,
  ]);
  return { data: await withRefundReasons(knex, rows.map(toTransaction)), total: counted };
}

async function countRows(queries: Knex.QueryBuilder[]): Promise<number> {
  const counts = await Promise.all(queries.map((query) => query.count<{ count: string }[]>('*')));
  return counts.reduce((sum, [row]) => sum + Number(row?.count ?? 0), 0);
}

export function createTransactionRepository(knex: Knex): TransactionStore {
  return {
    async findTransaction(transactionId) {
      const row: TransactionRow | undefined = await knex('transactions').where({ id: transactionId }).first();
      return row ? ((await withRefundReasons(knex, [toTransaction(row)]))[0] ?? null) : null;
    },
    listTransactions: (scope, filter, page) => listTransactions(knex, scope, filter, page),
    findProviderPayment: (transactionId) => findProviderPayment(knex, transactionId),
  };
}
