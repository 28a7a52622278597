import { validationError } from '@payments/service-kit';
import type { TransactionStatus, TransactionType } from './transaction.js';

export interface HistoryFilter {
  type?: TransactionType;
  status?: TransactionStatus;
  /** Inclusive lower bound. */
  from?: Date;
  /** Exclusive upper bound: the start of the day after `to`. */
  before?: Date;
  /** The owner's own fields: they match only transactions the scope's owner made, never one received. */
  reference?: string;
  metadata?: Record<string, string>;
}

export type { Page, PageRequest } from '@payments/service-kit';

const DAY_MS = 86_400_000;

function readDay(value: string, field: string): Date {
  const day = new Date(`${value}T00:00:00.000Z`);
  // Date rolls 2024-02-30 over into March; a real day formats back to itself.
  if (Number.isNaN(day.getTime()) || day.toISOString().slice(0, 10) !== value) {
    throw validationError(
      [{ field, message: 'must be a calendar date as YYYY-MM-DD' }],
      'Invalid query parameters',
    );
  }
  return day;
}

/** `metadata[key]=value` query parameters (already checked against `pattern`) as key-value pairs; none is undefined. */
export function readMetadataFilter(
  query: Record<string, unknown>,
  pattern: RegExp,
): Record<string, string> | undefined {
  const pairs = Object.entries(query).flatMap(([name, value]) => {
    const key = pattern.exec(name)?.[1];
    return key === undefined || typeof value !== 'string' ? [] : [[key, value] as const];
  });
  return pairs.length === 0 ? undefined : Object.fromEntries(pairs);
}

/** `from` and `to` are whole UTC days, both inclusive. */
export function readDateRange(from?: string, to?: string): Pick<HistoryFilter, 'from' | 'before'> {
  const start = from === undefined ? undefined : readDay(from, 'from');
  const end = to === undefined ? undefined : readDay(to, 'to');
  if (start && end && start > end) {
    throw validationError([{ field: 'from', message: 'must not be after to' }], 'Invalid query parameters');
  }
  return { from: start, before: end ? new Date(end.getTime() + DAY_MS) : undefined };
}
