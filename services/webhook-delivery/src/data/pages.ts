import {
  readByCursor,
  type Knex,
  type KeysetOrder,
  type Page,
  type PageRequest,
} from '@payments/service-kit';

const NEWEST_FIRST: KeysetOrder = { keys: ['created_at', 'id'], direction: 'desc' };

/**
 * One page of what `scope` selects, newest first (by offset or by cursor), and how many rows it selects in all:
 * two queries at once.
 */
export async function readNewestFirst<Row, T>(
  knex: Knex,
  scope: () => Knex.QueryBuilder,
  page: PageRequest,
  toItem: (row: Row) => T,
): Promise<Page<T>> {
  const counted = scope().count({ total: '*' }) as unknown as Promise<[{ total: string }]>;
  if (page.cursor) {
    const [{ rows, hasMore }, [{ total }]] = await Promise.all([
      readByCursor<Row>(knex, scope, '*', { ...page, cursor: page.cursor }, NEWEST_FIRST),
      counted,
    ]);
    return { data: rows.map(toItem), total: Number(total), hasMore };
  }
  const [rows, [{ total }]] = await Promise.all([
    scope()
      .orderBy([
        { column: 'created_at', order: 'desc' },
        { column: 'id', order: 'desc' },
      ])
      .limit(page.limit)
      .offset(page.offset) as Promise<Row[]>,
    counted,
  ]);
  return { data: rows.map(toItem), total: Number(total) };
}
