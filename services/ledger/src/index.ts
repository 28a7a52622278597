export { startLedger } from './service.js';
export { LedgerConfigSchema, type LedgerConfig } from './config.js';
