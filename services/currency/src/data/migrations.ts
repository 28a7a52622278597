import { inboxByAgeMigration, inboxMigration, type Migration } from '@payments/service-kit';
import { accountCounts } from './migrations/001_account_counts.js';

/**
 * Currency's schema, in the order it is built: one migration per file in migrations/, each file named as knex
 * records it. A migration that ran is never changed (e2e/migrations-forward pins its SQL): a change is a new one.
 */
export const migrations: Migration[] = [inboxMigration, inboxByAgeMigration, accountCounts];
