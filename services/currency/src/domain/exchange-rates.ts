import { Decimal } from 'decimal.js';
import { Type } from '@sinclair/typebox';
import { compileSchema } from '@payments/contracts';

/** Rates against one base currency, as exact decimal strings: units of each currency per 1 `base`. */
export interface RateTable {
  readonly base: string;
  readonly as_of: string;
  readonly rates: Readonly<Record<string, string>>;
}

/** Where rates come from: the committed reference table or a URL. Rejects when it cannot give a valid table. */
export interface RateSource {
  /** Names the source in logs. */
  readonly name: string;
  fetchRates(): Promise<RateTable>;
}

/**
 * Every computed rate is rounded to this many significant digits, so a rate is the same string everywhere, and
 * rounded down: a served rate never exceeds the exact cross rate, so converting A → B → A never gains.
 */
export const RATE_SIGNIFICANT_DIGITS = 10;

// A private constructor: our precision and rounding without touching decimal.js's global settings.
const RateDecimal = Decimal.clone({
  precision: RATE_SIGNIFICANT_DIGITS,
  rounding: Decimal.ROUND_DOWN,
  toExpNeg: -100,
  toExpPos: 100,
});

const CurrencyCode = Type.String({ pattern: '^[A-Z]{3}$' });

/** The shape of src/data/reference-rates.json and of what a RATES_SOURCE_URL must answer. */
export const RateTableSchema = Type.Object({
  description: Type.Optional(Type.String({ maxLength: 2000 })),
  base: CurrencyCode,
  as_of: Type.String({ format: 'date-time' }),
  rates: Type.Record(CurrencyCode, Type.String({ pattern: '^[0-9]{1,15}(\\.[0-9]{1,20})?$' }), {
    additionalProperties: false,
    maxProperties: 500,
  }),
});

const checkShape = compileSchema(RateTableSchema);

export type RateTableCheck = { ok: true; table: RateTable } | { ok: false; errors: string[] };

/** Validates a table from any source; the base's own rate is implied (1) and, when given, must be 1. */
export function checkRateTable(value: unknown): RateTableCheck {
  const shape = checkShape(value);
  if (!shape.ok) return shape;
  const { base, as_of, rates } = shape.value;
  const errors: string[] = [];
  for (const [code, rate] of Object.entries(rates)) {
    if (new RateDecimal(rate).isZero()) errors.push(`/rates/${code} must be greater than zero`);
  }
  if (rates[base] !== undefined && !new RateDecimal(rates[base]).eq(1)) {
    errors.push(`/rates/${base} must be 1, as ${base} is the base`);
  }
  if (errors.length > 0) return { ok: false, errors };
  return { ok: true, table: { base, as_of, rates: { ...rates, [base]: '1' } } };
}

/** Units of `to` per one unit of `from`, computed through the table's base; null when either has no rate. */
export function crossRate(table: RateTable, from: string, to: string): string | null {
  const fromRate = table.rates[from];
  const toRate = table.rates[to];
  if (fromRate === undefined || toRate === undefined) return null;
  if (from === to) return '1';
  return new RateDecimal(toRate).div(fromRate).toString();
}

/** Every other currency of the table against `base`, in code order; null when `base` has no rate. */
export function ratesAgainst(table: RateTable, base: string): Record<string, string> | null {
  if (table.rates[base] === undefined) return null;
  const rates: Record<string, string> = {};
  for (const code of Object.keys(table.rates).sort()) {
    if (code !== base) rates[code] = crossRate(table, base, code) as string;
  }
  return rates;
}
