import type { CursorPage, Page } from './types.js';

/** Every item of a list, page after page: `for await (const item of list)`. */
export interface PagedList<T, P extends CursorPage<T> = Page<T>> extends AsyncIterable<T> {
  /** The pages themselves, with `has_more` (and `pagination` where the list has one). */
  pages(): AsyncIterable<P>;
  /** Every item in one array (for lists you know are short). */
  toArray(): Promise<T[]>;
}

/** Where a cursor-paged walk starts: the first page as you would ask for it. */
export interface PageWindow {
  limit?: number | undefined;
  /** The first page only; the next ones follow by cursor. */
  offset?: number | undefined;
  starting_after?: string | undefined;
  ending_before?: string | undefined;
}

/**
 * The page a walk asks for next. Every field is there, undefined where unused, so that spread over the caller's
 * query it drops the first page's offset or cursor.
 */
export interface PageRequestWindow {
  limit: number;
  offset: number | undefined;
  starting_after: string | undefined;
  ending_before: string | undefined;
}

export interface OffsetWindow {
  limit?: number | undefined;
  offset?: number | undefined;
}

/** The largest page the lists allow (the currency catalogue allows more, and says so). */
export const MAX_PAGE_SIZE = 100;

function listOf<T, P extends CursorPage<T>>(pages: () => AsyncGenerator<P>): PagedList<T, P> {
  async function* items(): AsyncGenerator<T> {
    for await (const page of pages()) yield* page.data;
  }
  return {
    [Symbol.asyncIterator]: () => items(),
    pages,
    async toArray() {
      const all: T[] = [];
      for await (const item of items()) all.push(item);
      return all;
    },
  };
}

/**
 * Pages through a list by cursor, `window.limit` items a page (the largest allowed by default): the first page as
 * `window` asks, then each next one `starting_after` the last item of the one before, while `has_more`. Items that
 * arrive meanwhile never shift a page, so none is skipped or yielded twice. A walk that starts `ending_before` an
 * item goes the other way: each page ends before the first item of the one before.
 */
export function pagedList<T extends { id: string }, P extends CursorPage<T> = Page<T>>(
  fetchPage: (window: PageRequestWindow) => Promise<P>,
  window: PageWindow = {},
  maxPageSize = MAX_PAGE_SIZE,
): PagedList<T, P> {
  const limit = window.limit ?? maxPageSize;
  const backwards = window.ending_before !== undefined;
  async function* pages(): AsyncGenerator<P> {
    let next: PageRequestWindow = {
      limit,
      offset: window.offset,
      starting_after: window.starting_after,
      ending_before: window.ending_before,
    };
    for (;;) {
      const page = await fetchPage(next);
      yield page;
      const edge = backwards ? page.data[0] : page.data.at(-1);
      if (!page.has_more || !edge) return;
      next = {
        limit,
        offset: undefined,
        starting_after: backwards ? undefined : edge.id,
        ending_before: backwards ? edge.id : undefined,
      };
    }
  }
  return listOf(pages);
}

/**
 * Pages through a list that is paged by offset only (the currency catalogue, which does not grow), from
 * `window.offset`, until `pagination.total` is reached or a page comes back empty.
 */
export function offsetPagedList<T>(
  fetchPage: (window: { limit: number; offset: number }) => Promise<Page<T>>,
  window: OffsetWindow = {},
  maxPageSize = MAX_PAGE_SIZE,
): PagedList<T> {
  const limit = window.limit ?? maxPageSize;
  async function* pages(): AsyncGenerator<Page<T>> {
    let offset = window.offset ?? 0;
    for (;;) {
      const page = await fetchPage({ limit, offset });
      yield page;
      offset += page.data.length;
      if (page.data.length === 0 || offset >= page.pagination.total) return;
    }
  }
  return listOf(pages);
}
