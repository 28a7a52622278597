import { expect } from 'chai';
import fc from 'fast-check';
import { toMinorUnits, type MinorUnits } from '@payments/contracts';
import {
  catalogueEntries,
  checkRateTable,
  createReferenceRateSource,
  crossRate,
  type RateTable,
} from '@payments/currency';
import { feeFor, feeRule, type FeeRule } from '../src/domain/fees.js';
import { convertAmount, maxAmountOf, parseDecimal, type CurrencyUnit } from '../src/domain/money.js';

/** The ledger's own limit per operation (MAX_AMOUNT), in major units. */
const MAX_MAJOR = 1_000_000;

/** A non-negative fraction, exact: money valued at a table's rates is rarely a whole number of anything. */
interface Fraction {
  num: bigint;
  den: bigint;
}

const add = (a: Fraction, b: Fraction): Fraction => ({
  num: a.num * b.den + b.num * a.den,
  den: a.den * b.den,
});
const atMost = (a: Fraction, b: Fraction) => a.num * b.den <= b.num * a.den;

function rateFraction(rate: string): Fraction {
  const decimal = parseDecimal(rate);
  if (!decimal) throw new Error(`not a rate: ${rate}`);
  return { num: decimal.units, den: 10n ** BigInt(decimal.scale) };
}

/** What `minor` units of `currency` are worth in `valuation`, at the table's own (exact) rates. */
function valueOf(table: RateTable, currency: CurrencyUnit, minor: bigint, valuation: string): Fraction {
  const own = rateFraction(table.rates[currency.code] as string);
  const target = rateFraction(table.rates[valuation] as string);
  // minor / 10^exponent / own × target, over units per base currency.
  return {
    num: minor * own.den * target.num,
    den: 10n ** BigInt(currency.exponent) * own.num * target.den,
  };
}

type Balances = Map<string, bigint>;

function totalValue(
  table: RateTable,
  units: Map<string, CurrencyUnit>,
  balances: Balances,
  valuation: string,
) {
  let total: Fraction = { num: 0n, den: 1n };
  for (const [code, minor] of balances) {
    total = add(total, valueOf(table, units.get(code) as CurrencyUnit, minor, valuation));
  }
  return total;
}

/** How much of the source balance one step moves: a random share, everything it may, or a single minor unit. */
type Size = { kind: 'share'; permille: number } | { kind: 'all' } | { kind: 'dust' };

interface Step {
  from: number;
  to: number;
  size: Size;
}

const sizeArb: fc.Arbitrary<Size> = fc.oneof(
  fc.record({ kind: fc.constant('share' as const), permille: fc.integer({ min: 1, max: 1000 }) }),
  fc.constant({ kind: 'all' as const }),
  fc.constant({ kind: 'dust' as const }),
);

const decimalText = (maxInt: number, maxScale: number) =>
  fc
    .tuple(fc.integer({ min: 0, max: maxInt }), fc.integer({ min: 0, max: maxScale }), fc.nat())
    .map(([int, scale, digits]) =>
      scale === 0 ? String(int) : `${int}.${String(digits % 10 ** scale).padStart(scale, '0')}`,
    );

/** Fee rules as an operator may configure them (FEE_*_FIXED up to 8 decimals, FEE_*_PERCENT up to 6). */
const feeRuleArb: fc.Arbitrary<FeeRule> = fc
  .tuple(fc.oneof(fc.constant('0'), decimalText(2, 8)), fc.oneof(fc.constant('0'), decimalText(5, 6)))
  .map(([fixed, percent]) => feeRule(fixed, percent));

interface Outcome {
  balances: Balances;
  /** Total value after every step, the first entry before any. */
  values: Fraction[];
}

/**
 * Runs transfers between one user's accounts exactly as the ledger accepts them: the amount is capped at
 * MAX_AMOUNT, the fee (in the source currency) and the amount must be covered, the rate is the one the currency
 * service serves for the pair, and a conversion that credits nothing is refused.
 */
function runTransfers(
  table: RateTable,
  units: Map<string, CurrencyUnit>,
  start: Balances,
  steps: Step[],
  fee: FeeRule,
  valuation: string,
): Outcome {
  const codes = [...start.keys()];
  const balances: Balances = new Map(start);
  const values = [totalValue(table, units, balances, valuation)];
  for (const { from: fromIndex, to: toIndex, size } of steps) {
    const from = units.get(codes[fromIndex % codes.length] as string) as CurrencyUnit;
    const to = units.get(codes[toIndex % codes.length] as string) as CurrencyUnit;
    if (from.code === to.code) continue;
    const available = balances.get(from.code) as bigint;
    const cap = maxAmountOf(from, MAX_MAJOR) < available ? maxAmountOf(from, MAX_MAJOR) : available;
    let amount =
      size.kind === 'all' ? cap : size.kind === 'dust' ? 1n : (cap * BigInt(size.permille)) / 1000n;
    // The largest amount whose fee still fits, as a user emptying an account would try.
    while (amount > 0n && amount + feeFor(toMinorUnits(amount), fee, from) > available)
      amount -= 1n + amount / 1000n;
    if (amount <= 0n) continue;
    const minor: MinorUnits = toMinorUnits(amount);
    const charged = feeFor(minor, fee, from);
    const rate = parseDecimal(crossRate(table, from.code, to.code) as string);
    if (!rate || rate.units === 0n) continue;
    const converted = convertAmount(minor, rate, from, to);
    if (converted <= 0n) continue;
    // What the step moves is never worth more where it lands than where it left.
    expect(
      atMost(valueOf(table, to, converted, valuation), valueOf(table, from, amount, valuation)),
      `${amount} ${from.code} → ${converted} ${to.code}`,
    ).to.equal(true);
    balances.set(from.code, available - amount - charged);
    balances.set(to.code, (balances.get(to.code) as bigint) + converted);
    values.push(totalValue(table, units, balances, valuation));
  }
  return { balances, values };
}

function expectNeverIncreases(values: Fraction[]) {
  for (let i = 1; i < values.length; i += 1) {
    expect(atMost(values[i] as Fraction, values[i - 1] as Fraction), `step ${i}`).to.equal(true);
  }
}

describe('FX and fee rounding: a user never gains value (property)', () => {
  let reference: RateTable;
  let referenceUnits: Map<string, CurrencyUnit>;

  before(async () => {
    reference = await createReferenceRateSource().fetchRates();
    const exponents = new Map(catalogueEntries.map((entry) => [entry.code, entry.minor_units]));
    referenceUnits = new Map(
      Object.keys(reference.rates).map((code) => [code, { code, exponent: exponents.get(code) as number }]),
    );
  });

  const stepsArb = (currencies: number, maxLength: number) =>
    fc.array(
      fc.record({
        from: fc.integer({ min: 0, max: currencies - 1 }),
        to: fc.integer({ min: 0, max: currencies - 1 }),
        size: sizeArb,
      }),
      { minLength: 1, maxLength },
    );

  it('holds for any transfers and fees between accounts in every currency of the reference table', () => {
    const codes = [...referenceUnits.keys()];
    fc.assert(
      fc.property(
        fc.array(fc.bigInt({ min: 0n, max: 10n ** 12n }), {
          minLength: codes.length,
          maxLength: codes.length,
        }),
        stepsArb(codes.length, 40),
        feeRuleArb,
        fc.constantFrom(...codes),
        (amounts, steps, fee, valuation) => {
          const start: Balances = new Map(codes.map((code, i) => [code, amounts[i] as bigint]));
          const { values } = runTransfers(reference, referenceUnits, start, steps, fee, valuation);
          expectNeverIncreases(values);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('holds for cycles through several currencies at the largest allowed amounts, without fees', () => {
    // The 3-decimal currencies (KWD, BHD, JOD, OMR) are where a rate a hair above the exact one would show.
    const codes = [...referenceUnits.keys()];
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.constantFrom(...codes), { minLength: 2, maxLength: 6 }),
        fc.integer({ min: 1, max: 20 }),
        fc.constantFrom(...codes),
        (cycle, rounds, valuation) => {
          const first = referenceUnits.get(cycle[0] as string) as CurrencyUnit;
          const start: Balances = new Map(cycle.map((code) => [code, 0n]));
          start.set(first.code, maxAmountOf(first, MAX_MAJOR));
          const steps: Step[] = [];
          for (let round = 0; round < rounds; round += 1) {
            cycle.forEach((_, i) =>
              steps.push({ from: i, to: (i + 1) % cycle.length, size: { kind: 'all' } }),
            );
          }
          const { values } = runTransfers(
            reference,
            referenceUnits,
            start,
            steps,
            feeRule('0', '0'),
            valuation,
          );
          expectNeverIncreases(values);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('holds for any rate table, including four-decimal currencies such as CLF', () => {
    const codes = ['USD', 'CLF', 'KWD', 'JPY', 'EUR', 'BHD'];
    const exponentArb = fc.constantFrom(0, 2, 3, 4);
    const rateArb = fc
      .tuple(fc.bigInt({ min: 1n, max: 10n ** 12n }), fc.integer({ min: 0, max: 12 }))
      .map(([units, scale]) => {
        const digits = units.toString().padStart(scale + 1, '0');
        return scale === 0 ? digits : `${digits.slice(0, -scale)}.${digits.slice(-scale)}`;
      });
    fc.assert(
      fc.property(
        fc.array(rateArb, { minLength: codes.length - 1, maxLength: codes.length - 1 }),
        fc.array(exponentArb, { minLength: codes.length, maxLength: codes.length }),
        fc.array(fc.bigInt({ min: 0n, max: 10n ** 12n }), {
          minLength: codes.length,
          maxLength: codes.length,
        }),
        stepsArb(codes.length, 30),
        feeRuleArb,
        fc.constantFrom(...codes),
        (rates, exponents, amounts, steps, fee, valuation) => {
          const checked = checkRateTable({
            base: 'USD',
            as_of: '2025-01-02T16:00:00Z',
            rates: Object.fromEntries(codes.slice(1).map((code, i) => [code, rates[i] as string])),
          });
          if (!checked.ok) throw new Error(checked.errors.join('; '));
          // CLF is the four-decimal one whatever the draw, so it is always covered.
          const units = new Map(
            codes.map((code, i) => [code, { code, exponent: code === 'CLF' ? 4 : (exponents[i] as number) }]),
          );
          const start: Balances = new Map(codes.map((code, i) => [code, amounts[i] as bigint]));
          const { values } = runTransfers(checked.table, units, start, steps, fee, valuation);
          expectNeverIncreases(values);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('never lets a payment split into pieces pay less fee than the whole', () => {
    const unitArb = fc.constantFrom<CurrencyUnit>(
      { code: 'JPY', exponent: 0 },
      { code: 'USD', exponent: 2 },
      { code: 'KWD', exponent: 3 },
      { code: 'CLF', exponent: 4 },
    );
    fc.assert(
      fc.property(
        unitArb,
        feeRuleArb,
        fc.array(fc.bigInt({ min: 1n, max: 10n ** 9n }), { minLength: 1, maxLength: 50 }),
        (currency, fee, pieces) => {
          const whole = pieces.reduce((sum, piece) => sum + piece, 0n);
          const split = pieces.reduce((sum, piece) => sum + feeFor(toMinorUnits(piece), fee, currency), 0n);
          expect(split >= feeFor(toMinorUnits(whole), fee, currency)).to.equal(true);
        },
      ),
      { numRuns: 1000 },
    );
  });
});
