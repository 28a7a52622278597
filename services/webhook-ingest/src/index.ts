export { startWebhookIngest } from './service.js';
export {
  DEVELOPMENT_WEBHOOK_SECRET,
  WebhookIngestConfigSchema,
  resolveWebhookSettings,
  type WebhookIngestConfig,
} from './config.js';
