import type { Argv } from 'yargs';
import type { Pagination } from '@payments/client';
import type { CommandContext } from '../context.js';

export interface PageArgs {
  limit?: number;
  offset?: number;
}

/** `--limit` and `--offset`, as every command that lists one page takes them. */
export const pageOptions = <T>(y: Argv<T>) =>
  y
    .option('limit', { type: 'number', describe: 'Page size (1-100)' })
    .option('offset', { type: 'number', describe: 'Skip this many' });

/** "Showing 21-40 of 95." under a page of a list (nothing for a list without pagination, or an empty one). */
export function paginationNote(
  ctx: CommandContext,
  page: { data: unknown[]; pagination?: Pagination },
): void {
  const p = page.pagination;
  if (!p || p.total === 0) return;
  const last = Math.min(p.offset + page.data.length, p.total);
  ctx.out.note(`Showing ${p.offset + 1}-${last} of ${p.total}.`, 'dim');
}
