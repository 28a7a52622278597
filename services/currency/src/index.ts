export { startCurrency, type CurrencyDeps } from './service.js';
export { CurrencyConfigSchema, type CurrencyConfig } from './config.js';
