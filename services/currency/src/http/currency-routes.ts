import type { Express } from 'express';
import { createCatalogueHandlers, type CatalogueHandlerDeps } from './catalogue-handlers.js';
import { createRateHandlers, type RateHandlerDeps } from './rate-handlers.js';

export type CurrencyRouteDeps = CatalogueHandlerDeps & RateHandlerDeps;

/** Every route is public. The fixed paths come before `/:code` so a word like `supported` is never read as a code. */
export function mountCurrencyRoutes(app: Express, deps: CurrencyRouteDeps): void {
  const catalogue = createCatalogueHandlers(deps);
  const rates = createRateHandlers(deps);
  app.get('/api/currencies', catalogue.list);
  app.get('/api/currencies/supported', catalogue.listSupported);
  app.get('/api/currencies/search', catalogue.search);
  app.get('/api/currencies/statistics', catalogue.statistics);
  app.get('/api/currencies/default', catalogue.showDefault);
  app.get('/api/currencies/rates', rates.listRates);
  app.get('/api/currencies/region/:region', catalogue.listRegion);
  app.get('/api/currencies/:code', catalogue.show);
  app.get('/api/currencies/:code/supported', catalogue.checkSupported);
  app.get('/api/currencies/:from/rate/:to', rates.showRate);
}
