/** An amount in a currency's smallest unit (cents for USD, yen for JPY, fils for KWD). */
export type MinorUnits = bigint & { readonly __brand: 'MinorUnits' };

export type AmountParseResult = { ok: true; minor: MinorUnits } | { ok: false; reason: string };

const DECIMAL = /^(\d+)(?:\.(\d+))?$/;
const MAX_INPUT_LENGTH = 40;

export function toMinorUnits(value: bigint | number | string): MinorUnits {
  return BigInt(value) as MinorUnits;
}

/**
 * Parses a positive amount given as a JSON number or a decimal string into exact minor units.
 * JSON numbers go through their shortest decimal form, so 100.1 is 100.1 and never 100.09999….
 */
export function parseAmount(input: unknown, exponent: number): AmountParseResult {
  let text: string;
  if (typeof input === 'number') {
    if (!Number.isFinite(input)) return { ok: false, reason: 'must be a finite number' };
    text = String(input);
  } else if (typeof input === 'string') {
    text = input.trim();
  } else {
    return { ok: false, reason: 'must be a number or a decimal string' };
  }
  if (text.startsWith('-')) return { ok: false, reason: 'must be greater than zero' };
  const match = text.length <= MAX_INPUT_LENGTH ? DECIMAL.exec(text) : null;
  if (!match) return { ok: false, reason: 'must be a plain decimal number such as 10.50' };
  const whole = match[1] as string;
  const fraction = (match[2] ?? '').replace(/0+$/, '');
  if (fraction.length > exponent) {
    return {
      ok: false,
      reason:
        exponent === 0
          ? 'must be a whole number in this currency'
          : `must have at most ${exponent} decimal places in this currency`,
    };
  }
  const minor = BigInt(whole + fraction.padEnd(exponent, '0'));
  if (minor <= 0n) return { ok: false, reason: 'must be greater than zero' };
  return { ok: true, minor: minor as MinorUnits };
}

/** Formats minor units as a decimal string with `decimals` fraction digits, never fewer than the exponent. */
export function formatMinor(minor: bigint, exponent: number, decimals: number = exponent): string {
  const negative = minor < 0n;
  const digits = (negative ? -minor : minor).toString().padStart(exponent + 1, '0');
  const whole = digits.slice(0, digits.length - exponent);
  let fraction = digits.slice(digits.length - exponent);
  fraction = fraction.padEnd(decimals, '0');
  return `${negative ? '-' : ''}${whole}${fraction ? `.${fraction}` : ''}`;
}

/** The JSON number for an amount. Exact for every amount below the configured maximum (well under 2^53). */
export function minorToNumber(minor: bigint, exponent: number): number {
  return Number(formatMinor(minor, exponent));
}
