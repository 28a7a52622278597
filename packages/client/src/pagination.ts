import type { Page } from './types.js';

/** Every item of a list, page after page: `for await (const item of list)`. */
export interface PagedList<T> extends AsyncIterable<T> {
  /** The pages themselves, with their `pagination`. */
  pages(): AsyncIterable<Page<T>>;
  /** Every item in one array (for lists you know are short). */
  toArray(): Promise<T[]>;
}

export interface OffsetWindow {
  limit?: number | undefined;
  offset?: number | undefined;
}

/** The largest page the offset lists allow (the currency catalogue allows more, and says so). */
export const MAX_PAGE_SIZE = 100;

/**
 * Pages through an offset-paged list from `window.offset`, `window.limit` items a page (the largest allowed by
 * default), until `pagination.total` is reached or a page comes back empty. Histories are newest first, so an item
 * that arrives meanwhile shifts the next page by one: an item seen already (same `id`) is not yielded twice.
 */
export function pagedList<T>(
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
  async function* items(): AsyncGenerator<T> {
    const seen = new Set<unknown>();
    for await (const page of pages()) {
      for (const item of page.data) {
        const id = (item as { id?: unknown }).id;
        if (id !== undefined) {
          if (seen.has(id)) continue;
          seen.add(id);
        }
        yield item;
      }
    }
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
