import { expect } from 'chai';
import { createLogger } from '@payments/service-kit';
import { createCurrencyDirectory } from '../src/data/currency-directory.js';
import { startCurrencyStub, type CurrencyStub } from './support/currency-stub.js';

describe('currency directory (the ledger view of the currency service)', () => {
  let stub: CurrencyStub;
  let clock = 0;
  const directory = () =>
    createCurrencyDirectory({
      baseUrl: stub.url,
      ttlMs: 1000,
      rateTtlMs: 100,
      rateStaleGraceMs: 1000,
      logger: createLogger('currency-test', 'silent'),
      now: () => clock,
    });

  beforeEach(async () => {
    stub = await startCurrencyStub();
    clock = 0;
  });
  afterEach(() => stub.close());

  it('reads exponents and the supported set', async () => {
    const currencies = directory();
    expect(await currencies.find('JPY')).to.deep.equal({ code: 'JPY', exponent: 0, supported: true });
    expect(await currencies.find('GBP')).to.deep.include({ supported: false });
    expect(await currencies.find('XYZ')).to.equal(null);
    expect(await currencies.find('usd/../x')).to.equal(null);
    expect((await currencies.supported()).map((c) => c.code)).to.deep.equal(['USD', 'EUR', 'JPY', 'KWD']);
  });

  it('asks the currency service once per code within the TTL, also for concurrent lookups', async () => {
    const currencies = directory();
    await Promise.all(Array.from({ length: 10 }, () => currencies.find('USD')));
    await currencies.find('USD');
    expect(stub.requests()).to.equal(1);
    clock += 1001;
    await currencies.find('USD');
    expect(stub.requests()).to.equal(2);
  });

  it('caches exchange rates for their own TTL and answers null when there is none', async () => {
    const currencies = directory();
    expect(await currencies.rate('USD', 'EUR')).to.deep.include({ rate: '0.9' });
    await currencies.rate('USD', 'EUR');
    expect(stub.requests()).to.equal(1);
    clock += 101;
    await currencies.rate('USD', 'EUR');
    expect(stub.requests()).to.equal(2);
    expect(await currencies.rate('KWD', 'JPY')).to.equal(null);
  });

  it('serves a stale value while the currency service is down, and 503 when it never answered', async () => {
    const currencies = directory();
    await currencies.find('USD');
    await stub.close();
    clock += 5000;
    expect(await currencies.find('USD')).to.deep.include({ exponent: 2 });
    let code: unknown;
    await currencies.find('EUR').catch((error: { code?: string }) => (code = error.code));
    expect(code).to.equal('SERVICE_UNAVAILABLE');
    stub = await startCurrencyStub();
  });

  it('converts at a stale rate only for the grace period after its TTL, then answers 503', async () => {
    const currencies = directory();
    await currencies.rate('USD', 'EUR');
    await currencies.find('USD');
    await stub.close();
    clock += 100 + 1000;
    expect(await currencies.rate('USD', 'EUR')).to.deep.include({ rate: '0.9' });
    clock += 1;
    let code: unknown;
    await currencies.rate('USD', 'EUR').catch((error: { code?: string }) => (code = error.code));
    expect(code).to.equal('SERVICE_UNAVAILABLE');
    // Exponents do not move with the market: they are still served.
    expect(await currencies.find('USD')).to.deep.include({ exponent: 2 });
    stub = await startCurrencyStub();
  });
});
