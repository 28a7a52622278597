import type { Knex } from '@payments/service-kit';
import type { Page, PageRequest } from '../domain/history.js';

/** How a page of rows is read: which columns, in which order, and what each row becomes. */
export interface PageOf<Row, T> {
  columns: string[] | '*';
  order: { column: string; order?: 'asc' | 'desc' }[];
  toItem: (row: Row) => T;
}

/** One page of what `scope` selects, and how many rows it selects in all: two queries, run concurrently. */
export async function readPage<Row, T>(
  scope: () => Knex.QueryBuilder,
  page: PageRequest,
  { columns, order, toItem }: PageOf<Row, T>,
): Promise<Page<T>> {
  const selected = columns === '*' ? scope().select('*') : scope().select(columns);
  const [rows, [count]] = await Promise.all([
    selected.orderBy(order).limit(page.limit).offset(page.offset) as Promise<Row[]>,
    scope().count<{ count: string }[]>('*'),
  ]);
  return { data: rows.map(toItem), total: Number(count?.count ?? 0) };
}
