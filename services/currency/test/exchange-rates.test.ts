import { expect } from 'chai';
import { Decimal } from 'decimal.js';
import { AppError, createLogger } from '@payments/service-kit';
import { checkRateTable, crossRate, ratesAgainst, type RateTable } from '../src/domain/exchange-rates.js';
import { createRateCache } from '../src/domain/rate-cache.js';
import { createReferenceRateSource } from '../src/data/reference-rate-source.js';
import { catalogueEntries } from '../src/domain/catalogue.js';

const table = (rates: Record<string, string>, base = 'USD'): RateTable => {
  const checked = checkRateTable({ base, as_of: '2025-01-02T16:00:00Z', rates });
  if (!checked.ok) throw new Error(checked.errors.join('; '));
  return checked.table;
};

describe('exchange rates', () => {
  describe('rate tables', () => {
    it('accepts rates as decimal strings and implies the base at 1', () => {
      expect(table({ EUR: '0.9662' }).rates).to.deep.equal({ EUR: '0.9662', USD: '1' });
    });

    it('rejects rates given as JSON numbers, signed, exponential or zero', () => {
      for (const rate of [0.92, '-0.92', '9.2e-1', '0', '0.000', '']) {
        const checked = checkRateTable({ base: 'USD', as_of: '2025-01-02T16:00:00Z', rates: { EUR: rate } });
        expect(checked.ok, String(rate)).to.equal(false);
      }
    });

    it('rejects a base rate other than 1, a malformed code and a missing as_of', () => {
      expect(checkRateTable({ base: 'USD', as_of: '2025-01-02T16:00:00Z', rates: { USD: '2' } }).ok).to.equal(
        false,
      );
      expect(checkRateTable({ base: 'USD', as_of: '2025-01-02T16:00:00Z', rates: { eur: '1' } }).ok).to.equal(
        false,
      );
      expect(checkRateTable({ base: 'USD', rates: { EUR: '1' } }).ok).to.equal(false);
    });

    it('ships a valid reference snapshot covering every default supported currency with ISO codes', async () => {
      const reference = await createReferenceRateSource().fetchRates();
      expect(reference.base).to.equal('USD');
      expect(reference.rates).to.include.keys('USD', 'EUR', 'GBP', 'JPY', 'CHF', 'CAD', 'AUD', 'KWD');
      const known = new Set(catalogueEntries.map((entry) => entry.code));
      for (const code of Object.keys(reference.rates)) expect(known.has(code), code).to.equal(true);
    });

    it('refuses an invalid reference table when the source is created', () => {
      expect(() => createReferenceRateSource({ base: 'USD', rates: {} })).to.throw(/reference rate table/);
    });
  });

  describe('cross rates', () => {
    const rates = table({ EUR: '0.9662', JPY: '157.21', KWD: '0.3083', GBP: '0.8077' });

    it('serves a rate against the base exactly as the table gives it', () => {
      expect(crossRate(rates, 'USD', 'JPY')).to.equal('157.21');
      expect(crossRate(rates, 'USD', 'KWD')).to.equal('0.3083');
    });

    it('computes other pairs through the base, rounded down to 10 significant digits', () => {
      expect(crossRate(rates, 'EUR', 'USD')).to.equal('1.034982405');
      expect(crossRate(rates, 'JPY', 'KWD')).to.equal('0.001961071178');
      expect(crossRate(rates, 'EUR', 'JPY')).to.equal('162.7095839');
      expect(crossRate(rates, 'KWD', 'JPY')).to.equal('509.9253973');
    });

    it('computes in decimal, so 0.3 / 0.1 is exactly 3', () => {
      expect(crossRate(table({ AAA: '0.1', BBB: '0.3' }), 'AAA', 'BBB')).to.equal('3');
    });

    it('never serves more than the exact cross rate, so no round trip through the reference table exceeds 1', async () => {
      const reference = await createReferenceRateSource().fetchRates();
      const Exact = Decimal.clone({ precision: 60 });
      const codes = Object.keys(reference.rates);
      for (const from of codes) {
        for (const to of codes) {
          const served = new Exact(crossRate(reference, from, to) as string);
          const exact = new Exact(reference.rates[to] as string).div(reference.rates[from] as string);
          expect(served.lte(exact), `${from}→${to}`).to.equal(true);
          const back = new Exact(crossRate(reference, to, from) as string);
          expect(served.times(back).lte(1), `${from}→${to}→${from}`).to.equal(true);
        }
      }
    });

    it('gives 1 from a currency to itself and null without a rate', () => {
      expect(crossRate(rates, 'EUR', 'EUR')).to.equal('1');
      expect(crossRate(rates, 'EUR', 'CLP')).to.equal(null);
      expect(crossRate(rates, 'CLP', 'EUR')).to.equal(null);
    });

    it('lists every other currency against a base, in code order', () => {
      expect(ratesAgainst(rates, 'EUR')).to.deep.equal({
        GBP: '0.8359552887',
        JPY: '162.7095839',
        KWD: '0.3190850755',
        USD: '1.034982405',
      });
      expect(ratesAgainst(rates, 'CLP')).to.equal(null);
    });
  });

  describe('rate cache', () => {
    const logger = createLogger('rate-cache-test', 'silent');

    it('shares one fetch between requests that arrive together', async () => {
      let fetches = 0;
      const cache = createRateCache({
        source: {
          name: 'slow',
          fetchRates: async () => {
            fetches += 1;
            await new Promise((resolve) => setTimeout(resolve, 20));
            return table({ EUR: '0.9' });
          },
        },
        ttlMs: 60_000,
        graceMs: 0,
        logger,
      });
      const answers = await Promise.all([cache.current(), cache.current(), cache.current()]);
      expect(fetches).to.equal(1);
      expect(answers.map((answer) => answer.table.rates.EUR)).to.deep.equal(['0.9', '0.9', '0.9']);
    });

    it('fails with 503 SERVICE_UNAVAILABLE when the source fails and nothing was fetched before', async () => {
      const cache = createRateCache({
        source: { name: 'down', fetchRates: () => Promise.reject(new Error('down')) },
        ttlMs: 60_000,
        graceMs: 300_000,
        logger,
      });
      const error = await cache.current().then(
        () => null,
        (e: unknown) => e,
      );
      expect(error).to.be.instanceOf(AppError);
      expect((error as AppError).code).to.equal('SERVICE_UNAVAILABLE');
    });
  });
});
