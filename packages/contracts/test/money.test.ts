import { expect } from 'chai';
import { formatMinor, minorToNumber, parseAmount, type MinorUnits } from '../src/money.js';

const minor = (input: unknown, exponent: number) => {
  const result = parseAmount(input, exponent);
  if (!result.ok) throw new Error(result.reason);
  return result.minor;
};

const reason = (input: unknown, exponent: number) => {
  const result = parseAmount(input, exponent);
  return result.ok ? null : result.reason;
};

describe('money', () => {
  describe('parseAmount', () => {
    it('reads JSON numbers and decimal strings into exact minor units', () => {
      expect(minor(100.5, 2)).to.equal(10050n);
      expect(minor('100.50', 2)).to.equal(10050n);
      expect(minor(0.1, 2)).to.equal(10n);
      expect(minor(1.005, 3)).to.equal(1005n);
    });

    it('uses the exponent of each currency', () => {
      expect(minor(100, 0)).to.equal(100n);
      expect(minor('1.234', 3)).to.equal(1234n);
      expect(minor('0.0001', 4)).to.equal(1n);
    });

    it('makes 0.1 + 0.2 exactly 0.30 when the two amounts are added as minor units', () => {
      const total = (minor(0.1, 2) + minor(0.2, 2)) as MinorUnits;
      expect(formatMinor(total, 2)).to.equal('0.30');
      expect(0.1 + 0.2).to.not.equal(0.3);
    });

    it('accepts trailing zeros beyond the exponent, which change nothing', () => {
      expect(minor('5.000', 2)).to.equal(500n);
      expect(minor('7.0', 0)).to.equal(7n);
    });

    it('rejects more decimals than the currency allows', () => {
      expect(reason('1.001', 2)).to.match(/at most 2 decimal places/);
      expect(reason(1.5, 0)).to.match(/whole number/);
    });

    it('rejects zero, negative, non-finite and non-numeric amounts', () => {
      expect(reason(0, 2)).to.match(/greater than zero/);
      expect(reason('0.00', 2)).to.match(/greater than zero/);
      expect(reason(-5, 2)).to.match(/greater than zero/);
      expect(reason(Number.NaN, 2)).to.match(/finite/);
      expect(reason(Number.POSITIVE_INFINITY, 2)).to.match(/finite/);
      expect(reason('ten', 2)).to.match(/plain decimal/);
      expect(reason('1e3', 2)).to.match(/plain decimal/);
      expect(reason(null, 2)).to.match(/number or a decimal string/);
      expect(reason(true, 2)).to.match(/number or a decimal string/);
    });

    it('rejects numbers so large that JavaScript prints them in exponent form', () => {
      expect(reason(1e21, 2)).to.match(/plain decimal/);
      expect(reason('9'.repeat(50), 2)).to.match(/plain decimal/);
    });
  });

  describe('formatMinor', () => {
    it('prints the currency exponent by default', () => {
      expect(formatMinor(10050n, 2)).to.equal('100.50');
      expect(formatMinor(5n, 2)).to.equal('0.05');
      expect(formatMinor(100n, 0)).to.equal('100');
      expect(formatMinor(1234n, 3)).to.equal('1.234');
    });

    it('pads to more decimals when asked, and never drops digits', () => {
      expect(formatMinor(100n, 0, 2)).to.equal('100.00');
      expect(formatMinor(1234n, 3, 2)).to.equal('1.234');
    });

    it('prints negative amounts', () => {
      expect(formatMinor(-150n, 2)).to.equal('-1.50');
    });
  });

  it('turns minor units into the JSON number for the amount', () => {
    expect(minorToNumber(10050n, 2)).to.equal(100.5);
    expect(minorToNumber(30n, 2)).to.equal(0.3);
    expect(minorToNumber(99_999_999_999n, 2)).to.equal(999_999_999.99);
  });
});
