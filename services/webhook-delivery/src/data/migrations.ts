import { inboxByAgeMigration, inboxMigration, type Migration } from '@payments/service-kit';
import { webhookEndpoints } from './migrations/001_webhook_endpoints.js';
import { deliveryTraceContext } from './migrations/002_delivery_trace_context.js';
import { events } from './migrations/003_events.js';
import { eventsByTransaction } from './migrations/005_events_by_transaction.js';
import { webhookDrills } from './migrations/004_webhook_drills.js';

/**
 * webhook-delivery's schema, in the order it is built: one migration per file in migrations/, each file named as
 * knex records it. A migration that ran is never changed (e2e/migrations-forward pins its SQL): a change is a new one.
 */
export const migrations: Migration[] = [
  inboxMigration,
  inboxByAgeMigration,
  webhookEndpoints,
  deliveryTraceContext,
  webhookDrills,
  // Numbered before the drills' but made after them: deployed databases ran 004 first, so 003 comes after it.
  events,
  eventsByTransaction,
];
