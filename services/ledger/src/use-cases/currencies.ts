import type { CurrencyUnit } from '../domain/money.js';

export interface CurrencyInfo extends CurrencyUnit {
  supported: boolean;
}

export interface ExchangeRate {
  from: string;
  to: string;
  /** Units of `to` per unit of `from`, as the decimal string the currency service gave. */
  rate: string;
  asOf: string;
}

/** The currency service as the ledger sees it: exponents, the supported set and exchange rates, cached. */
export interface CurrencyDirectory {
  /** Null for a code the catalogue does not know. */
  find(code: string): Promise<CurrencyInfo | null>;
  supported(): Promise<CurrencyInfo[]>;
  /** Null when there is no rate between the two. */
  rate(from: string, to: string): Promise<ExchangeRate | null>;
}

/** The currency of an existing account or transaction; the catalogue not knowing it is our fault, not the client's. */
export async function currencyUnitOf(currencies: CurrencyDirectory, code: string): Promise<CurrencyUnit> {
  const currency = await currencies.find(code);
  if (!currency) throw new Error(`the currency service does not know ${code}`);
  return currency;
}

/** The exponent of each of these currencies, by code. */
export async function exponentsFor(
  currencies: CurrencyDirectory,
  codes: Iterable<string>,
): Promise<ReadonlyMap<string, number>> {
  const unique = [...new Set(codes)];
  const units = await Promise.all(unique.map((code) => currencyUnitOf(currencies, code)));
  return new Map(units.map((unit) => [unit.code, unit.exponent]));
}
