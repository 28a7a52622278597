import { createLogger, databaseOptions, loadConfig, openDatabase } from '@payments/service-kit';
import { resolveSecretKeys, WebhookDeliveryConfigSchema } from './config.js';
import { createEndpointRepository } from './data/endpoint-repository.js';
import { migrations } from './data/migrations.js';
import { privileges } from './data/privileges.js';
import { createSecretBox } from './data/secret-box.js';

// Re-seals every endpoint's signing secrets under the first key of WEBHOOK_ENDPOINT_SECRETS_KEYS, so the keys
// after it can be dropped (docs/operations.md, "Rotating the endpoint secrets key"). Exits 1 when a secret opens
// under no configured key: that endpoint stays unable to sign until its key comes back or its owner rotates it.
const config = loadConfig(WebhookDeliveryConfigSchema);
const logger = createLogger('webhook-delivery-reseal', config.LOG_LEVEL);
const { keys } = resolveSecretKeys(config);
const knex = await openDatabase(databaseOptions(config, { migrations, privileges, logger }));
try {
  const report = await createEndpointRepository(knex, createSecretBox(keys)).resealSecrets();
  for (const { endpointId, problem } of report.unopenable) {
    console.error(`webhook endpoint ${endpointId}: ${problem}`);
  }
  console.log(
    `Re-sealed the secrets of ${report.resealed} endpoint(s) under the first key; ${report.current} already ` +
      `were; ${report.unopenable.length} could not be opened.`,
  );
  process.exitCode = report.unopenable.length > 0 ? 1 : 0;
} finally {
  await knex.destroy();
}
