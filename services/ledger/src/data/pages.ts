import { readByCursor, type Knex } from '@payments/service-kit';
import type { Page, PageRequest } from '../domain/history.js';

/** How a page of rows is read: which columns, in which order (all one way, ending with `id`), what a row becomes. */
export interface PageOf<Row, T> {
  columns: string[] | '*';
  order: { column: string; order?: 'asc' | 'desc' }[];
  toItem: (row: Row) => T;
}

/**
 * One page of what `scope` selects, by offset or by cursor, and how many rows it selects in all: two queries, run
 * concurrently.
 */
export async function readPage<Row, T>(
  knex: Knex,
  scope: () => Knex.QueryBuilder,
  page: PageRequest,
  { columns, order, toItem }: PageOf<Row, T>,
): Promise<Page<T>> {
  const counted = scope().count<{ count: string }[]>('*');
  if (page.cursor) {
    const [{ rows, hasMore }, [count]] = await Promise.all([
      readByCursor<Row>(
        knex,
        scope,
        columns,
        { ...page, cursor: page.cursor },
        {
          keys: order.map(({ column }) => column),
          direction: order[0]?.order ?? 'asc',
        },
      ),
      counted,
    ]);
    return { data: rows.map(toItem), total: Number(count?.count ?? 0), hasMore };
  }
  const selected = columns === '*' ? scope().select('*') : scope().select(columns);
  const [rows, [count]] = await Promise.all([
    selected.orderBy(order).limit(page.limit).offset(page.offset) as Promise<Row[]>,
    counted,
  ]);
  return { data: rows.map(toItem), total: Number(count?.count ?? 0) };
}
