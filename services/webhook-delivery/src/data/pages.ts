import type { Knex, Page, PageRequest } from '@payments/service-kit';

/** One page of what `scope` selects, newest first, and how many rows it selects in all: two queries at once. */
export async function readNewestFirst<Row, T>(
  scope: () => Knex.QueryBuilder,
  { limit, offset }: PageRequest,
  toItem: (row: Row) => T,
): Promise<Page<T>> {
  const [rows, [{ total }]] = await Promise.all([
    scope()
      .orderBy([{ column: 'created_at', order: 'desc' }, 'id'])
      .limit(limit)
      .offset(offset) as Promise<Row[]>,
    scope().count({ total: '*' }) as unknown as Promise<[{ total: string }]>,
  ]);
  return { data: rows.map(toItem), total: Number(total) };
}
