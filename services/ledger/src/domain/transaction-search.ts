import { toMinorUnits, type MinorUnits } from '@payments/contracts';
import { validationError } from '@payments/service-kit';
import { parseDecimal, type CurrencyUnit } from './money.js';
import type { TransactionStatus, TransactionType } from './transaction.js';

/** What an operator searches every user's transactions by (GET /admin/transactions); each given must hold. */
export interface TransactionSearch {
  type?: TransactionType;
  status?: TransactionStatus;
  accountId?: string;
  /** The account owner's. */
  userId?: string;
  currency?: string;
  /** Inclusive bounds on created_at. */
  from?: Date;
  through?: Date;
  amountMin?: MinorUnits;
  amountMax?: MinorUnits;
  reference?: string;
  metadata?: Record<string, string>;
  /** `q`: the start of the transaction's id, as a range of ids, and/or of the provider's reference. */
  idRange?: { low: string; high: string };
  referencePrefix?: string;
}

const DAY_MS = 86_400_000;
const HEX_PREFIX = /^[0-9a-f-]{1,36}$/i;

const invalid = (field: string, message: string) =>
  validationError([{ field, message }], 'Invalid query parameters');

/** A day bound covers the whole UTC day: `from` its start, `to` its last millisecond. A moment is itself. */
export function readSearchBound(value: string, field: 'from' | 'to'): Date {
  const day = /^\d{4}-\d{2}-\d{2}$/.test(value);
  const moment = new Date(day ? `${value}T00:00:00.000Z` : value);
  // Date rolls 2024-02-30 over into March; a real day formats back to itself.
  if (Number.isNaN(moment.getTime()) || (day && moment.toISOString().slice(0, 10) !== value)) {
    throw invalid(field, 'must be a calendar date (YYYY-MM-DD) or an RFC 3339 date-time');
  }
  return day && field === 'to' ? new Date(moment.getTime() + DAY_MS - 1) : moment;
}

/** A decimal string in major units of `currency`, exactly, as minor units; zero is a bound like any other. */
export function readAmountBound(value: string, field: string, currency: CurrencyUnit): MinorUnits {
  const decimal = parseDecimal(value);
  if (!decimal) throw invalid(field, 'must be a decimal amount such as "10.50"');
  if (decimal.scale > currency.exponent) {
    throw invalid(field, `must have at most ${currency.exponent} decimals in ${currency.code}`);
  }
  return toMinorUnits(decimal.units * 10n ** BigInt(currency.exponent - decimal.scale));
}

/**
 * `q` as what it can be the start of: hexadecimal digits and dashes are the start of an id (every UUID between
 * the prefix padded with 0s and with fs), and anything is the start of a provider's reference.
 */
export function readIdPrefix(q: string): Pick<TransactionSearch, 'idRange' | 'referencePrefix'> {
  const referencePrefix = q;
  if (!HEX_PREFIX.test(q)) return { referencePrefix };
  const digits = q.replace(/-/g, '').toLowerCase();
  if (digits.length === 0 || digits.length > 32) return { referencePrefix };
  const asUuid = (hex: string) =>
    `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
  return {
    idRange: { low: asUuid(digits.padEnd(32, '0')), high: asUuid(digits.padEnd(32, 'f')) },
    referencePrefix,
  };
}

/** Both bounds of a range, in order. */
export function checkOrdered<T extends Date | bigint>(
  low: T | undefined,
  high: T | undefined,
  fields: [string, string],
): void {
  if (low !== undefined && high !== undefined && low > high) {
    throw invalid(fields[0], `must not be greater than ${fields[1]}`);
  }
}
