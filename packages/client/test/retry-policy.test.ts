import { expect } from 'chai';
import { backoffMs, isSafeToRetry, serverDelayMs, type RetryPolicy } from '../src/retry-policy.js';

const POLICY: RetryPolicy = { maxRetries: 5, baseDelayMs: 100, maxDelayMs: 1_000 };

describe('retry policy', () => {
  it('backs off exponentially, between half and all of base × 2^retry, capped', () => {
    expect([0, 1, 2, 3, 4].map((retry) => backoffMs(POLICY, retry, () => 0))).to.deep.equal([
      50, 100, 200, 400, 500,
    ]);
    expect([0, 1, 2, 3, 4].map((retry) => backoffMs(POLICY, retry, () => 1))).to.deep.equal([
      100, 200, 400, 800, 1_000,
    ]);
  });

  it('retries only reads and writes that carry an Idempotency-Key', () => {
    expect(isSafeToRetry('GET', new Headers())).to.equal(true);
    expect(isSafeToRetry('POST', new Headers())).to.equal(false);
    expect(isSafeToRetry('POST', new Headers({ 'Idempotency-Key': 'k-1' }))).to.equal(true);
    expect(isSafeToRetry('DELETE', new Headers())).to.equal(false);
  });

  it('reads Retry-After as seconds or as an HTTP date', () => {
    const now = Date.parse('2026-11-27T10:00:00Z');
    expect(serverDelayMs(new Headers({ 'Retry-After': '7' }), now)).to.equal(7_000);
    expect(serverDelayMs(new Headers({ 'Retry-After': 'Fri, 27 Nov 2026 10:00:03 GMT' }), now)).to.equal(
      3_000,
    );
    expect(serverDelayMs(new Headers({ 'Retry-After': 'Fri, 27 Nov 2026 09:00:00 GMT' }), now)).to.equal(0);
  });

  it('without Retry-After, waits for the exhausted policy of the RateLimit header the gateway sends', () => {
    const headers = new Headers({
      'RateLimit-Policy': '"address";q=100;w=10, "user";q=10000;w=86400',
      RateLimit: '"address";r=0;t=4, "user";r=9990;t=80000',
    });
    expect(serverDelayMs(headers)).to.equal(4_000);
    expect(serverDelayMs(new Headers({ RateLimit: '"address";r=3;t=4' }))).to.equal(null);
  });

  it('falls back to the older draft’s RateLimit-Reset, and to nothing', () => {
    expect(serverDelayMs(new Headers({ 'RateLimit-Reset': '2' }))).to.equal(2_000);
    expect(serverDelayMs(new Headers())).to.equal(null);
  });
});
