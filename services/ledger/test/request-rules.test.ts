import { expect } from 'chai';
import { AppError } from '@payments/service-kit';
import { readDateRange } from '../src/domain/history.js';
import { readIdempotencyKey, requestFingerprint } from '../src/domain/idempotency.js';
import { readMetadata } from '../src/domain/metadata.js';

const codeOf = (run: () => unknown) => {
  try {
    run();
  } catch (error) {
    return error instanceof AppError ? error.code : 'other';
  }
  return 'none';
};

describe('request rules', () => {
  it('turns from/to days into an inclusive UTC range', () => {
    expect(readDateRange('2024-03-01', '2024-03-31')).to.deep.equal({
      from: new Date('2024-03-01T00:00:00.000Z'),
      before: new Date('2024-04-01T00:00:00.000Z'),
    });
    expect(readDateRange()).to.deep.equal({ from: undefined, before: undefined });
  });

  it('refuses impossible days and reversed ranges', () => {
    expect(codeOf(() => readDateRange('2024-02-30'))).to.equal('VALIDATION_ERROR');
    expect(codeOf(() => readDateRange(undefined, '2023-13-01'))).to.equal('VALIDATION_ERROR');
    expect(codeOf(() => readDateRange('2024-03-02', '2024-03-01'))).to.equal('VALIDATION_ERROR');
    expect(codeOf(() => readDateRange('2024-02-29', '2024-02-29'))).to.equal('none');
  });

  it('fingerprints requests by operation, account and body, ignoring key order', () => {
    const a = requestFingerprint('deposit', 'acc', { amount: 1, currency: 'USD' });
    expect(requestFingerprint('deposit', 'acc', { currency: 'USD', amount: 1 })).to.equal(a);
    expect(requestFingerprint('deposit', 'acc', { amount: '1', currency: 'USD' })).to.not.equal(a);
    expect(requestFingerprint('withdrawal', 'acc', { amount: 1, currency: 'USD' })).to.not.equal(a);
    expect(requestFingerprint('deposit', 'other', { amount: 1, currency: 'USD' })).to.not.equal(a);
  });

  it('accepts idempotency keys of visible ASCII up to 255 characters', () => {
    expect(readIdempotencyKey(undefined)).to.equal(null);
    expect(readIdempotencyKey('order-42:retry')).to.equal('order-42:retry');
    expect(codeOf(() => readIdempotencyKey(''))).to.equal('VALIDATION_ERROR');
    expect(codeOf(() => readIdempotencyKey('a'.repeat(256)))).to.equal('VALIDATION_ERROR');
    expect(codeOf(() => readIdempotencyKey('café'))).to.equal('VALIDATION_ERROR');
  });

  it('bounds account metadata in size and depth', () => {
    expect(readMetadata(undefined)).to.deep.equal({});
    expect(readMetadata({ a: { b: { c: { d: { e: 1 } } } } })).to.be.an('object');
    expect(codeOf(() => readMetadata({ a: { b: { c: { d: { e: { f: 1 } } } } } }))).to.equal(
      'VALIDATION_ERROR',
    );
    expect(codeOf(() => readMetadata({ note: 'x'.repeat(4100) }))).to.equal('VALIDATION_ERROR');
    expect(codeOf(() => readMetadata(['a']))).to.equal('VALIDATION_ERROR');
    expect(codeOf(() => readMetadata(null))).to.equal('VALIDATION_ERROR');
  });
});
