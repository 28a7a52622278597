import { catalogueEntries, createReferenceRateSource, type RateTable } from '@payments/currency';

/** A non-negative or negative fraction, exact: money valued at a table's rates is rarely a whole number. */
export interface Fraction {
  num: bigint;
  /** Always positive. */
  den: bigint;
}

/** Money by currency code, in minor units. */
export type Holdings = ReadonlyMap<string, bigint>;

export const ZERO: Fraction = { num: 0n, den: 1n };

export const addFractions = (a: Fraction, b: Fraction): Fraction => ({
  num: a.num * b.den + b.num * a.den,
  den: a.den * b.den,
});

export const subtractFractions = (a: Fraction, b: Fraction): Fraction =>
  addFractions(a, { num: -b.num, den: b.den });

export const atMost = (a: Fraction, b: Fraction) => a.num * b.den <= b.num * a.den;

/** Adds `amount` to `currency` in a mutable holdings map. */
export function addTo(holdings: Map<string, bigint>, currency: string, amount: bigint): void {
  holdings.set(currency, (holdings.get(currency) ?? 0n) + amount);
}

export function sumHoldings(all: Iterable<Holdings>): Map<string, bigint> {
  const total = new Map<string, bigint>();
  for (const holdings of all) for (const [currency, amount] of holdings) addTo(total, currency, amount);
  return total;
}

/** What money is worth in one currency at fixed rates. */
export interface Valuation {
  /** The currency values are expressed in (major units). */
  currency: string;
  /** Decimal places of a currency's minor unit (JPY 0, USD 2, KWD 3). */
  exponent(currency: string): number;
  of(currency: string, minor: bigint): Fraction;
  ofHoldings(holdings: Holdings): Fraction;
  /** Minor units of `currency` as a decimal string, e.g. 1234n USD → "12.34". */
  formatMinor(currency: string, minor: bigint): string;
  /** A value as a decimal in the valuation currency, rounded toward zero to `decimals` places. */
  format(value: Fraction, decimals?: number): string;
}

function rateOf(text: string): Fraction {
  const match = /^(\d+)(?:\.(\d+))?$/.exec(text);
  if (!match) throw new Error(`not a rate: ${text}`);
  const decimals = match[2] ?? '';
  return { num: BigInt(`${match[1]}${decimals}`), den: 10n ** BigInt(decimals.length) };
}

function decimalText(num: bigint, den: bigint, decimals: number): string {
  const negative = num < 0n;
  const scaled = ((negative ? -num : num) * 10n ** BigInt(decimals)) / den;
  const digits = scaled.toString().padStart(decimals + 1, '0');
  const whole = digits.slice(0, digits.length - decimals);
  const fraction = decimals > 0 ? `.${digits.slice(-decimals)}` : '';
  return `${negative && scaled > 0n ? '-' : ''}${whole}${fraction}`;
}

/**
 * Values money at a rate table's own exact rates (units of each currency per one unit of its base), in
 * `currency`: the yardstick against which no conversion or fee may leave a user richer.
 */
export function createValuation(
  table: RateTable,
  exponents: ReadonlyMap<string, number>,
  currency: string,
): Valuation {
  const rate = (code: string) => {
    const text = table.rates[code];
    if (text === undefined) throw new Error(`no reference rate for ${code}`);
    return rateOf(text);
  };
  const exponent = (code: string) => {
    const found = exponents.get(code);
    if (found === undefined) throw new Error(`no exponent known for ${code}`);
    return found;
  };
  const target = rate(currency);
  const of = (code: string, minor: bigint): Fraction => {
    const own = rate(code);
    // minor / 10^exponent / own × target.
    return {
      num: minor * own.den * target.num,
      den: 10n ** BigInt(exponent(code)) * own.num * target.den,
    };
  };
  return {
    currency,
    exponent,
    of,
    ofHoldings: (holdings) =>
      [...holdings].reduce((total, [code, minor]) => addFractions(total, of(code, minor)), ZERO),
    formatMinor: (code, minor) => decimalText(minor, 10n ** BigInt(exponent(code)), exponent(code)),
    format: (value, decimals = 4) => decimalText(value.num, value.den, decimals),
  };
}

/** The valuation at the currency service's committed reference table (what it serves without RATES_SOURCE_URL). */
export async function referenceValuation(currency = 'USD'): Promise<Valuation> {
  const table = await createReferenceRateSource().fetchRates();
  const exponents = new Map(catalogueEntries.map((entry) => [entry.code, entry.minor_units]));
  return createValuation(table, exponents, currency);
}
