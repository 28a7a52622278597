import { loadConfig, runMain } from '@payments/service-kit';
import { LedgerConfigSchema } from './config.js';
import { startLedger } from './service.js';

runMain('ledger', async () => startLedger(loadConfig(LedgerConfigSchema)));
