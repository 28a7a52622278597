export { startWebhookDelivery } from './service.js';
export { WebhookDeliveryConfigSchema, type WebhookDeliveryConfig } from './config.js';
/** What its runtime role may do to each table: granted after its migrations, checked by e2e/least-privilege. */
export { privileges } from './data/migrations.js';
