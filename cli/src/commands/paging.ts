import type { Argv } from 'yargs';
import type { Pagination } from '@payments/client';
import type { CommandContext } from '../context.js';

export interface PageArgs {
  limit?: number;
  offset?: number;
  startingAfter?: string;
  endingBefore?: string;
}

/** `--limit` and `--offset`, for a list that pages by offset only. */
export const offsetPageOptions = <T>(y: Argv<T>) =>
  y
    .option('limit', { type: 'number', describe: 'Page size (1-100)' })
    .option('offset', { type: 'number', describe: 'Skip this many' });

/** `--limit`, `--offset` and the cursors, as every command that lists one page of a growing list takes them. */
export const pageOptions = <T>(y: Argv<T>) =>
  offsetPageOptions(y)
    .option('starting-after', { type: 'string', describe: 'The page after this id (the last one shown)' })
    .option('ending-before', { type: 'string', describe: 'The page before this id (the first one shown)' });

/** The page the options ask for, as the API's query names it. */
export function pageQuery(argv: PageArgs) {
  return {
    limit: argv.limit,
    offset: argv.offset,
    starting_after: argv.startingAfter,
    ending_before: argv.endingBefore,
  };
}

/**
 * Under a page of a list: "Showing 21-40 of 95." for a page read by offset; for one read by cursor, while more
 * follow, the option that reads the next one (nothing for an empty list).
 */
export function paginationNote(
  ctx: CommandContext,
  page: { data: unknown[]; has_more?: boolean; pagination?: Pagination },
  argv: PageArgs = {},
): void {
  const p = page.pagination;
  const byCursor = argv.startingAfter !== undefined || argv.endingBefore !== undefined;
  if (p && p.total > 0 && !byCursor) {
    const last = Math.min(p.offset + page.data.length, p.total);
    ctx.out.note(`Showing ${p.offset + 1}-${last} of ${p.total}.`, 'dim');
  }
  if (!byCursor || !page.has_more) return;
  const edge = (argv.endingBefore !== undefined ? page.data[0] : page.data.at(-1)) as
    { id?: string } | undefined;
  if (edge?.id === undefined) return;
  const option = argv.endingBefore !== undefined ? '--ending-before' : '--starting-after';
  ctx.out.note(`More: ${option} ${edge.id}`, 'dim');
}
