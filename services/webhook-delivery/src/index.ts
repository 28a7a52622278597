export { startWebhookDelivery } from './service.js';
export { WebhookDeliveryConfigSchema, type WebhookDeliveryConfig } from './config.js';
