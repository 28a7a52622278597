// Builds src/data/catalogue.json and src/data/regions.json from pinned data packages.
// Run with `tsx scripts/generate-catalogue.ts`; the output is committed so the service starts without network.
//
// Sources:
// - currency-codes: the ISO 4217 list (code, numeric code, minor units, currency name, the entities using it).
//   It is the authority for which codes exist; nothing is added from elsewhere.
// - countries-list: ISO 3166 alpha-2 codes, English country names and continents, used to turn the ISO list's
//   entity names into countries and regions; its CLDR currency data gives symbols.
// - currency-symbol-map: a fallback symbol where CLDR has none besides the code.
//
// Excluded: codes whose minor unit ISO 4217 gives as "N.A." (precious metals XAU XAG XPD XPT, bond-market units
// XBA-XBD, XDR, XSU, XUA, the testing code XTS and no-currency XXX). An amount in them has no exponent, so it
// cannot be stored as integer minor units; currency-codes reports them as 0 digits, so we read "N.A." from the
// ISO XML the package ships instead.
import { readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { data as isoCurrencies, publishDate } from 'currency-codes';
import { continents, countries } from 'countries-list';
import type { ICountry, ICurrency } from 'countries-list';
import { currencies as cldrCurrencies } from 'countries-list/currencies';
import getSymbolFromCurrency from 'currency-symbol-map';

interface CountryRef {
  code: string | null;
  name: string;
}

interface CatalogueEntry {
  code: string;
  name: string;
  numeric_code: string;
  minor_units: number;
  symbol: string | null;
  countries: CountryRef[];
  regions: string[];
}

const outputDir = new URL('../src/data/', import.meta.url);
const require = createRequire(import.meta.url);

function readIsoMinorUnits(): Map<string, string> {
  const xml = readFileSync(require.resolve('currency-codes/iso-4217-list-one.xml'), 'utf8');
  const minorUnits = new Map<string, string>();
  for (const [, entry = ''] of xml.matchAll(/<CcyNtry>([\s\S]*?)<\/CcyNtry>/g)) {
    const code = /<Ccy>\s*([A-Z]{3})\s*<\/Ccy>/.exec(entry)?.[1];
    const units = /<CcyMnrUnts>\s*([^<]*?)\s*<\/CcyMnrUnts>/.exec(entry)?.[1];
    if (code && units !== undefined) minorUnits.set(code, units);
  }
  return minorUnits;
}

const STOPWORDS = new Set(['the', 'of', 'and']);

function tokenise(name: string): string[] {
  return name
    .normalize('NFKD')
    .replace(/\p{M}/gu, '')
    .toLowerCase()
    .replace(/&/g, ' and ')
    .split(/[^a-z0-9]+/)
    .filter((word) => word !== '' && !STOPWORDS.has(word));
}

const keyOf = (name: string): string => [...new Set(tokenise(name))].sort().join(' ');

const isSubset = (small: Set<string>, large: Set<string>): boolean =>
  small.size > 0 && [...small].every((word) => large.has(word));

const countryEntries = Object.entries<ICountry>(countries).sort(([a], [b]) => (a < b ? -1 : 1));

const countriesByKey = new Map<string, Set<string>>();
for (const [alpha2, country] of countryEntries) {
  for (const name of [country.name, country.native, ...(country.alias ?? [])]) {
    const key = keyOf(name);
    const codes = countriesByKey.get(key) ?? new Set<string>();
    codes.add(alpha2);
    countriesByKey.set(key, codes);
  }
}

function countryNames(alpha2: string): string[] {
  const country = (countries as Record<string, ICountry>)[alpha2];
  return country ? [country.name, country.native, ...(country.alias ?? [])] : [];
}

// ISO names entities its own way ("Korea (The Republic Of)"), so we match by word set, then fall back to the
// countries that countries-list says use this currency, which keeps fuzzy matches from crossing currencies.
function resolveCountries(currencyCode: string, isoNames: string[]): CountryRef[] {
  const users = countryEntries
    .filter(([, c]) => (c.currency as readonly string[]).includes(currencyCode))
    .map(([a]) => a);
  const resolved = new Map<string, CountryRef>();
  const unresolved: string[] = [];
  for (const isoName of isoNames) {
    const variants = [isoName, isoName.replace(/\(.*?\)|\[.*?\]/g, ' ')];
    let codes = [...new Set(variants.flatMap((v) => [...(countriesByKey.get(keyOf(v)) ?? [])]))];
    if (codes.length !== 1) {
      const isoWords = new Set(tokenise(isoName));
      codes = users.filter((alpha2) =>
        countryNames(alpha2).some((name) => {
          const words = new Set(tokenise(name));
          return isSubset(words, isoWords) || isSubset(isoWords, words);
        }),
      );
    }
    if (codes.length === 0) unresolved.push(isoName.trim());
    for (const alpha2 of codes)
      resolved.set(alpha2, { code: alpha2, name: countryNames(alpha2)[0] ?? alpha2 });
  }
  // A lone unmatched ISO name and a lone unclaimed user are the same place under different names.
  const unclaimed = users.filter((alpha2) => !resolved.has(alpha2));
  if (unresolved.length === 1 && unclaimed.length === 1 && resolved.size === 0) {
    const alpha2 = unclaimed[0] as string;
    resolved.set(alpha2, { code: alpha2, name: countryNames(alpha2)[0] ?? alpha2 });
    unresolved.length = 0;
  }
  const known = [...resolved.values()].sort((a, b) => ((a.code ?? '') < (b.code ?? '') ? -1 : 1));
  return [...known, ...unresolved.sort().map((name) => ({ code: null, name }))];
}

function regionsOf(refs: CountryRef[]): string[] {
  const regions = new Set<string>();
  for (const ref of refs) {
    const country = ref.code ? (countries as Record<string, ICountry>)[ref.code] : undefined;
    if (!country) continue;
    regions.add(country.continent);
    for (const continent of country.continents ?? []) regions.add(continent);
  }
  return [...regions].sort();
}

function symbolOf(code: string): string | null {
  const cldr = (cldrCurrencies as Record<string, ICurrency>)[code];
  // CLDR falls back to the ISO code itself where it has no symbol; that is not a symbol.
  const candidates = [cldr?.symbol, cldr?.symbolNative, getSymbolFromCurrency(code)];
  return candidates.find((symbol) => symbol !== undefined && symbol !== '' && symbol !== code) ?? null;
}

function buildCatalogue(): { entries: CatalogueEntry[]; excluded: string[] } {
  const isoMinorUnits = readIsoMinorUnits();
  const entries: CatalogueEntry[] = [];
  const excluded: string[] = [];
  for (const iso of [...isoCurrencies].sort((a, b) => (a.code < b.code ? -1 : 1))) {
    const units = isoMinorUnits.get(iso.code);
    if (units === undefined)
      throw new Error(`${iso.code} is missing from the ISO XML shipped with currency-codes`);
    if (units === 'N.A.') {
      excluded.push(iso.code);
      continue;
    }
    if (Number(units) !== iso.digits)
      throw new Error(`${iso.code}: minor units ${units} in XML, ${String(iso.digits)} in data`);
    const refs = resolveCountries(iso.code, iso.countries);
    entries.push({
      code: iso.code,
      name: iso.currency.replace(/\s+/g, ' ').trim(),
      numeric_code: iso.number.padStart(3, '0'),
      minor_units: iso.digits,
      symbol: symbolOf(iso.code),
      countries: refs,
      regions: regionsOf(refs),
    });
  }
  const regionless = entries.filter((entry) => entry.regions.length === 0).map((entry) => entry.code);
  if (regionless.length > 0) throw new Error(`no region found for ${regionless.join(', ')}`);
  return { entries, excluded };
}

const { entries, excluded } = buildCatalogue();
const regions = Object.fromEntries(Object.entries(continents).sort(([a], [b]) => (a < b ? -1 : 1)));

mkdirSync(outputDir, { recursive: true });
writeFileSync(new URL('catalogue.json', outputDir), `${JSON.stringify(entries, null, 2)}\n`);
writeFileSync(new URL('regions.json', outputDir), `${JSON.stringify(regions, null, 2)}\n`);

const unnamed = entries.flatMap((e) =>
  e.countries.filter((c) => c.code === null).map((c) => `${e.code}: ${c.name}`),
);
console.log(
  `ISO 4217 list of ${publishDate}: ${String(entries.length)} currencies written, excluded ${excluded.join(' ')}`,
);
if (unnamed.length > 0) console.log(`entities without an ISO 3166 code: ${unnamed.join('; ')}`);
