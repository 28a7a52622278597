import { loadConfig, runMain } from '@payments/service-kit';
import { WebhookDeliveryConfigSchema } from './config.js';
import { startWebhookDelivery } from './service.js';

runMain('webhook-delivery', async () => startWebhookDelivery(loadConfig(WebhookDeliveryConfigSchema)));
