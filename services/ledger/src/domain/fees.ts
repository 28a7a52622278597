import { toMinorUnits, type MinorUnits } from '@payments/contracts';
import { divideRoundingUp, parseDecimal, type CurrencyUnit, type Decimal } from './money.js';
import type { RequestedType } from './transaction.js';

/** A fee: `fixed` major units of the account currency plus `percent` of the amount. */
export interface FeeRule {
  fixed: Decimal;
  percent: Decimal;
}

export type FeeSchedule = Record<RequestedType, FeeRule>;

export function feeRule(fixed: string, percent: string): FeeRule {
  const parsedFixed = parseDecimal(fixed);
  const parsedPercent = parseDecimal(percent);
  if (!parsedFixed || !parsedPercent) throw new Error(`invalid fee rule ${fixed} + ${percent}%`);
  return { fixed: parsedFixed, percent: parsedPercent };
}

/**
 * The fee in minor units of the account currency: fixed + amount × percent / 100, computed exactly and
 * rounded once, up, to the currency's minor unit. Never below the exact fee, so fee(a) + fee(b) ≥ fee(a + b):
 * splitting a payment into pieces never pays less fee than paying it at once.
 */
export function feeFor(amount: MinorUnits, rule: FeeRule, currency: CurrencyUnit): MinorUnits {
  const { fixed, percent } = rule;
  // Over the common denominator 10^fixed.scale × 100 × 10^percent.scale.
  const denominator = 10n ** BigInt(fixed.scale) * 100n * 10n ** BigInt(percent.scale);
  const fixedPart = fixed.units * 10n ** BigInt(currency.exponent) * 100n * 10n ** BigInt(percent.scale);
  const percentPart = amount * percent.units * 10n ** BigInt(fixed.scale);
  return toMinorUnits(divideRoundingUp(fixedPart + percentPart, denominator));
}
