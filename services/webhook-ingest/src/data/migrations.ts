import type { Migration } from '@payments/service-kit';
import { webhookEvents } from './migrations/001_webhook_events.js';
import { webhookEventPublishes } from './migrations/002_webhook_event_publishes.js';
import { webhookEventsByAge } from './migrations/003_webhook_events_by_age.js';
import { webhookEventsPublishAccountUpdates } from './migrations/004_webhook_events_publish_account_updates.js';
import { webhookEventsByObject } from './migrations/005_webhook_events_by_object.js';

/**
 * webhook-ingest's schema, in the order it is built: one migration per file in migrations/, each file named as
 * knex records it. A migration that ran is never changed (e2e/migrations-forward pins its SQL): a change is a new one.
 */
export const migrations: Migration[] = [
  webhookEvents,
  webhookEventPublishes,
  webhookEventsByAge,
  webhookEventsPublishAccountUpdates,
  webhookEventsByObject,
];
