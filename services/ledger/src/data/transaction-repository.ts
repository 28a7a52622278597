import type { Knex } from '@payments/service-kit';
import type { HistoryFilter, Page, PageRequest } from '../domain/history.js';
import type { Transaction } from '../domain/transaction.js';
import type { HistoryScope, TransactionStore } from '../use-cases/transactions.js';
import { countHistory, type HistoryOwner } from './history-counts.js';
import { findProviderPayment } from './provider-payment-repository.js';
import { toTransaction, type TransactionRow } from './records.js';

/**
 * Newest first. A transfer shows in the receiver's history once it has completed. Sent and received rows are
 * read as two index-ordered branches, each cut at offset + limit, so a page stays cheap for a busy account.
 * The total comes from the history counters, or, for a date range they cannot answer, from counting the rows.
 */
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
  const reach = page.offset + page.limit;
  const [rows, total] = await Promise.all([
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
    filter.from || filter.before || byOwnFields
      ? countRows([sent(), received()])
      : countHistory(knex, owner, filter),
  ]);
  return { data: rows.map(toTransaction), total };
}

async function countRows(queries: Knex.QueryBuilder[]): Promise<number> {
  const counts = await Promise.all(queries.map((query) => query.count<{ count: string }[]>('*')));
  return counts.reduce((sum, [row]) => sum + Number(row?.count ?? 0), 0);
}

export function createTransactionRepository(knex: Knex): TransactionStore {
  return {
    async findTransaction(transactionId) {
      const row: TransactionRow | undefined = await knex('transactions').where({ id: transactionId }).first();
      return row ? toTransaction(row) : null;
    },
    listTransactions: (scope, filter, page) => listTransactions(knex, scope, filter, page),
    findProviderPayment: (transactionId) => findProviderPayment(knex, transactionId),
  };
}
