import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createRequire } from 'node:module';
import { expect } from 'chai';
import { data as isoCurrencies } from 'currency-codes';
import { type CurrencyStatisticsView, type CurrencyView, formatMinor } from '@payments/contracts';
import type { Static } from '@sinclair/typebox';
import { eventually, useSystem } from '@payments/testkit';
import { depositConfirmed, rawApi, signUp, type ApiResponse } from '@payments/test-support';

type CurrencyRecord = Static<typeof CurrencyView>;
type Statistics = Static<typeof CurrencyStatisticsView>;

/** ISO 4217 codes whose minor unit the standard gives as a number, from the list the data package ships. */
function isoCodesWithMinorUnits(): Set<string> {
  const xml = readFileSync(
    createRequire(import.meta.url).resolve('currency-codes/iso-4217-list-one.xml'),
    'utf8',
  );
  const codes = new Set<string>();
  for (const [, entry = ''] of xml.matchAll(/<CcyNtry>([\s\S]*?)<\/CcyNtry>/g)) {
    const code = /<Ccy>\s*([A-Z]{3})\s*<\/Ccy>/.exec(entry)?.[1];
    const units = /<CcyMnrUnts>\s*(\d+)\s*<\/CcyMnrUnts>/.exec(entry)?.[1];
    if (code && units !== undefined) codes.add(code);
  }
  return codes;
}

/** `amount` (a decimal string) of `from` in minor units of `to` at `rate`, exactly; throws if it does not divide. */
function convertExactly(amount: string, rate: string, fromExponent: number, toExponent: number): bigint {
  const [whole = '0', fraction = ''] = amount.split('.');
  const amountMinor = BigInt(whole + fraction.padEnd(fromExponent, '0'));
  const [rateWhole = '0', rateFraction = ''] = rate.split('.');
  const numerator = amountMinor * BigInt(rateWhole + rateFraction) * 10n ** BigInt(toExponent);
  const denominator = 10n ** BigInt(rateFraction.length + fromExponent);
  expect(numerator % denominator, 'pick an amount that converts without rounding').to.equal(0n);
  return numerator / denominator;
}

const sameCounts = (a: Record<string, number>, b: Record<string, number>) =>
  Object.keys(a).length === Object.keys(b).length && Object.entries(a).every(([code, n]) => b[code] === n);

const codesOf = (response: ApiResponse) => (response.body.data as CurrencyRecord[]).map((c) => c.code);

function expectProblem(response: ApiResponse, status: number, code: string) {
  expect(response.status, response.text).to.equal(status);
  expect(response.headers.get('content-type')).to.match(/^application\/problem\+json/);
  expect(response.body).to.include({ status, code });
}

describe('currencies end to end, through the gateway', function () {
  this.timeout(120_000);
  let catalogue: CurrencyRecord[];

  const system = useSystem({
    serviceEnv: {
      'provider-sandbox': { SANDBOX_ENABLED: 'false' },
      'webhook-ingest': { UNSIGNED_WEBHOOK_ENABLED: 'true' },
    },
  });
  const api = rawApi(system);

  before(async () => {
    const all = await api.get('/api/currencies?limit=200');
    expect(all.status, all.text).to.equal(200);
    catalogue = all.body.data;
  });

  const ok = async (path: string) => {
    const response = await api.get(path);
    expect(response.status, `${path}: ${response.text}`).to.equal(200);
    return response;
  };

  const openAccount = (token: string, currency: string) => api.post('/account', { currency }, token);

  describe('the catalogue', () => {
    it('lists every ISO 4217 code of the data package that has minor units, with its minor units', async () => {
      const withMinorUnits = isoCodesWithMinorUnits();
      const expected = isoCurrencies.filter((currency) => withMinorUnits.has(currency.code));
      expect(expected.length).to.be.greaterThan(150);
      expect(catalogue.map((c) => c.code)).to.have.members(expected.map((c) => c.code));
      const served = new Map(catalogue.map((c) => [c.code, c]));
      for (const iso of expected) {
        expect(served.get(iso.code), iso.code).to.include({
          minor_units: iso.digits,
          numeric_code: iso.number,
        });
      }
    });

    it('gives JPY 0, USD 2, KWD 3 and CLF 4 minor units', async () => {
      const minorUnits = await Promise.all(
        ['JPY', 'USD', 'KWD', 'CLF'].map(
          async (code) => (await ok(`/api/currencies/${code}`)).body.minor_units,
        ),
      );
      expect(minorUnits).to.deep.equal([0, 2, 3, 4]);
    });

    it('pages the list with a total and cache headers, and refuses a bad page with 400', async () => {
      const first = await ok('/api/currencies');
      expect(first.body.pagination).to.deep.equal({ limit: 20, offset: 0, total: catalogue.length });
      expect(codesOf(first)).to.deep.equal(catalogue.slice(0, 20).map((c) => c.code));
      const page = await ok('/api/currencies?limit=5&offset=20');
      expect(codesOf(page)).to.deep.equal(catalogue.slice(20, 25).map((c) => c.code));
      expect(first.headers.get('etag')).to.match(/^"/);
      expect(first.headers.get('cache-control')).to.match(/max-age=\d+/);

      const unchanged = await api.request('GET', '/api/currencies', {
        headers: { 'if-none-match': first.headers.get('etag') as string },
      });
      expect(unchanged.status).to.equal(304);

      for (const query of ['limit=0', 'limit=201', 'offset=-1', 'limit=ten']) {
        expectProblem(await api.get(`/api/currencies?${query}`), 400, 'VALIDATION_ERROR');
      }
    });

    it('shows one currency in any case, 404 for an unknown code and 400 for a malformed one', async () => {
      const chf = await ok('/api/currencies/chf');
      expect(chf.body).to.deep.include({
        code: 'CHF',
        name: 'Swiss Franc',
        numeric_code: '756',
        supported: true,
      });
      expect(chf.body.countries.map((c: { name: string }) => c.name)).to.include('Switzerland');
      expect(chf.headers.get('etag')).to.match(/^"/);
      expectProblem(await api.get('/api/currencies/ZZZ'), 404, 'RESOURCE_NOT_FOUND');
      for (const code of ['US', 'USDX', '123', 'U$D']) {
        expectProblem(await api.get(`/api/currencies/${encodeURIComponent(code)}`), 400, 'VALIDATION_ERROR');
      }
    });

    it('gives the default currency, USD', async () => {
      expect((await ok('/api/currencies/default')).body).to.include({ code: 'USD', supported: true });
    });
  });

  // Before any other test opens accounts, so no AccountOpened event is still on its way when it starts counting.
  describe('statistics', () => {
    it('add up, and count the accounts opened through the API per currency', async () => {
      const before = (await ok('/api/currencies/statistics')).body as Statistics;
      expect(before.total).to.equal(catalogue.length);
      expect(before.supported).to.equal(catalogue.filter((c) => c.supported).length);
      const byMinorUnits: Record<string, number> = {};
      for (const c of catalogue) byMinorUnits[c.minor_units] = (byMinorUnits[c.minor_units] ?? 0) + 1;
      expect(before.by_minor_units).to.deep.equal(byMinorUnits);
      for (const [region, count] of Object.entries(before.by_region)) {
        const listed = await ok(`/api/currencies/region/${encodeURIComponent(region)}`);
        expect(listed.body.data, region).to.have.length(count);
      }

      const { token } = await signUp(system.gatewayUrl);
      const opened = ['GBP', 'GBP', 'AUD'];
      for (const code of opened) expect((await openAccount(token, code)).status).to.equal(201);
      const expected = { ...before.accounts_per_currency };
      for (const code of opened) expected[code] = (expected[code] ?? 0) + 1;

      const after = await eventually(
        async () => (await ok('/api/currencies/statistics')).body as Statistics,
        (stats) => sameCounts(stats.accounts_per_currency, expected),
      );
      expect(after.accounts_per_currency).to.deep.equal(expected);
      expect(after.total).to.equal(before.total);
    });
  });

  describe('supported currencies', () => {
    it('lists exactly the catalogue entries marked supported, the configured set', async () => {
      const supported = codesOf(await ok('/api/currencies/supported'));
      expect(supported).to.have.members(['USD', 'EUR', 'GBP', 'JPY', 'CHF', 'CAD', 'AUD', 'KWD']);
      expect(supported).to.have.members(catalogue.filter((c) => c.supported).map((c) => c.code));
    });

    it('answers the check for a code, 404 for an unknown code and 400 for a malformed one', async () => {
      expect((await ok('/api/currencies/kwd/supported')).body).to.deep.equal({
        code: 'KWD',
        supported: true,
      });
      expect((await ok('/api/currencies/SEK/supported')).body).to.deep.equal({
        code: 'SEK',
        supported: false,
      });
      expectProblem(await api.get('/api/currencies/ZZZ/supported'), 404, 'RESOURCE_NOT_FOUND');
      expectProblem(await api.get('/api/currencies/EURO/supported'), 400, 'VALIDATION_ERROR');
    });

    it('agrees with account creation for every code: a supported one opens, any other is 422 listing the supported', async () => {
      const supported = codesOf(await ok('/api/currencies/supported')).sort();
      const { token, client } = await signUp(system.gatewayUrl);
      for (const code of supported) {
        expect((await ok(`/api/currencies/${code}/supported`)).body.supported, code).to.equal(true);
        const opened = await openAccount(token, code);
        expect(opened.status, opened.text).to.equal(201);
        expect(opened.body.currency).to.equal(code);
      }
      const others = catalogue.filter((c) => !supported.includes(c.code));
      await Promise.all(
        others.map(async ({ code }) => {
          expect((await ok(`/api/currencies/${code}/supported`)).body.supported, code).to.equal(false);
          const refused = await openAccount(token, code);
          expectProblem(refused, 422, 'INVALID_CURRENCY');
          for (const listed of supported) expect(refused.body.detail, code).to.include(listed);
        }),
      );
      const accounts = await client.accounts.listPage();
      expect(accounts.data.map((a) => a.currency)).to.have.members(supported);
    });
  });

  describe('search and regions', () => {
    it('finds a currency by the name of a country that uses it', async () => {
      const byCountry = { Japan: 'JPY', Switzerland: 'CHF', Germany: 'EUR', Kuwait: 'KWD', Chile: 'CLF' };
      for (const [country, code] of Object.entries(byCountry)) {
        expect(codesOf(await ok(`/api/currencies/search?q=${country}`)), country).to.include(code);
      }
      const pairs = catalogue.flatMap((c) =>
        c.countries.map((country) => ({ code: c.code, country: country.name })),
      );
      await Promise.all(
        pairs.map(async ({ code, country }) => {
          const found = codesOf(await ok(`/api/currencies/search?q=${encodeURIComponent(country)}`));
          expect(found, country).to.include(code);
        }),
      );
    });

    it('finds a currency by its code or name', async () => {
      expect(codesOf(await ok('/api/currencies/search?q=gbp'))[0]).to.equal('GBP');
      expect(codesOf(await ok('/api/currencies/search?q=Swiss%20Franc'))).to.include('CHF');
    });

    it('refuses a missing, empty or too long query with 400', async () => {
      for (const query of ['', '?q=', '?q=%20%20', `?q=${'a'.repeat(65)}`]) {
        expectProblem(await api.get(`/api/currencies/search${query}`), 400, 'VALIDATION_ERROR');
      }
    });

    it('lists EUR and CHF for Europe, by name or code, and 404 for an unknown region', async () => {
      for (const region of ['europe', 'Europe', 'EU']) {
        const listed = await ok(`/api/currencies/region/${region}`);
        expect(codesOf(listed), region).to.include.members(['EUR', 'CHF']);
        expect(codesOf(listed)).not.to.include('JPY');
      }
      expectProblem(await api.get('/api/currencies/region/atlantis'), 404, 'RESOURCE_NOT_FOUND');
    });
  });

  describe('exchange rates', () => {
    it('lists rates against a base, USD by default, with as_of and cached', async () => {
      const usd = await ok('/api/currencies/rates');
      expect(usd.body).to.include({ base: 'USD' });
      expect(usd.body.as_of).to.be.a('string');
      expect(usd.body.cached).to.be.a('boolean');
      expect(usd.body.rates.EUR).to.match(/^\d+(\.\d+)?$/);
      const eur = await ok('/api/currencies/rates?base=eur');
      expect(eur.body.base).to.equal('EUR');
      expect(eur.body.rates.USD).to.be.a('string');
    });

    it('shows one rate, agreeing with the list', async () => {
      const list = await ok('/api/currencies/rates?base=USD');
      const rate = await ok('/api/currencies/USD/rate/EUR');
      expect(rate.body).to.include({
        from: 'USD',
        to: 'EUR',
        rate: list.body.rates.EUR,
        as_of: list.body.as_of,
      });
    });

    it('answers 404 for an unknown code or a pair without a rate, and 400 for a malformed code', async () => {
      expectProblem(await api.get('/api/currencies/rates?base=ZZZ'), 404, 'RESOURCE_NOT_FOUND');
      expectProblem(await api.get('/api/currencies/rates?base=EURO'), 400, 'VALIDATION_ERROR');
      const rates = (await ok('/api/currencies/rates?base=USD')).body.rates as Record<string, string>;
      const withoutRate = catalogue.find((c) => rates[c.code] === undefined && c.code !== 'USD');
      expectProblem(
        await api.get(`/api/currencies/rates?base=${withoutRate?.code}`),
        404,
        'RESOURCE_NOT_FOUND',
      );
      expectProblem(
        await api.get(`/api/currencies/USD/rate/${withoutRate?.code}`),
        404,
        'RESOURCE_NOT_FOUND',
      );
      expectProblem(await api.get('/api/currencies/USD/rate/ZZZ'), 404, 'RESOURCE_NOT_FOUND');
      expectProblem(await api.get('/api/currencies/US/rate/EUR'), 400, 'VALIDATION_ERROR');
    });

    it('converts cross-currency transfers at the served rate, into 0, 2 and 3 minor units', async () => {
      const v11 = { 'x-api-version': '1.1' };
      const { token, client } = await signUp(system.gatewayUrl);
      const usd = (await client.accounts.open({ currency: 'USD' })).id;
      await depositConfirmed(client, usd, '200.00', 'USD');
      // Amounts the reference rates convert without rounding, so the expectation needs no rounding rule.
      const transfers = [
        { currency: 'EUR', amount: '50.00' },
        { currency: 'JPY', amount: '100.00' },
        { currency: 'KWD', amount: '10.00' },
      ];
      for (const { currency, amount } of transfers) {
        const rate = (await ok(`/api/currencies/USD/rate/${currency}`)).body.rate as string;
        const exponent = catalogue.find((c) => c.code === currency)?.minor_units as number;
        const converted = Number(formatMinor(convertExactly(amount, rate, 2, exponent), exponent));
        const target = (await client.accounts.open({ currency })).id;

        const accepted = await api.post(
          `/account/${usd}/transfer`,
          { to_account_id: target, amount, currency: 'USD' },
          token,
          v11,
        );
        expect(accepted.status, accepted.text).to.equal(202);
        const transaction = await eventually(
          () => client.transactions.get(accepted.body.id),
          (found) => found.status !== 'pending',
        );
        expect(transaction, currency).to.include({
          status: 'completed',
          amount: Number(amount),
          currency: 'USD',
          exchange_rate: Number(rate),
          converted_amount: converted,
        });
        const balance = await client.balances.get(target);
        expect(balance, currency).to.include({ balance: converted, currency });
      }
      expect((await client.balances.get(usd)).balance).to.equal(40);
    });
  });
});

describe('exchange rates through the gateway, from a URL source behind a one-second cache', function () {
  this.timeout(120_000);
  let source: Server;
  let fetches = 0;

  const system = useSystem(async () => {
    // Stands in for a rate provider outside the system: counts how often the currency service asks.
    source = createServer((_req, res) => {
      fetches += 1;
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({ base: 'USD', as_of: '2026-11-01T00:00:00Z', rates: { EUR: '0.9', JPY: '150' } }),
      );
    });
    await new Promise<void>((resolve) => source.listen(0, '127.0.0.1', resolve));
    const { port } = source.address() as AddressInfo;
    return {
      serviceEnv: {
        currency: { RATES_SOURCE_URL: `http://127.0.0.1:${port}/rates`, RATES_CACHE_TTL_SECONDS: '1' },
      },
    };
  });

  after(async () => {
    await new Promise((resolve) => source?.close(resolve));
  });

  it('serves a second request within the TTL from the cache, and asks the source again after it', async () => {
    const api = rawApi(system.gatewayUrl);
    const first = await api.get('/api/currencies/USD/rate/EUR');
    expect(first.status, first.text).to.equal(200);
    expect(first.body).to.include({ from: 'USD', to: 'EUR', rate: '0.9', cached: false });
    const fetchesAfterFirst = fetches;

    const second = await api.get('/api/currencies/EUR/rate/USD');
    expect(second.body).to.include({ cached: true });
    expect(fetches).to.equal(fetchesAfterFirst);

    await new Promise((resolve) => setTimeout(resolve, 1200));
    const third = await api.get('/api/currencies/USD/rate/JPY');
    expect(third.body).to.include({ rate: '150', cached: false });
    expect(fetches).to.equal(fetchesAfterFirst + 1);
  });
});
