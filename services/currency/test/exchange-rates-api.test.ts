import { createServer, type Server } from 'node:http';
import { expect } from 'chai';
import { createTestDatabase, type TestDatabase } from '@payments/testkit';
import type { RateSource, RateTable } from '../src/domain/exchange-rates.js';
import { expectProblem, startCurrencyOn, type CurrencyUnderTest } from './currency-under-test.js';

interface RatesBody {
  base: string;
  as_of: string;
  cached: boolean;
  rates: Record<string, string>;
}

interface RateBody {
  from: string;
  to: string;
  rate: string;
  as_of: string;
  cached: boolean;
}

const SNAPSHOT: RateTable = {
  base: 'USD',
  as_of: '2025-03-01T12:00:00Z',
  rates: { USD: '1', EUR: '0.5', JPY: '150', KWD: '0.3' },
};

interface FakeSource {
  calls: number;
  failing: boolean;
  table: RateTable;
  source: RateSource;
}

/** A source whose calls are counted and which fails on demand. */
function createFakeSource(): FakeSource {
  const fake: FakeSource = {
    calls: 0,
    failing: false,
    table: SNAPSHOT,
    source: {
      name: 'fake',
      fetchRates: async () => {
        fake.calls += 1;
        if (fake.failing) throw new Error('the rate source is down');
        return fake.table;
      },
    },
  };
  return fake;
}

describe('exchange rates over HTTP', () => {
  let database: TestDatabase;

  before(async () => {
    database = await createTestDatabase('currency');
  });

  after(async () => {
    await database?.drop();
  });

  describe('from the reference table', () => {
    let currency: CurrencyUnderTest;

    before(async () => {
      currency = await startCurrencyOn(database);
    });

    after(async () => {
      await currency?.stop();
    });

    it('lists rates against a base as decimal strings, with the snapshot date', async () => {
      const response = await currency.get('/api/currencies/rates?base=USD');
      expect(response.status).to.equal(200);
      expect(response.headers.get('cache-control')).to.equal('no-store');
      const body = (await response.json()) as RatesBody;
      expect(body).to.include({ base: 'USD', as_of: '2025-01-02T16:00:00Z' });
      expect(body.rates).to.include({ EUR: '0.9662', JPY: '157.21', KWD: '0.3083' });
      expect(body.rates).to.not.have.key('USD');
    });

    it('uses the default currency as the base when none is given, and takes a base in any case', async () => {
      expect(((await (await currency.get('/api/currencies/rates')).json()) as RatesBody).base).to.equal(
        'USD',
      );
      const euro = (await (await currency.get('/api/currencies/rates?base=eur')).json()) as RatesBody;
      expect(euro.base).to.equal('EUR');
      expect(euro.rates.USD).to.equal('1.034982405');
    });

    it('gives the rate between two currencies, computed through USD', async () => {
      const response = await currency.get('/api/currencies/jpy/rate/KWD');
      expect(response.status).to.equal(200);
      expect(await response.json()).to.deep.include({
        from: 'JPY',
        to: 'KWD',
        rate: '0.001961071178',
        as_of: '2025-01-02T16:00:00Z',
      });
    });

    it('gives 1 from a currency to itself', async () => {
      expect(((await (await currency.get('/api/currencies/EUR/rate/EUR')).json()) as RateBody).rate).to.equal(
        '1',
      );
    });

    it('answers 400 for a malformed base or code', async () => {
      await expectProblem(await currency.get('/api/currencies/rates?base=US'), 400, 'VALIDATION_ERROR');
      await expectProblem(await currency.get('/api/currencies/US/rate/EUR'), 400, 'VALIDATION_ERROR');
      await expectProblem(await currency.get('/api/currencies/USD/rate/EURO'), 400, 'VALIDATION_ERROR');
    });

    it('answers 404 for an unknown currency and for a currency without a rate', async () => {
      await expectProblem(await currency.get('/api/currencies/rates?base=ABC'), 404, 'RESOURCE_NOT_FOUND');
      await expectProblem(await currency.get('/api/currencies/rates?base=CLP'), 404, 'RESOURCE_NOT_FOUND');
      await expectProblem(await currency.get('/api/currencies/ABC/rate/USD'), 404, 'RESOURCE_NOT_FOUND');
      await expectProblem(await currency.get('/api/currencies/USD/rate/CLP'), 404, 'RESOURCE_NOT_FOUND');
    });
  });

  describe('through the cache', () => {
    const TTL_SECONDS = 60;
    const GRACE_SECONDS = 300;
    let currency: CurrencyUnderTest;
    let fake: FakeSource;
    let clock: number;

    const rate = async (path = '/api/currencies/USD/rate/EUR') => {
      const response = await currency.get(path);
      expect(response.status, path).to.equal(200);
      return (await response.json()) as RateBody;
    };
    const advanceSeconds = (seconds: number) => {
      clock += seconds * 1000;
    };

    beforeEach(async () => {
      fake = createFakeSource();
      clock = Date.parse('2025-03-01T12:00:00Z');
      currency = await startCurrencyOn(
        database,
        {
          RATES_CACHE_TTL_SECONDS: String(TTL_SECONDS),
          RATES_STALE_GRACE_SECONDS: String(GRACE_SECONDS),
        },
        { rateSource: fake.source, now: () => clock },
      );
    });

    afterEach(async () => {
      await currency?.stop();
    });

    it('serves the rate the source gives', async () => {
      expect(await rate()).to.include({ rate: '0.5', as_of: '2025-03-01T12:00:00Z', cached: false });
      expect(await rate('/api/currencies/EUR/rate/JPY')).to.include({ rate: '300' });
    });

    it('answers a second request within the TTL without asking the source', async () => {
      expect((await rate()).cached).to.equal(false);
      advanceSeconds(TTL_SECONDS - 1);
      expect((await rate()).cached).to.equal(true);
      expect(((await (await currency.get('/api/currencies/rates')).json()) as RatesBody).cached).to.equal(
        true,
      );
      expect(fake.calls).to.equal(1);
    });

    it('asks the source again once the TTL has passed', async () => {
      await rate();
      fake.table = { ...SNAPSHOT, as_of: '2025-03-01T12:01:00Z', rates: { ...SNAPSHOT.rates, EUR: '0.6' } };
      advanceSeconds(TTL_SECONDS);
      expect(await rate()).to.include({ rate: '0.6', as_of: '2025-03-01T12:01:00Z', cached: false });
      expect(fake.calls).to.equal(2);
    });

    it('serves the last good rate while the source fails within the grace period', async () => {
      await rate();
      fake.failing = true;
      advanceSeconds(TTL_SECONDS + GRACE_SECONDS - 1);
      expect(await rate()).to.include({ rate: '0.5', cached: true });
      expect(fake.calls).to.equal(2);
    });

    it('answers 503 once the last good rate is older than TTL plus grace, and recovers with the source', async () => {
      await rate();
      fake.failing = true;
      advanceSeconds(TTL_SECONDS + GRACE_SECONDS);
      await expectProblem(await currency.get('/api/currencies/USD/rate/EUR'), 503, 'SERVICE_UNAVAILABLE');
      await expectProblem(await currency.get('/api/currencies/rates'), 503, 'SERVICE_UNAVAILABLE');
      fake.failing = false;
      expect(await rate()).to.include({ rate: '0.5', cached: false });
    });

    it('answers 503 when the source fails before any rate was fetched', async () => {
      fake.failing = true;
      const response = await currency.get('/api/currencies/USD/rate/EUR');
      await expectProblem(response, 503, 'SERVICE_UNAVAILABLE');
    });
  });

  describe('from a URL', () => {
    let server: Server;
    let sourceUrl: string;
    let hits: number;
    let answer: { status: number; body: unknown };

    before(async () => {
      server = createServer((_req, res) => {
        hits += 1;
        res.writeHead(answer.status, { 'content-type': 'application/json' }).end(JSON.stringify(answer.body));
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      sourceUrl = `http://127.0.0.1:${(server.address() as { port: number }).port}/rates.json`;
    });

    after(async () => {
      await new Promise((resolve) => server.close(resolve));
    });

    const withUrlSource = async (check: (currency: CurrencyUnderTest) => Promise<void>) => {
      hits = 0;
      const currency = await startCurrencyOn(database, { RATES_SOURCE_URL: sourceUrl });
      try {
        await check(currency);
      } finally {
        await currency.stop();
      }
    };

    it('serves the rates the URL answers and fetches them once per TTL', async () => {
      answer = { status: 200, body: { ...SNAPSHOT, rates: { EUR: '0.8', GBP: '0.7' } } };
      await withUrlSource(async (currency) => {
        const first = (await (await currency.get('/api/currencies/EUR/rate/GBP')).json()) as RateBody;
        expect(first).to.include({ rate: '0.875', as_of: SNAPSHOT.as_of, cached: false });
        const second = (await (await currency.get('/api/currencies/rates?base=GBP')).json()) as RatesBody;
        expect(second).to.deep.include({ cached: true, rates: { EUR: '1.142857142', USD: '1.428571428' } });
        expect(hits).to.equal(1);
      });
    });

    it('answers 503 when the URL fails or sends something that is not a rate table', async () => {
      for (const failure of [
        { status: 500, body: { error: 'down' } },
        { status: 200, body: { base: 'USD', as_of: SNAPSHOT.as_of, rates: { EUR: 0.8 } } },
      ]) {
        answer = failure;
        await withUrlSource(async (currency) => {
          await expectProblem(await currency.get('/api/currencies/rates'), 503, 'SERVICE_UNAVAILABLE');
          expect(hits).to.equal(1);
        });
      }
    });
  });
});
