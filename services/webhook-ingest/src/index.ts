export { startWebhookIngest } from './service.js';
export {
  DEVELOPMENT_WEBHOOK_SECRET,
  WebhookIngestConfigSchema,
  resolveWebhookSettings,
  type WebhookIngestConfig,
} from './config.js';
/** What its runtime role may do to each table: granted after its migrations, checked by e2e/least-privilege. */
export { privileges } from './data/migrations.js';
