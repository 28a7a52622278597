export { startLedger } from './service.js';
export { LedgerConfigSchema, type LedgerConfig } from './config.js';
/** What its runtime role may do to each table: granted after its migrations, checked by e2e/least-privilege. */
export { privileges } from './data/privileges.js';
/** Its schema, migration by migration, in order: checked forward from earlier versions by e2e/migrations-forward. */
export { migrations } from './data/migrations.js';
