import { validationError } from '@payments/service-kit';

/** A half-open period of time: entries at `from` belong to it, entries at `to` to the next one. */
export interface StatementPeriod {
  from: Date;
  to: Date;
}

/** One entry on an account's journal, as a statement lists it. */
export interface StatementEntry {
  id: string;
  transactionId: string;
  type: string | null;
  counterpartyAccountId: string | null;
  amount: bigint;
  createdAt: Date;
  /** The account owner's own, on their own transactions; null on another user's (a transfer received). */
  own: { reference: string | null; metadata: Record<string, string> } | null;
}

export interface StatementLine extends StatementEntry {
  /** The balance once this entry was booked. */
  balance: bigint;
}

export const DEFAULT_STATEMENT_DAYS = 30;
const DAY_MS = 86_400_000;

function invalidQuery(field: string, message: string): Error {
  return validationError([{ field, message }], 'Invalid query parameters');
}

/** An RFC 3339 moment (already format-checked) as a Date; ajv accepts some moments Date cannot hold, e.g. :60. */
export function readMoment(value: string, field: string): Date {
  const moment = new Date(value);
  if (Number.isNaN(moment.getTime())) throw invalidQuery(field, 'must be an RFC 3339 date-time');
  return moment;
}

/**
 * The statement period from the query: `to` defaults to now and is never later than now (a balance of the
 * future is not known yet), `from` defaults to 30 days before `to` and must not be after it.
 */
export function readStatementPeriod(
  from: string | undefined,
  to: string | undefined,
  now: Date,
): StatementPeriod {
  const requestedEnd = to === undefined ? now : readMoment(to, 'to');
  const end = requestedEnd > now ? now : requestedEnd;
  const start =
    from === undefined ? new Date(end.getTime() - DEFAULT_STATEMENT_DAYS * DAY_MS) : readMoment(from, 'from');
  if (start > end) throw invalidQuery('from', 'must not be after to, nor in the future');
  return { from: start, to: end };
}

/** A past moment for a balance: one in the future is answered as of now. */
export function readBalanceMoment(at: string, now: Date): Date {
  const moment = readMoment(at, 'at');
  return moment > now ? now : moment;
}

/** Each entry with the balance after it, starting from the balance before the first one. */
export function withRunningBalance(start: bigint, entries: readonly StatementEntry[]): StatementLine[] {
  let balance = start;
  return entries.map((entry) => {
    balance += entry.amount;
    return { ...entry, balance };
  });
}

/**
 * Which end of an account's journal to sum from to find its balance at the period's edges: from its opening
 * (everything before `to`), or back from the current balance (everything since `from`). Both give the same figures
 * while the balance is the sum of the entries, which every settlement keeps in the same database transaction; the
 * shorter stretch of time keeps a recent statement of a long-lived account as cheap as an old one.
 */
export function sumsFromLatest(period: StatementPeriod, openedAt: Date, now: Date): boolean {
  return now.getTime() - period.from.getTime() < period.to.getTime() - openedAt.getTime();
}
