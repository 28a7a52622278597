import { expect } from 'chai';
import { data as isoCurrencies } from 'currency-codes';
import {
  catalogueEntries,
  createCatalogue,
  findCurrencySettingsProblems,
  validateCurrencySettings,
} from '../src/domain/catalogue.js';

// ISO 4217 gives these "N.A." minor units; the generator leaves them out because they have no exponent.
const NO_MINOR_UNITS = [
  'XAG',
  'XAU',
  'XBA',
  'XBB',
  'XBC',
  'XBD',
  'XDR',
  'XPD',
  'XPT',
  'XSU',
  'XTS',
  'XUA',
  'XXX',
];

const codes = (currencies: readonly { code: string }[]): string[] =>
  currencies.map((currency) => currency.code);

describe('currency catalogue', () => {
  const catalogue = createCatalogue(catalogueEntries, ['USD', 'eur', 'JPY', 'KWD'], 'usd');

  describe('data', () => {
    it('holds every ISO 4217 code of the currency-codes package that has minor units', () => {
      const expected = isoCurrencies
        .map((currency) => currency.code)
        .filter((code) => !NO_MINOR_UNITS.includes(code))
        .sort();
      expect(codes(catalogue.all())).to.deep.equal(expected);
      expect(expected.length).to.be.greaterThan(150);
    });

    it('leaves out the codes without minor units', () => {
      for (const code of NO_MINOR_UNITS) expect(catalogue.find(code), code).to.equal(null);
    });

    it('agrees with the package on minor units and numeric codes', () => {
      for (const iso of isoCurrencies.filter((currency) => !NO_MINOR_UNITS.includes(currency.code))) {
        const currency = catalogue.find(iso.code);
        expect(currency?.minor_units, iso.code).to.equal(iso.digits);
        expect(currency?.numeric_code, iso.code).to.equal(iso.number);
      }
    });

    it('gives JPY 0, USD 2, KWD 3 and CLF 4 minor units', () => {
      expect(catalogue.find('JPY')?.minor_units).to.equal(0);
      expect(catalogue.find('USD')?.minor_units).to.equal(2);
      expect(catalogue.find('KWD')?.minor_units).to.equal(3);
      expect(catalogue.find('CLF')?.minor_units).to.equal(4);
    });

    it('uses three-digit numeric codes, keeping leading zeros', () => {
      expect(catalogue.find('ALL')?.numeric_code).to.equal('008');
      for (const currency of catalogue.all())
        expect(currency.numeric_code, currency.code).to.match(/^\d{3}$/);
    });

    it('places every currency in at least one region', () => {
      for (const currency of catalogue.all())
        expect(currency.regions.length, currency.code).to.be.greaterThan(0);
    });

    it('knows the countries and symbol of the euro', () => {
      const euro = catalogue.find('EUR');
      expect(euro?.symbol).to.equal('€');
      expect(euro?.countries).to.deep.include({ code: 'DE', name: 'Germany' });
    });
  });

  describe('find', () => {
    it('finds a currency whatever the case of the code', () => {
      expect(catalogue.find('usd')?.code).to.equal('USD');
      expect(catalogue.find('Jpy')?.code).to.equal('JPY');
    });

    it('returns null for a code that is not in the catalogue', () => {
      expect(catalogue.find('ABC')).to.equal(null);
    });

    it('marks each currency as supported or not', () => {
      expect(catalogue.find('EUR')?.supported).to.equal(true);
      expect(catalogue.find('CHF')?.supported).to.equal(false);
    });
  });

  describe('supported set', () => {
    it('lists only the configured currencies, in code order', () => {
      expect(codes(catalogue.supported())).to.deep.equal(['EUR', 'JPY', 'KWD', 'USD']);
    });

    it('answers whether a code is supported, case-insensitively', () => {
      expect(catalogue.isSupported('eur')).to.equal(true);
      expect(catalogue.isSupported('GBP')).to.equal(false);
      expect(catalogue.isSupported('XYZ')).to.equal(false);
    });

    it('returns the configured default currency', () => {
      expect(catalogue.defaultCurrency().code).to.equal('USD');
    });
  });

  describe('search', () => {
    it('finds a currency by the name of a country that uses it', () => {
      expect(codes(catalogue.search('japan'))).to.deep.equal(['JPY']);
      expect(codes(catalogue.search('Switzerland'))).to.include('CHF');
    });

    it('finds a currency by a country code', () => {
      expect(codes(catalogue.search('jp'))).to.include('JPY');
    });

    it('finds currencies by part of their name', () => {
      expect(codes(catalogue.search('dinar'))).to.include.members(['KWD', 'BHD', 'JOD']);
    });

    it('ranks the exact code first', () => {
      expect(codes(catalogue.search('eur'))[0]).to.equal('EUR');
      expect(codes(catalogue.search('USD'))[0]).to.equal('USD');
    });

    it('ignores accents so a plain spelling finds an accented country', () => {
      expect(codes(catalogue.search('turkiye'))).to.include('TRY');
    });

    it('returns nothing for an empty query', () => {
      expect(catalogue.search('  ')).to.deep.equal([]);
    });
  });

  describe('regions', () => {
    it('lists EUR and CHF for Europe, by name or by code', () => {
      for (const region of ['europe', 'Europe', 'EU', 'eu']) {
        expect(codes(catalogue.byRegion(region) ?? []), region).to.include.members(['EUR', 'CHF']);
      }
    });

    it('accepts a two-word region name written with a hyphen', () => {
      expect(codes(catalogue.byRegion('north-america') ?? [])).to.include('USD');
    });

    it('does not put Asian-only currencies in Europe', () => {
      expect(codes(catalogue.byRegion('EU') ?? [])).to.not.include('JPY');
    });

    it('names the continent a region code or name means', () => {
      expect(catalogue.region('europe')).to.deep.equal({ code: 'EU', name: 'Europe' });
      expect(catalogue.region('sa')).to.deep.equal({ code: 'SA', name: 'South America' });
      expect(catalogue.region('atlantis')).to.equal(null);
    });

    it('returns null for an unknown region', () => {
      expect(catalogue.byRegion('atlantis')).to.equal(null);
      expect(catalogue.byRegion('XX')).to.equal(null);
    });
  });

  describe('statistics', () => {
    const stats = catalogue.statistics({ USD: 3, eur: 2, EUR: 1 });

    it('counts all and supported currencies', () => {
      expect(stats.total).to.equal(catalogue.all().length);
      expect(stats.supported).to.equal(4);
    });

    it('has minor-unit counts that add up to the total', () => {
      const sum = Object.values(stats.by_minor_units).reduce((a, b) => a + b, 0);
      expect(sum).to.equal(stats.total);
      expect(Object.keys(stats.by_minor_units).sort()).to.deep.equal(['0', '2', '3', '4']);
    });

    it('counts currencies per region by region name', () => {
      expect(stats.by_region['Europe']).to.equal(catalogue.byRegion('EU')?.length);
      expect(Object.keys(stats.by_region)).to.have.members([
        'Africa',
        'Antarctica',
        'Asia',
        'Europe',
        'North America',
        'Oceania',
        'South America',
      ]);
    });

    it('merges account counts given under differently cased codes', () => {
      expect(stats.accounts_per_currency).to.deep.equal({ USD: 3, EUR: 3 });
    });
  });

  describe('settings validation', () => {
    it('accepts known codes with the default among them', () => {
      expect(validateCurrencySettings(['USD', 'EUR'], 'EUR')).to.deep.equal([]);
    });

    it('names unknown codes in the supported list', () => {
      const problems = validateCurrencySettings(['USD', 'ABC', 'XAU'], 'USD');
      expect(problems).to.have.length(1);
      expect(problems[0]).to.contain('ABC').and.contain('XAU');
    });

    it('reports a default that is not supported', () => {
      expect(validateCurrencySettings(['USD'], 'EUR')).to.deep.equal([
        'the default currency EUR is not in the supported list',
      ]);
    });

    it('reports an empty supported list', () => {
      expect(validateCurrencySettings([], 'USD').join(' ')).to.contain('empty');
    });

    it('says which setting each problem is about', () => {
      expect(findCurrencySettingsProblems(['USD', 'ABC'], 'EUR').map((p) => p.setting)).to.deep.equal([
        'supported',
        'default',
      ]);
    });

    it('refuses to build a catalogue from invalid settings', () => {
      expect(() => createCatalogue(catalogueEntries, ['USD'], 'GBP')).to.throw(/not in the supported list/);
    });
  });
});
