import { useEffect, useId, useState, type FormEvent, type ReactNode } from 'react';
import { ErrorMessage } from './error-message.js';

export interface Column<T> {
  header: string;
  cell: (row: T) => ReactNode;
}

/** The page a table asks for: the search as typed, and the cursor of the page (none: the first). */
export interface TableQuery {
  search: string;
  limit: number;
  starting_after?: string;
}

/** The page a table asks for, as every list of the API takes it: its size, and where the previous one ended. */
export function pageOf(query: TableQuery): { limit: number; starting_after?: string } {
  return { limit: query.limit, ...(query.starting_after && { starting_after: query.starting_after }) };
}

export interface TablePage<T> {
  data: T[];
  has_more: boolean;
}

export interface DataTableProps<T> {
  /** Names the table for assistive technology. */
  caption: string;
  columns: Column<T>[];
  load: (query: TableQuery, signal: AbortSignal) => Promise<TablePage<T>>;
  /** The row's key and cursor. */
  rowId: (row: T) => string;
  /** Says what the search box matches, under it. */
  searchHint?: string;
  /** Without a search box (a list inside a page that has one already). */
  searchable?: boolean;
  /** More controls for the search form (a status, what the search matches), applied with it. */
  filters?: ReactNode;
  /** Called on submit, so the page applies its `filters` with the search. */
  onSearch?: () => void;
  /** Changing it reloads the current page (after an action changed a row). */
  reloadKey?: unknown;
  empty?: string;
  pageSize?: number;
}

/**
 * Every list of the console: a search box labelled "Search" and cursor paging with "Next" and "Previous". Previous
 * goes back through the cursors this table followed, so a page never skips or repeats a row while the list grows.
 */
export function DataTable<T>({
  caption,
  columns,
  load,
  rowId,
  searchHint,
  searchable = true,
  filters,
  onSearch: applyFilters,
  reloadKey,
  empty = 'Nothing to show.',
  pageSize = 20,
}: DataTableProps<T>) {
  const [typed, setTyped] = useState('');
  const [search, setSearch] = useState('');
  const [cursors, setCursors] = useState<(string | undefined)[]>([undefined]);
  const [page, setPage] = useState<TablePage<T> | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [loading, setLoading] = useState(false);
  const cursor = cursors[cursors.length - 1];
  const id = useId();

  useEffect(() => {
    const abort = new AbortController();
    setLoading(true);
    setError(null);
    load(
      { search, limit: pageSize, ...(cursor !== undefined && { starting_after: cursor }) },
      abort.signal,
    ).then(
      (loaded) => {
        if (abort.signal.aborted) return;
        setPage(loaded);
        setLoading(false);
      },
      (failure: unknown) => {
        if (abort.signal.aborted) return;
        setError(failure);
        setPage(null);
        setLoading(false);
      },
    );
    return () => abort.abort();
  }, [load, search, cursor, pageSize, reloadKey]);

  const onSearch = (event: FormEvent) => {
    event.preventDefault();
    setSearch(typed.trim());
    setCursors([undefined]);
    applyFilters?.();
  };
  const last = page?.data[page.data.length - 1];

  return (
    <section className="data-table" aria-busy={loading}>
      {searchable && (
        <form role="search" className="table-search" onSubmit={onSearch}>
          <label htmlFor={`${id}-search`}>Search</label>
          <input
            id={`${id}-search`}
            type="search"
            value={typed}
            onChange={(event) => setTyped(event.target.value)}
            aria-describedby={searchHint ? `${id}-hint` : undefined}
          />
          {filters}
          <button type="submit">Find</button>
          {searchHint && (
            <p id={`${id}-hint`} className="hint">
              {searchHint}
            </p>
          )}
        </form>
      )}
      <ErrorMessage error={error} />
      <div className="table-scroll">
        <table>
          <caption>{caption}</caption>
          <thead>
            <tr>
              {columns.map((column) => (
                <th key={column.header} scope="col">
                  {column.header}
                </th>
              ))}
            </tr>
          </thead>
          <tbody>
            {page?.data.map((row) => (
              <tr key={rowId(row)}>
                {columns.map((column) => (
                  <td key={column.header}>{column.cell(row)}</td>
                ))}
              </tr>
            ))}
            {page && page.data.length === 0 && (
              <tr>
                <td colSpan={columns.length}>{empty}</td>
              </tr>
            )}
          </tbody>
        </table>
      </div>
      <div className="paging">
        <button
          type="button"
          disabled={cursors.length <= 1 || loading}
          onClick={() => setCursors(cursors.slice(0, -1))}
        >
          Previous
        </button>
        <button
          type="button"
          disabled={!page?.has_more || !last || loading}
          onClick={() => last && setCursors([...cursors, rowId(last)])}
        >
          Next
        </button>
      </div>
    </section>
  );
}
