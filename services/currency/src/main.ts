import { loadConfig, runMain } from '@payments/service-kit';
import { CurrencyConfigSchema } from './config.js';
import { startCurrency } from './service.js';

runMain('currency', async () => startCurrency(loadConfig(CurrencyConfigSchema)));
