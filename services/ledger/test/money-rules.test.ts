import { expect } from 'chai';
import { toMinorUnits } from '@payments/contracts';
import { AppError } from '@payments/service-kit';
import { thrownBy } from '@payments/test-support';
import { feeFor, feeRule } from '../src/domain/fees.js';
import {
  convertAmount,
  divideRoundingDown,
  divideRoundingUp,
  parseDecimal,
  readAmount,
} from '../src/domain/money.js';

const USD = { code: 'USD', exponent: 2 };
const JPY = { code: 'JPY', exponent: 0 };
const KWD = { code: 'KWD', exponent: 3 };
const minor = (value: number | bigint) => toMinorUnits(BigInt(value));

const refusal = (run: () => unknown) => thrownBy(run, AppError);

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

  describe('division', () => {
    it('rounds down, toward the house for what a user is credited', () => {
      expect(divideRoundingDown(5n, 10n)).to.equal(0n);
      expect(divideRoundingDown(19n, 10n)).to.equal(1n);
      expect(divideRoundingDown(20n, 10n)).to.equal(2n);
      expect(divideRoundingDown(0n, 7n)).to.equal(0n);
    });

    it('rounds up unless exact, toward the house for what a user is charged', () => {
      expect(divideRoundingUp(1n, 10n)).to.equal(1n);
      expect(divideRoundingUp(10n, 10n)).to.equal(1n);
      expect(divideRoundingUp(11n, 10n)).to.equal(2n);
      expect(divideRoundingUp(0n, 7n)).to.equal(0n);
    });
  });

  describe('convertAmount', () => {
    it('converts between exponents at an exact decimal rate, rounding down to the target minor unit', () => {
      const rate = (text: string) => parseDecimal(text) as NonNullable<ReturnType<typeof parseDecimal>>;
      expect(convertAmount(minor(1000), rate('0.9'), USD, USD)).to.equal(900n);
      // 1.5025 JPY: rounding half up credited 2 JPY for each cent, 1.57 JPY of value.
      expect(convertAmount(minor(1), rate('150.25'), USD, JPY)).to.equal(1n);
      expect(convertAmount(minor(1000), rate('150.25'), USD, JPY)).to.equal(1502n);
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
    it('adds the fixed part and the percentage, rounding once, up, in minor units', () => {
      expect(feeFor(minor(1000), feeRule('0.25', '1'), USD)).to.equal(35n);
      expect(feeFor(minor(3333), feeRule('0', '0.5'), USD)).to.equal(17n);
      expect(feeFor(minor(100), feeRule('0', '0.5'), USD)).to.equal(1n);
      // 0.495 cents: a payment split into 0.99 pieces still pays its percentage.
      expect(feeFor(minor(99), feeRule('0', '0.5'), USD)).to.equal(1n);
      expect(feeFor(minor(1), feeRule('0', '0.01'), USD)).to.equal(1n);
      // 0.004 + 0.001 = 0.005: rounded once, after adding.
      expect(feeFor(minor(10), feeRule('0.004', '1'), USD)).to.equal(1n);
      expect(feeFor(minor(10), feeRule('0.01', '0'), USD)).to.equal(1n);
    });

    it('reads the fixed part in major units of the account currency, a fraction of a yen costing one yen', () => {
      expect(feeFor(minor(1000), feeRule('0.30', '0'), JPY)).to.equal(1n);
      expect(feeFor(minor(1000), feeRule('0.5', '0'), JPY)).to.equal(1n);
      expect(feeFor(minor(1000), feeRule('0.30', '0'), KWD)).to.equal(300n);
    });

    it('is zero by default', () => {
      expect(feeFor(minor(123456), feeRule('0', '0'), USD)).to.equal(0n);
    });
  });
});
