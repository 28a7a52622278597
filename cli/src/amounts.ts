import type { PaymentsClient } from '@payments/client';
// Subpath imports: the package root compiles every event schema, which costs a CLI start-up ~0.4 s.
import { formatMinor, parseAmount } from '@payments/contracts/money';
import { CliError, EXIT, usageError } from './exit-codes.js';

/**
 * An amount from the API (a JSON number, or a decimal string) as exact minor units. JSON numbers go through
 * their shortest decimal text, which is what the API wrote, so 100.1 stays 100.1. Zero and negatives allowed.
 */
export function amountToMinor(value: unknown, exponent: number): bigint {
  const text = typeof value === 'number' ? String(value) : typeof value === 'string' ? value.trim() : '';
  const negative = text.startsWith('-');
  const magnitude = negative ? text.slice(1) : text;
  if (/^0+(\.0+)?$/.test(magnitude)) return 0n;
  const parsed = parseAmount(magnitude, exponent);
  if (!parsed.ok) {
    throw new CliError(
      EXIT.unavailable,
      `The API sent an amount this client cannot read: ${JSON.stringify(value)}`,
    );
  }
  return negative ? -parsed.minor : parsed.minor;
}

/** Amounts print with two decimals, or with the currency's own exponent where that is larger (KWD: 3). */
export function formatAmount(value: unknown, exponent: number): string {
  return formatMinor(amountToMinor(value, exponent), exponent, Math.max(2, exponent));
}

/** The user's amount argument, checked against the currency before anything is sent. */
export function parseUserAmount(text: string, currency: string, exponent: number): bigint {
  const parsed = parseAmount(text, exponent);
  if (!parsed.ok) throw usageError(`Invalid amount "${text}" for ${currency}: it ${parsed.reason}.`);
  return parsed.minor;
}

export interface CurrencyExponents {
  of(code: string): Promise<number>;
}

/** Minor units per currency from the catalogue, asked once per code; 2 when the catalogue cannot say. */
export function createCurrencyExponents(currencies: PaymentsClient['currencies']): CurrencyExponents {
  const known = new Map<string, Promise<number>>();
  return {
    of(code) {
      const key = code.toUpperCase();
      let exponent = known.get(key);
      if (!exponent) {
        exponent = currencies
          .get(key)
          .then((currency) => (Number.isInteger(currency?.minor_units) ? currency.minor_units : 2))
          .catch(() => 2);
        known.set(key, exponent);
      }
      return exponent;
    },
  };
}
