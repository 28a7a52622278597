export { startCurrency, type CurrencyDeps } from './service.js';
export { CurrencyConfigSchema, type CurrencyConfig } from './config.js';
/** The rate rules, for the ledger's property tests that value money at the rates this service serves. */
export { checkRateTable, crossRate, type RateTable } from './domain/exchange-rates.js';
export { createReferenceRateSource } from './data/reference-rate-source.js';
export { catalogueEntries } from './domain/catalogue.js';
/** What its runtime role may do to each table: granted after its migrations, checked by e2e/least-privilege. */
export { privileges } from './data/privileges.js';
/** Its schema, migration by migration, in order: checked forward from earlier versions by e2e/migrations-forward. */
export { migrations } from './data/migrations.js';
