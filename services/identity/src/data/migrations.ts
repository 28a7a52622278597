import { outboxMigration, type Migration } from '@payments/service-kit';
import { usersMigration } from './migrations/001_users.js';
import { revocationsMigration } from './migrations/002_revocations.js';
import { revocationsExceptJtiMigration } from './migrations/003_revocations_except_jti.js';
import { revocationsUniqueJtiMigration } from './migrations/004_revocations_unique_jti.js';
import { usersSearchMigration } from './migrations/005_users_search.js';
import { revocationsByUserMigration } from './migrations/006_revocations_by_user.js';
import { publishedSigningKeysMigration } from './migrations/007_published_signing_keys.js';
import { outboxTraceContextMigration } from './migrations/008_outbox_trace_context.js';
import { apiKeysMigration } from './migrations/009_api_keys.js';

/**
 * Identity's schema, in the order it is built: one migration per file in migrations/, each file named as knex
 * records it. A migration that ran is never changed (e2e/migrations-forward pins its SQL): a change is a new one.
 */
export const migrations: Migration[] = [
  outboxMigration,
  usersMigration,
  revocationsMigration,
  revocationsExceptJtiMigration,
  revocationsUniqueJtiMigration,
  usersSearchMigration,
  revocationsByUserMigration,
  publishedSigningKeysMigration,
  outboxTraceContextMigration,
  apiKeysMigration,
];
