import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import type { CurrencyStatisticsView, CurrencyView } from '@payments/contracts';
import { createEvent } from '@payments/contracts';
import type { Static } from '@sinclair/typebox';
import { ConfigError, DEVELOPMENT_SERVICE_TOKEN, serviceAuthorization } from '@payments/service-kit';
import { createTestDatabase, eventually, type TestDatabase } from '@payments/testkit';
import { catalogueEntries } from '../src/domain/catalogue.js';
import { startCurrency } from '../src/index.js';
import { expectProblem, startCurrencyOn, testConfig, type CurrencyUnderTest } from './currency-under-test.js';

type CurrencyRecord = Static<typeof CurrencyView>;
type Statistics = Static<typeof CurrencyStatisticsView>;

const DEFAULT_SUPPORTED = ['AUD', 'CAD', 'CHF', 'EUR', 'GBP', 'JPY', 'KWD', 'USD'];
const ALL_CODES = catalogueEntries.map((entry) => entry.code).sort();

const codesOf = (body: { data: CurrencyRecord[] }) => body.data.map((currency) => currency.code);

describe('currency service over HTTP', () => {
  let database: TestDatabase;
  let currency: CurrencyUnderTest;

  const getJson = async <T>(path: string): Promise<T> => {
    const response = await currency.get(path);
    expect(response.status, path).to.equal(200);
    return (await response.json()) as T;
  };

  before(async () => {
    database = await createTestDatabase('currency');
    currency = await startCurrencyOn(database);
  });

  after(async () => {
    await currency?.stop();
    await database?.drop();
  });

  describe('GET /api/currencies', () => {
    it('pages through the whole catalogue, 20 at a time by default', async () => {
      const body = await getJson<{ data: CurrencyRecord[]; pagination: object }>('/api/currencies');
      expect(body.pagination).to.deep.equal({ limit: 20, offset: 0, total: ALL_CODES.length });
      expect(codesOf(body)).to.deep.equal(ALL_CODES.slice(0, 20));
      expect(Object.keys(body.data[0] as object)).to.deep.equal([
        'code',
        'name',
        'numeric_code',
        'minor_units',
        'symbol',
        'regions',
        'countries',
        'supported',
      ]);
    });

    it('gives the whole catalogue in one page of up to 200', async () => {
      const body = await getJson<{ data: CurrencyRecord[] }>('/api/currencies?limit=200');
      expect(codesOf(body)).to.deep.equal(ALL_CODES);
    });

    it('starts the page at the offset', async () => {
      const body = await getJson<{ data: CurrencyRecord[]; pagination: object }>(
        '/api/currencies?limit=5&offset=20',
      );
      expect(codesOf(body)).to.deep.equal(ALL_CODES.slice(20, 25));
      expect(body.pagination).to.deep.equal({ limit: 5, offset: 20, total: ALL_CODES.length });
    });

    it('rejects a page size outside 1..200 or not an integer, and a negative offset', async () => {
      for (const query of ['limit=201', 'limit=0', 'limit=abc', 'limit=1.5', 'offset=-1', 'offset=x']) {
        await expectProblem(await currency.get(`/api/currencies?${query}`), 400, 'VALIDATION_ERROR');
      }
    });
  });

  describe('GET /api/currencies/{code}', () => {
    it('returns the record with the ISO exponent of each currency', async () => {
      const exponents: Record<string, number> = { JPY: 0, USD: 2, KWD: 3, CLF: 4 };
      for (const [code, minorUnits] of Object.entries(exponents)) {
        const record = await getJson<CurrencyRecord>(`/api/currencies/${code}`);
        expect(record.code).to.equal(code);
        expect(record.minor_units, code).to.equal(minorUnits);
      }
    });

    it('describes the euro with its numeric code, symbol, countries, regions and support', async () => {
      const euro = await getJson<CurrencyRecord>('/api/currencies/EUR');
      expect(euro).to.include({ name: 'Euro', numeric_code: '978', symbol: '€', supported: true });
      expect(euro.regions).to.include('EU');
      expect(euro.countries).to.deep.include({ code: 'FR', name: 'France' });
    });

    it('finds a code whatever its case', async () => {
      for (const code of ['usd', 'Usd', 'uSD']) {
        expect((await getJson<CurrencyRecord>(`/api/currencies/${code}`)).code).to.equal('USD');
      }
    });

    it('answers 404 for a well-formed code that is not in the catalogue', async () => {
      for (const code of ['ABC', 'XAU']) {
        await expectProblem(await currency.get(`/api/currencies/${code}`), 404, 'RESOURCE_NOT_FOUND');
      }
    });

    it('answers 400 for a code that is not three letters', async () => {
      for (const code of ['US', 'USDX', 'U1D', '840']) {
        await expectProblem(await currency.get(`/api/currencies/${code}`), 400, 'VALIDATION_ERROR');
      }
    });
  });

  describe('supported currencies', () => {
    it('lists exactly the configured currencies', async () => {
      const body = await getJson<{ data: CurrencyRecord[] }>('/api/currencies/supported');
      expect(codesOf(body)).to.deep.equal(DEFAULT_SUPPORTED);
      expect(body.data.every((record) => record.supported)).to.equal(true);
    });

    it('says whether one code is supported', async () => {
      expect(await getJson('/api/currencies/eur/supported')).to.deep.equal({ code: 'EUR', supported: true });
      expect(await getJson('/api/currencies/CLP/supported')).to.deep.equal({ code: 'CLP', supported: false });
    });

    it('answers 404 for an unknown code and 400 for a malformed one', async () => {
      await expectProblem(await currency.get('/api/currencies/ABC/supported'), 404, 'RESOURCE_NOT_FOUND');
      await expectProblem(await currency.get('/api/currencies/EURO/supported'), 400, 'VALIDATION_ERROR');
    });
  });

  describe('GET /api/currencies/search', () => {
    it('finds a currency by the name of a country that uses it', async () => {
      expect(codesOf(await getJson('/api/currencies/search?q=japan'))).to.deep.equal(['JPY']);
      expect(codesOf(await getJson('/api/currencies/search?q=Switzerland'))).to.include('CHF');
      expect(codesOf(await getJson('/api/currencies/search?q=kuwait'))).to.deep.equal(['KWD']);
    });

    it('puts the currency whose code matches first', async () => {
      expect(codesOf(await getJson('/api/currencies/search?q=kwd'))[0]).to.equal('KWD');
    });

    it('finds currencies by part of their name', async () => {
      expect(codesOf(await getJson('/api/currencies/search?q=dinar'))).to.include.members([
        'KWD',
        'BHD',
        'JOD',
      ]);
    });

    it('returns an empty list when nothing matches', async () => {
      expect(await getJson('/api/currencies/search?q=zzzzzz')).to.deep.equal({ data: [] });
    });

    it('accepts a query of 64 characters', async () => {
      expect((await currency.get(`/api/currencies/search?q=${'a'.repeat(64)}`)).status).to.equal(200);
    });

    it('rejects a missing, empty, blank or longer than 64 characters query', async () => {
      for (const query of ['', '?q=', '?q=%20%20', `?q=${'a'.repeat(65)}`]) {
        await expectProblem(await currency.get(`/api/currencies/search${query}`), 400, 'VALIDATION_ERROR');
      }
    });
  });

  describe('GET /api/currencies/region/{region}', () => {
    it('lists EUR and CHF for Europe, named or coded in any case', async () => {
      for (const region of ['europe', 'Europe', 'EU', 'eu']) {
        const body = await getJson<{ region: object; data: CurrencyRecord[] }>(
          `/api/currencies/region/${region}`,
        );
        expect(body.region).to.deep.equal({ code: 'EU', name: 'Europe' });
        expect(codesOf(body)).to.include.members(['EUR', 'CHF']).and.not.include('JPY');
      }
    });

    it('accepts a two-word region written with a hyphen', async () => {
      const body = await getJson<{ region: object; data: CurrencyRecord[] }>(
        '/api/currencies/region/north-america',
      );
      expect(body.region).to.deep.equal({ code: 'NA', name: 'North America' });
      expect(codesOf(body)).to.include.members(['USD', 'CAD', 'MXN']);
    });

    it('answers 404 for an unknown region', async () => {
      for (const region of ['atlantis', 'XX']) {
        await expectProblem(
          await currency.get(`/api/currencies/region/${region}`),
          404,
          'RESOURCE_NOT_FOUND',
        );
      }
    });
  });

  describe('GET /api/currencies/default', () => {
    it('returns the configured default currency, USD unless configured otherwise', async () => {
      const record = await getJson<CurrencyRecord>('/api/currencies/default');
      expect(record).to.include({ code: 'USD', minor_units: 2, supported: true });
    });
  });

  describe('fixed routes beside /{code}', () => {
    it('answers each fixed path with its own resource, never as a currency code', async () => {
      expect(await getJson('/api/currencies/supported')).to.have.keys('data');
      expect(await getJson('/api/currencies/search?q=usd')).to.have.keys('data');
      expect(await getJson('/api/currencies/statistics')).to.include.keys('total', 'by_minor_units');
      expect(await getJson('/api/currencies/default')).to.include({ code: 'USD' });
      expect(await getJson('/api/currencies/rates?base=USD')).to.include.keys('base', 'rates');
      expect(await getJson('/api/currencies/region/asia')).to.include.keys('region', 'data');
    });
  });

  describe('GET /api/currencies/statistics', () => {
    const statistics = () => getJson<Statistics>('/api/currencies/statistics');
    const accountOpened = (currencyCode: string, userId: string, id = randomUUID()) =>
      createEvent(
        'AccountOpened',
        { account_id: randomUUID(), user_id: userId, currency: currencyCode },
        { id, correlationId: 'currency-test' },
      );
    const accountsIn = async (code: string, expected: number) => {
      const stats = await eventually(statistics, (s) => (s.accounts_per_currency[code] ?? 0) === expected);
      return stats.accounts_per_currency[code] ?? 0;
    };
    const consumedCount = async (type: string, outcome: string): Promise<number> => {
      const text = await (
        await currency.get('/metrics', serviceAuthorization(DEVELOPMENT_SERVICE_TOKEN))
      ).text();
      const line = text
        .split('\n')
        .find(
          (l) =>
            l.startsWith('currency_events_consumed_total{') &&
            l.includes(`type="${type}"`) &&
            l.includes(`outcome="${outcome}"`),
        );
      return line ? Number(line.split(' ').at(-1)) : 0;
    };

    it('has counts that add up', async () => {
      const stats = await statistics();
      expect(stats.total).to.equal(ALL_CODES.length);
      expect(stats.supported).to.equal(DEFAULT_SUPPORTED.length);
      const byMinorUnits = Object.values(stats.by_minor_units).reduce((sum, n) => sum + n, 0);
      expect(byMinorUnits).to.equal(stats.total);
      const europe = await getJson<{ data: unknown[] }>('/api/currencies/region/EU');
      expect(stats.by_region['Europe']).to.equal(europe.data.length);
    });

    it('counts the accounts the ledger reports opened, per currency', async () => {
      const userId = randomUUID();
      await currency.bus.publish(accountOpened('EUR', userId));
      await currency.bus.publish(accountOpened('EUR', userId));
      await currency.bus.publish(accountOpened('JPY', randomUUID()));
      expect(await accountsIn('EUR', 2)).to.equal(2);
      expect(await accountsIn('JPY', 1)).to.equal(1);
    });

    it('takes an event into account once when its id is delivered twice', async () => {
      const id = randomUUID();
      const before = await consumedCount('AccountOpened', 'duplicate');
      await currency.bus.publish(accountOpened('KWD', randomUUID(), id));
      expect(await accountsIn('KWD', 1)).to.equal(1);
      // A redelivery with another account in it shows that the event id, not the account id, stops it.
      await currency.bus.publish(accountOpened('KWD', randomUUID(), id));
      await eventually(
        () => consumedCount('AccountOpened', 'duplicate'),
        (n) => n === before + 1,
      );
      expect(await consumedCount('AccountOpened', 'duplicate')).to.equal(before + 1);
      expect((await statistics()).accounts_per_currency['KWD']).to.equal(1);
    });

    it("forgets a deleted user's accounts and keeps everyone else's", async () => {
      const leaving = randomUUID();
      const staying = randomUUID();
      await currency.bus.publish(accountOpened('GBP', leaving));
      await currency.bus.publish(accountOpened('GBP', leaving));
      await currency.bus.publish(accountOpened('GBP', staying));
      expect(await accountsIn('GBP', 3)).to.equal(3);
      await currency.bus.publish(
        createEvent(
          'UserDeleted',
          { user_id: leaving },
          { id: randomUUID(), correlationId: 'currency-test' },
        ),
      );
      expect(await accountsIn('GBP', 1)).to.equal(1);
    });
  });

  describe('HTTP caching', () => {
    const CACHEABLE = [
      '/api/currencies',
      '/api/currencies/EUR',
      '/api/currencies/EUR/supported',
      '/api/currencies/supported',
      '/api/currencies/search?q=euro',
      '/api/currencies/region/europe',
      '/api/currencies/default',
    ];

    it('sends a strong ETag and public caching for five minutes on catalogue responses', async () => {
      for (const path of CACHEABLE) {
        const response = await currency.get(path);
        expect(response.headers.get('etag'), path).to.match(/^"[\w-]+"$/);
        expect(response.headers.get('cache-control'), path).to.equal('public, max-age=300');
      }
    });

    it('answers 304 with no body when If-None-Match holds the current ETag', async () => {
      for (const path of CACHEABLE) {
        const etag = (await currency.get(path)).headers.get('etag') as string;
        const revalidated = await currency.get(path, { 'If-None-Match': etag });
        expect(revalidated.status, path).to.equal(304);
        expect(revalidated.headers.get('etag')).to.equal(etag);
        expect(await revalidated.text()).to.equal('');
      }
    });

    it('answers 304 when the ETag is one of several or given in weak form', async () => {
      const etag = (await currency.get('/api/currencies/JPY')).headers.get('etag') as string;
      for (const header of [`"other", ${etag}`, `W/${etag}`, '*']) {
        const response = await currency.get('/api/currencies/JPY', { 'If-None-Match': header });
        expect(response.status, header).to.equal(304);
      }
    });

    it('answers 200 with the body when If-None-Match holds another ETag', async () => {
      const usdTag = (await currency.get('/api/currencies/USD')).headers.get('etag') as string;
      const response = await currency.get('/api/currencies/EUR', { 'If-None-Match': usdTag });
      expect(response.status).to.equal(200);
      expect(((await response.json()) as CurrencyRecord).code).to.equal('EUR');
    });

    it('gives the same ETag for the same content, whatever the case of the code', async () => {
      const lower = (await currency.get('/api/currencies/eur')).headers.get('etag');
      const upper = (await currency.get('/api/currencies/EUR')).headers.get('etag');
      expect(lower).to.equal(upper);
    });

    it('makes caches revalidate statistics, whose ETag changes with the counts', async () => {
      const first = await currency.get('/api/currencies/statistics');
      expect(first.headers.get('cache-control')).to.equal('no-cache');
      const etag = first.headers.get('etag') as string;
      expect((await currency.get('/api/currencies/statistics', { 'If-None-Match': etag })).status).to.equal(
        304,
      );
      await currency.bus.publish(
        createEvent(
          'AccountOpened',
          { account_id: randomUUID(), user_id: randomUUID(), currency: 'AUD' },
          { id: randomUUID(), correlationId: 'currency-test' },
        ),
      );
      const changed = await eventually(
        () => currency.get('/api/currencies/statistics', { 'If-None-Match': etag }),
        (response) => response.status === 200,
      );
      expect(changed.status).to.equal(200);
    });

    it('does not let caches keep errors', async () => {
      const response = await currency.get('/api/currencies/ABC');
      expect(response.status).to.equal(404);
      expect(response.headers.get('cache-control')).to.equal(null);
      expect(response.headers.get('etag')).to.equal(null);
    });
  });
});

describe('currency service configuration', () => {
  const startWith = (env: Record<string, string>) =>
    startCurrency(testConfig({ DATABASE_URL: 'postgres://127.0.0.1:1/unused', ...env }));

  const startupError = async (env: Record<string, string>): Promise<Error> => {
    try {
      const running = await startWith(env);
      await running.stop();
    } catch (error) {
      return error as Error;
    }
    throw new Error('the service started');
  };

  it('refuses to start with an unknown supported code, naming SUPPORTED_CURRENCIES and the code', async () => {
    const error = await startupError({ SUPPORTED_CURRENCIES: 'USD,EUR,ABC' });
    expect(error).to.be.instanceOf(ConfigError);
    expect(error.message).to.contain('SUPPORTED_CURRENCIES').and.contain('ABC');
  });

  it('refuses to start with a default that is unknown or not supported, naming DEFAULT_CURRENCY', async () => {
    const settings: Record<string, string>[] = [
      { DEFAULT_CURRENCY: 'QQQ' },
      { SUPPORTED_CURRENCIES: 'EUR,CHF', DEFAULT_CURRENCY: 'USD' },
    ];
    for (const env of settings) {
      const error = await startupError(env);
      expect(error).to.be.instanceOf(ConfigError);
      expect(error.message).to.contain('DEFAULT_CURRENCY');
    }
  });

  describe('with another supported set and default', () => {
    let database: TestDatabase;
    let currency: CurrencyUnderTest;

    before(async () => {
      database = await createTestDatabase('currency');
      currency = await startCurrencyOn(database, {
        SUPPORTED_CURRENCIES: 'chf, eur',
        DEFAULT_CURRENCY: 'eur',
      });
    });

    after(async () => {
      await currency?.stop();
      await database?.drop();
    });

    it('serves the configured default and supported set', async () => {
      const fallback = (await (await currency.get('/api/currencies/default')).json()) as CurrencyRecord;
      expect(fallback.code).to.equal('EUR');
      const supported = (await (await currency.get('/api/currencies/supported')).json()) as {
        data: CurrencyRecord[];
      };
      expect(codesOf(supported)).to.deep.equal(['CHF', 'EUR']);
      expect(await (await currency.get('/api/currencies/USD/supported')).json()).to.deep.equal({
        code: 'USD',
        supported: false,
      });
    });
  });
});
