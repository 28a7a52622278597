import { parseAmount, toMinorUnits, type MinorUnits } from '@payments/contracts';
import { AppError } from '@payments/service-kit';

/** A currency as the ledger needs it: its code and ISO 4217 exponent (minor units). */
export interface CurrencyUnit {
  code: string;
  exponent: number;
}

/** A non-negative decimal held exactly: `units / 10^scale`. */
export interface Decimal {
  units: bigint;
  scale: number;
}

const PLAIN_DECIMAL = /^(\d+)(?:\.(\d+))?$/;

export function parseDecimal(text: string): Decimal | null {
  const match = PLAIN_DECIMAL.exec(text.trim());
  if (!match) return null;
  const fraction = match[2] ?? '';
  return { units: BigInt(`${match[1]}${fraction}`), scale: fraction.length };
}

/** `numerator / denominator` rounded toward zero (both are non-negative). */
export function divideRoundingDown(numerator: bigint, denominator: bigint): bigint {
  return numerator / denominator;
}

/** `numerator / denominator` rounded up to the next integer unless exact (both are non-negative). */
export function divideRoundingUp(numerator: bigint, denominator: bigint): bigint {
  return (numerator + denominator - 1n) / denominator;
}

const pow10 = (exponent: number) => 10n ** BigInt(exponent);

export function invalidAmount(message: string): AppError {
  return new AppError('INVALID_AMOUNT', `The amount ${message}`, [{ field: 'amount', message }]);
}

/** The largest amount one operation may move, in minor units of the currency. */
export function maxAmountOf(currency: CurrencyUnit, maxMajor: number): MinorUnits {
  return toMinorUnits(BigInt(maxMajor) * pow10(currency.exponent));
}

/** Reads a request amount: exact minor units of `currency`, positive, no more than the configured maximum. */
export function readAmount(input: unknown, currency: CurrencyUnit, maxMajor: number): MinorUnits {
  const parsed = parseAmount(input, currency.exponent);
  if (!parsed.ok) throw invalidAmount(parsed.reason);
  if (parsed.minor > maxAmountOf(currency, maxMajor)) {
    throw invalidAmount(`must not exceed ${maxMajor} ${currency.code}`);
  }
  return parsed.minor;
}

/**
 * Converts minor units of one currency into another at `rate` (units of `to` per unit of `from`), rounding
 * down to the target's minor unit: a conversion never credits more than the rate gives, so the remainder stays
 * with the house (the FX account) and splitting an amount into many small conversions gains nothing.
 */
export function convertAmount(
  amount: MinorUnits,
  rate: Decimal,
  from: CurrencyUnit,
  to: CurrencyUnit,
): MinorUnits {
  const numerator = amount * rate.units * pow10(to.exponent);
  const denominator = pow10(rate.scale + from.exponent);
  return toMinorUnits(divideRoundingDown(numerator, denominator));
}
