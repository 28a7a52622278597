import { expect } from 'chai';
import { AppError } from '@payments/service-kit';
import { thrownBy } from '@payments/test-support';
import { readAmountBound, readIdPrefix, readSearchBound } from '../src/domain/transaction-search.js';

const usd = { code: 'USD', exponent: 2 };
const jpy = { code: 'JPY', exponent: 0 };

const refusal = (run: () => unknown) => thrownBy(run, AppError);

describe("an operator's transaction search: its rules", () => {
  it('reads the start of an id as the range of ids it begins, any case, dashes or not', () => {
    expect(readIdPrefix('3F2A')).to.deep.equal({
      idRange: { low: '3f2a0000-0000-0000-0000-000000000000', high: '3f2affff-ffff-ffff-ffff-ffffffffffff' },
      referencePrefix: '3F2A',
    });
    expect(readIdPrefix('3f2a1b2c-9d')?.idRange).to.deep.equal({
      low: '3f2a1b2c-9d00-0000-0000-000000000000',
      high: '3f2a1b2c-9dff-ffff-ffff-ffffffffffff',
    });
  });

  it("reads anything else as the start of the provider's reference only", () => {
    expect(readIdPrefix('pi_3Q')).to.deep.equal({ referencePrefix: 'pi_3Q' });
    expect(readIdPrefix('---')).to.deep.equal({ referencePrefix: '---' });
  });

  it('takes a day as the whole UTC day and a moment as itself', () => {
    expect(readSearchBound('2026-03-14', 'from').toISOString()).to.equal('2026-03-14T00:00:00.000Z');
    expect(readSearchBound('2026-03-14', 'to').toISOString()).to.equal('2026-03-14T23:59:59.999Z');
    expect(readSearchBound('2026-03-14T10:00:00+02:00', 'to').toISOString()).to.equal(
      '2026-03-14T08:00:00.000Z',
    );
    expect(refusal(() => readSearchBound('2026-02-30', 'from')).code).to.equal('VALIDATION_ERROR');
  });

  it("reads amounts exactly in the currency's units, zero included, and refuses more decimals than it has", () => {
    expect(readAmountBound('10.5', 'amount_min', usd)).to.equal(1050n);
    expect(readAmountBound('0', 'amount_min', usd)).to.equal(0n);
    expect(readAmountBound('1500', 'amount_max', jpy)).to.equal(1500n);
    expect(refusal(() => readAmountBound('1.234', 'amount_min', usd)).errors).to.deep.equal([
      { field: 'amount_min', message: 'must have at most 2 decimals in USD' },
    ]);
    expect(refusal(() => readAmountBound('1.5', 'amount_max', jpy)).code).to.equal('VALIDATION_ERROR');
  });
});
