import type { RequestHandler } from 'express';
import { notFound } from '@payments/service-kit';
import type { Catalogue, Currency } from '../domain/catalogue.js';
import type { AccountCountRepository } from '../data/account-count-repository.js';
import { CATALOGUE_CACHE_CONTROL, REVALIDATE_CACHE_CONTROL, sendWithEntityTag } from './http-cache.js';
import { parseCurrencyCode, readPage, readSearch } from './currency-params.js';

export interface CatalogueHandlerDeps {
  catalogue: Catalogue;
  accounts: AccountCountRepository;
}

/** The currency record as the API answers it, fields in a stable order. */
export function currencyBody(currency: Currency) {
  return {
    code: currency.code,
    name: currency.name,
    numeric_code: currency.numeric_code,
    minor_units: currency.minor_units,
    symbol: currency.symbol,
    regions: currency.regions,
    countries: currency.countries,
    supported: currency.supported,
  };
}

export function createCatalogueHandlers({
  catalogue,
  accounts,
}: CatalogueHandlerDeps): Record<
  | 'list'
  | 'show'
  | 'listSupported'
  | 'checkSupported'
  | 'search'
  | 'listRegion'
  | 'statistics'
  | 'showDefault',
  RequestHandler
> {
  const findOrThrow = (code: string): Currency => {
    const currency = catalogue.find(code);
    if (!currency) throw notFound(`Currency ${code}`);
    return currency;
  };

  const list: RequestHandler = (req, res) => {
    const { limit, offset } = readPage(req);
    const all = catalogue.all();
    sendWithEntityTag(
      req,
      res,
      {
        data: all.slice(offset, offset + limit).map(currencyBody),
        has_more: offset + limit < all.length,
        pagination: { limit, offset, total: all.length },
      },
      CATALOGUE_CACHE_CONTROL,
    );
  };

  const show: RequestHandler = (req, res) => {
    const currency = findOrThrow(parseCurrencyCode(req.params.code, 'code'));
    sendWithEntityTag(req, res, currencyBody(currency), CATALOGUE_CACHE_CONTROL);
  };

  const listSupported: RequestHandler = (req, res) => {
    sendWithEntityTag(req, res, { data: catalogue.supported().map(currencyBody) }, CATALOGUE_CACHE_CONTROL);
  };

  const checkSupported: RequestHandler = (req, res) => {
    const { code, supported } = findOrThrow(parseCurrencyCode(req.params.code, 'code'));
    sendWithEntityTag(req, res, { code, supported }, CATALOGUE_CACHE_CONTROL);
  };

  const search: RequestHandler = (req, res) => {
    const data = catalogue.search(readSearch(req)).map(currencyBody);
    sendWithEntityTag(req, res, { data }, CATALOGUE_CACHE_CONTROL);
  };

  const listRegion: RequestHandler = (req, res) => {
    const name = String(req.params.region);
    const region = catalogue.region(name);
    if (!region) throw notFound(`Region ${name.slice(0, 64)}`);
    const data = (catalogue.byRegion(region.code) ?? []).map(currencyBody);
    sendWithEntityTag(req, res, { region, data }, CATALOGUE_CACHE_CONTROL);
  };

  const statistics: RequestHandler = async (req, res) => {
    const counts = await accounts.countByCurrency();
    sendWithEntityTag(req, res, catalogue.statistics(counts), REVALIDATE_CACHE_CONTROL);
  };

  const showDefault: RequestHandler = (req, res) => {
    sendWithEntityTag(req, res, currencyBody(catalogue.defaultCurrency()), CATALOGUE_CACHE_CONTROL);
  };

  return { list, show, listSupported, checkSupported, search, listRegion, statistics, showDefault };
}
