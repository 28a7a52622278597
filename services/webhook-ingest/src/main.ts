import { loadConfig, runMain } from '@payments/service-kit';
import { WebhookIngestConfigSchema } from './config.js';
import { startWebhookIngest } from './service.js';

runMain('webhook-ingest', async () => startWebhookIngest(loadConfig(WebhookIngestConfigSchema)));
