import { expect } from 'chai';
import { toMinorUnits } from '@payments/contracts';
import { AppError } from '@payments/service-kit';
import { feeFor, feeRule } from '../src/domain/fees.js';
import { convertAmount, divideRoundingHalfUp, parseDecimal, readAmount } from '../src/domain/money.js';

const USD = { code: 'USD', exponent: 2 };
const JPY = { code: 'JPY', exponent: 0 };
const KWD = { code: 'KWD', exponent: 3 };
const minor = (value: number | bigint) => toMinorUnits(BigInt(value));

function refusal(run: () => unknown): AppError {
  try {
    run();
  } catch (error) {
    if (error instanceof AppError) return error;
    throw error;
  }
  throw new Error('expected a refusal');
}

describe('money rules', () => {
  describe('readAmount', () => {
    it('reads numbers and decimal strings exactly into minor units of the currency', () => {
      expect(readAmount(100.1, USD, 1_000_000)).to.equal(10010n);
      expect(readAmount('0.29', USD, 1_000_000)).to.equal(29n);
      expect(readAmount(1500, JPY, 1_000_000)).to.equal(1500n);
      expect(readAmount('1.234', KWD, 1_000_000)).to.equal(1234n);
    });

    it('refuses more decimals than the currency has, naming the amount field', () => {
      const error = refusal(() => readAmount(1.234, USD, 1_000_000));
      expect(error.code).to.equal('INVALID_AMOUNT');
      expect(error.errors).to.deep.equal([
        { field: 'amount', message: 'must have at most 2 decimal places in this currency' },
      ]);
      expect(refusal(() => readAmount('1.5', JPY, 1_000_000)).code).to.equal('INVALID_AMOUNT');
    });

    it('refuses zero, negatives, non-numbers and amounts above the maximum', () => {
      for (const input of [0, '0.00', -1, '-0.01', 'abc', null, Number.POSITIVE_INFINITY, '1e5']) {
        expect(refusal(() => readAmount(input, USD, 1_000_000)).code, String(input)).to.equal(
          'INVALID_AMOUNT',
        );
      }
      expect(readAmount(1_000_000, USD, 1_000_000)).to.equal(100_000_000n);
      expect(refusal(() => readAmount('1000000.01', USD, 1_000_000)).detail).to.match(
        /must not exceed 1000000 USD/,
      );
      expect(readAmount('1000000.000', KWD, 1_000_000)).to.equal(1_000_000_000n);
    });
  });

  describe('divideRoundingHalfUp', () => {
    it('rounds halves up and everything else to the nearest integer', () => {
      expect(divideRoundingHalfUp(5n, 10n)).to.equal(1n);
      expect(divideRoundingHalfUp(4n, 10n)).to.equal(0n);
      expect(divideRoundingHalfUp(15n, 10n)).to.equal(2n);
      expect(divideRoundingHalfUp(149n, 100n)).to.equal(1n);
      expect(divideRoundingHalfUp(0n, 7n)).to.equal(0n);
    });
  });

  describe('convertAmount', () => {
    it('converts between exponents at an exact decimal rate, rounding half up', () => {
      const rate = (text: string) => parseDecimal(text) as NonNullable<ReturnType<typeof parseDecimal>>;
      expect(convertAmount(minor(1000), rate('0.9'), USD, USD)).to.equal(900n);
      expect(convertAmount(minor(1), rate('150.25'), USD, JPY)).to.equal(2n);
      expect(convertAmount(minor(1000), rate('150.25'), USD, JPY)).to.equal(1503n);
      expect(convertAmount(minor(1000), rate('0.0066'), JPY, USD)).to.equal(660n);
      expect(convertAmount(minor(12345), rate('0.307'), USD, KWD)).to.equal(37899n);
      expect(convertAmount(minor(1), rate('0.001'), USD, USD)).to.equal(0n);
    });

    it('parses only plain non-negative decimals as rates', () => {
      expect(parseDecimal('1.0834')).to.deep.equal({ units: 10834n, scale: 4 });
      expect(parseDecimal('7')).to.deep.equal({ units: 7n, scale: 0 });
      for (const text of ['1e-3', '-1', 'abc', '']) expect(parseDecimal(text), text).to.equal(null);
    });
  });

  describe('feeFor', () => {
    it('adds the fixed part and the percentage, rounding once, half up, in minor units', () => {
      expect(feeFor(minor(1000), feeRule('0.25', '1'), USD)).to.equal(35n);
      expect(feeFor(minor(3333), feeRule('0', '0.5'), USD)).to.equal(17n);
      expect(feeFor(minor(100), feeRule('0', '0.5'), USD)).to.equal(1n);
      expect(feeFor(minor(99), feeRule('0', '0.5'), USD)).to.equal(0n);
      // 0.004 + 0.001 = 0.005 rounds up only when added before rounding.
      expect(feeFor(minor(10), feeRule('0.004', '1'), USD)).to.equal(1n);
    });

    it('reads the fixed part in major units of the account currency', () => {
      expect(feeFor(minor(1000), feeRule('0.30', '0'), JPY)).to.equal(0n);
      expect(feeFor(minor(1000), feeRule('0.5', '0'), JPY)).to.equal(1n);
      expect(feeFor(minor(1000), feeRule('0.30', '0'), KWD)).to.equal(300n);
    });

    it('is zero by default', () => {
      expect(feeFor(minor(123456), feeRule('0', '0'), USD)).to.equal(0n);
    });
  });
});
