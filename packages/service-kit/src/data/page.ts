import type { Knex } from 'knex';
import { validationError } from '../errors.js';

/** Where a cursor-paged read starts: just after, or just before, the item with this `id`, in the list's order. */
export interface PageCursor {
  direction: 'after' | 'before';
  id: string;
}

/** Which page of a list a caller asked for: by `offset`, or by a cursor (then `offset` is 0). */
export interface PageRequest {
  limit: number;
  offset: number;
  cursor?: PageCursor;
}

/** One page of a list, and how many items the whole list holds. */
export interface Page<T> {
  data: T[];
  total: number;
  /** Whether items follow the page in the direction it was read; unless given, `offset + data.length < total`. */
  hasMore?: boolean;
}

const CURSOR_FIELD = { after: 'starting_after', before: 'ending_before' } as const;

/**
 * The page a list query asks for: `limit` with `offset`, or with one cursor. Both cursors, or a cursor with an
 * offset, is a 400: the two ways of paging do not mix.
 */
export function pageRequestOf(query: {
  limit: number;
  offset?: number;
  starting_after?: string;
  ending_before?: string;
}): PageRequest {
  const { limit, offset = 0, starting_after: after, ending_before: before } = query;
  if (after !== undefined && before !== undefined) {
    throw validationError(
      [{ field: 'ending_before', message: 'must not be given with starting_after' }],
      'Give starting_after or ending_before, not both',
    );
  }
  const cursor: PageCursor | undefined =
    after !== undefined
      ? { direction: 'after', id: after.toLowerCase() }
      : before !== undefined
        ? { direction: 'before', id: before.toLowerCase() }
        : undefined;
  if (cursor && offset > 0) {
    throw validationError(
      [{ field: 'offset', message: `must not be given with ${CURSOR_FIELD[cursor.direction]}` }],
      'Page by offset or by cursor, not both',
    );
  }
  return { limit, offset, ...(cursor && { cursor }) };
}

export function hasMoreOf(page: Page<unknown>, request: PageRequest): boolean {
  return page.hasMore ?? request.offset + page.data.length < page.total;
}

/** The envelope of a page in the API: `{ data, has_more, pagination: { limit, offset, total } }`. */
export function renderPage<T, R>(page: Page<T>, request: PageRequest, render: (item: T) => R) {
  return {
    data: page.data.map(render),
    has_more: hasMoreOf(page, request),
    pagination: { limit: request.limit, offset: request.offset, total: page.total },
  };
}

/** A list's order: SQL expressions of its columns (constants, never input), all one way, ending with a unique one. */
export interface KeysetOrder {
  keys: string[];
  direction: 'asc' | 'desc';
  /** The column a cursor names; `id` unless said. */
  idColumn?: string;
}

/** A cursor that names nothing the list holds, whoever's it is: the same 400 whether it exists elsewhere or not. */
export function unknownCursor(cursor: PageCursor) {
  const field = CURSOR_FIELD[cursor.direction];
  return validationError(
    [{ field, message: 'names no item of this list' }],
    `${field} must be the id of an item of this list`,
  );
}

/** The part of a query that reads a page by cursor: the rows past the cursor's, in the reading order. */
export function keysetCondition(
  knex: Knex,
  query: Knex.QueryBuilder,
  cursorRow: Knex.QueryBuilder,
  order: KeysetOrder,
  cursor: PageCursor,
): Knex.QueryBuilder {
  const reading = readingDirection(order, cursor);
  const keys = order.keys.join(', ');
  // Compared with the cursor's row as the database holds it: a timestamp keeps its microseconds.
  return query
    .whereRaw(`(${keys}) ${reading === 'desc' ? '<' : '>'} ?`, [
      cursorRow.clearSelect().select(knex.raw(keys)),
    ])
    .orderByRaw(order.keys.map((key) => `${key} ${reading}`).join(', '));
}

/** Past a cursor "before", a page is read backwards from it, then turned round. */
export function readingDirection(order: KeysetOrder, cursor: PageCursor): 'asc' | 'desc' {
  if (cursor.direction === 'after') return order.direction;
  return order.direction === 'asc' ? 'desc' : 'asc';
}

/**
 * A page by cursor of what `scope` selects: `limit` rows past the cursor's in `order`, and whether more follow.
 * The cursor must name a row `scope` selects (else a 400 that says no more than that). Rows added meanwhile fall
 * before the first page or after the cursor's row; none is skipped or read twice, as an offset would.
 */
export async function readByCursor<Row>(
  knex: Knex,
  scope: () => Knex.QueryBuilder,
  columns: string[] | '*',
  request: PageRequest & { cursor: PageCursor },
  order: KeysetOrder,
): Promise<{ rows: Row[]; hasMore: boolean }> {
  const { cursor, limit } = request;
  const idColumn = order.idColumn ?? 'id';
  const [found, rows] = await Promise.all([
    scope().where(idColumn, cursor.id).first(knex.raw('1 AS found')) as Promise<unknown>,
    keysetCondition(
      knex,
      scope().select(columns === '*' ? '*' : columns),
      scope().where(idColumn, cursor.id),
      order,
      cursor,
    ).limit(limit + 1) as Promise<Row[]>,
  ]);
  if (!found) throw unknownCursor(cursor);
  return { rows: turned(rows.slice(0, limit), cursor), hasMore: rows.length > limit };
}

/** Rows read backwards (before a cursor) back in the list's order. */
export function turned<Row>(rows: Row[], cursor: PageCursor): Row[] {
  return cursor.direction === 'before' ? rows.reverse() : rows;
}
