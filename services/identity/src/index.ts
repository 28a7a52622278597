export { startIdentity } from './service.js';
export { IdentityConfigSchema, type IdentityConfig } from './config.js';
/** What its runtime role may do to each table: granted after its migrations, checked by e2e/least-privilege. */
export { privileges } from './data/privileges.js';
/** Its schema, migration by migration, in order: checked forward from earlier versions by e2e/migrations-forward. */
export { migrations } from './data/migrations.js';
/** Where a development identity keeps the key it generated: removed, the next start signs with a new one. */
export { developmentKeyPath } from './data/signing-key-files.js';
