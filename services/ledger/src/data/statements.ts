import { toMinorUnits } from '@payments/contracts';
import type { Knex } from '@payments/service-kit';
import type { StatementEntry, StatementPeriod } from '../domain/statement.js';

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

interface EntryRow {
  id: string;
  transaction_id: string;
  amount: string;
  created_at: Date;
  type: string | null;
  counterparty_account_id: string | null;
}

const sumOf = (value: string | null) => toMinorUnits(value ?? '0');

/**
 * Every figure comes from one REPEATABLE READ snapshot of the append-only journal, so opening + entries = closing
 * even while money moves. Entries are ordered by (created_at, id) and every query here is a range of the
 * entries_account_created index. Resolves null when `startingAfter` is not an entry of this statement.
 */
export async function readStatement(
  knex: Knex,
  accountId: string,
  period: StatementPeriod,
  page: StatementPageRequest,
): Promise<StatementSlice | null> {
  return knex.transaction(
    async (trx) => {
      // The cursor's position is compared inside SQL: created_at has microseconds a JS Date would drop.
      const cursor = page.startingAfter
        ? await trx('entries')
            .where({ id: page.startingAfter, account_id: accountId })
            .where('created_at', '>=', period.from)
            .where('created_at', '<', period.to)
            .first<{ id: string } | undefined>('id')
        : undefined;
      if (page.startingAfter && !cursor) return null;
      const position = cursor
        ? trx.raw('(SELECT created_at, id FROM entries WHERE id = ?)', [cursor.id])
        : null;

      const sums = await trx('entries')
        .where('account_id', accountId)
        .where('created_at', '<', period.to)
        .first<{ opening: string | null; movement: string | null; before_page: string | null }>(
          trx.raw('sum(amount) FILTER (WHERE created_at < ?) AS opening', [period.from]),
          trx.raw('sum(amount) FILTER (WHERE created_at >= ?) AS movement', [period.from]),
          position
            ? trx.raw('sum(amount) FILTER (WHERE created_at >= ? AND (created_at, id) <= ?) AS before_page', [
                period.from,
                position,
              ])
            : trx.raw('0 AS before_page'),
        );

      const rows: EntryRow[] = await trx('entries as e')
        .leftJoin('transactions as t', 't.id', 'e.transaction_id')
        .where('e.account_id', accountId)
        .where('e.created_at', '>=', period.from)
        .where('e.created_at', '<', period.to)
        .modify((query) => {
          if (position) query.whereRaw('(e.created_at, e.id) > ?', [position]);
        })
        .orderBy([{ column: 'e.created_at' }, { column: 'e.id' }])
        .limit(page.limit + 1)
        .select(
          'e.id',
          'e.transaction_id',
          'e.amount',
          'e.created_at',
          't.type',
          // The other side of a transfer: the destination for its sender, the sender for its destination.
          trx.raw(
            'CASE WHEN t.account_id = e.account_id THEN t.counterparty_account_id ELSE t.account_id END AS counterparty_account_id',
          ),
        );

      const opening = sumOf(sums?.opening ?? null);
      return {
        opening,
        closing: opening + sumOf(sums?.movement ?? null),
        pageStart: opening + sumOf(sums?.before_page ?? null),
        entries: rows.slice(0, page.limit).map(toStatementEntry),
        hasMore: rows.length > page.limit,
      };
    },
    { isolationLevel: 'repeatable read', readOnly: true },
  );
}

/** The balance at `at`: the sum of the account's entries booked before that moment. */
export async function balanceAt(knex: Knex, accountId: string, at: Date): Promise<bigint> {
  const row = await knex('entries')
    .where('account_id', accountId)
    .where('created_at', '<', at)
    .first<{ sum: string | null }>(knex.raw('sum(amount) AS sum'));
  return sumOf(row?.sum ?? null);
}

function toStatementEntry(row: EntryRow): StatementEntry {
  return {
    id: String(row.id),
    transactionId: row.transaction_id,
    type: row.type,
    counterpartyAccountId: row.counterparty_account_id,
    amount: toMinorUnits(row.amount),
    createdAt: row.created_at,
  };
}
