import {
  checkedServiceCredential,
  connectBus,
  createHttpApp,
  createLogger,
  createMetrics,
  measureBusConnection,
  DEVELOPMENT_SANDBOX_API_KEY,
  DEVELOPMENT_WEBHOOK_SECRET,
  serveHttp,
  splitList,
  startService,
  type EventBus,
  type RunningService,
  type ServiceDeps,
  startTracing,
} from '@payments/service-kit';
import { sandboxMode, type ProviderSandboxConfig } from './config.js';
import { createProviderWebhookClient } from './events/provider-webhook-client.js';
import { startSandboxDrain } from './events/sandbox-consumer.js';
import { mountStripeApi } from './http/stripe-api.js';
import { createConnectStore } from './stripe/connect.js';
import { createPaymentIntentStore } from './stripe/payment-intents.js';
import { createPlatformBalance } from './stripe/platform-balance.js';

const NAME = 'provider-sandbox';

export async function startProviderSandbox(
  config: ProviderSandboxConfig,
  deps: ServiceDeps = {},
): Promise<RunningService> {
  const logger = deps.logger ?? createLogger(NAME, config.LOG_LEVEL);
  const mode = sandboxMode(config);
  const serviceCredential = checkedServiceCredential(config, logger, {
    SANDBOX_WEBHOOK_SECRET: mode.enabled && config.SANDBOX_WEBHOOK_SECRET === DEVELOPMENT_WEBHOOK_SECRET,
    SANDBOX_API_KEY: mode.enabled && config.SANDBOX_API_KEY === DEVELOPMENT_SANDBOX_API_KEY,
  });
  return startService(logger, { drainSeconds: config.SHUTDOWN_DRAIN_SECONDS }, async (shutdown) => {
    // First opened, last closed: the spans of the shutdown itself are still exported.
    const tracing = startTracing(NAME, config);
    shutdown.add('tracing', () => tracing.stop());
    const metrics = createMetrics(NAME);
    // Its queue exists only where a sandbox is deployed; a deployed sandbox consumes it whether it plays the provider or not.
    const bus: EventBus = await connectBus(config, logger, shutdown, deps.bus, {
      metrics,
      deployment: { sandbox: true },
    });
    // Its Stripe API lives in memory; its queue's drain waits for the broker.
    measureBusConnection(metrics, bus);
    const client = createProviderWebhookClient({
      webhookIngestUrl: config.WEBHOOK_INGEST_URL,
      secret: config.SANDBOX_WEBHOOK_SECRET,
      logger,
    });
    if (!mode.enabled) {
      logger.warn({ reason: mode.reason }, 'provider sandbox disabled: it serves no API and pays nothing');
    }
    const drain = await startSandboxDrain(bus, metrics);
    shutdown.add('sandbox drain', () => drain.stop());
    // Form-encoded like Stripe's API, so no JSON body parsing; served only while the sandbox plays the provider.
    const app = createHttpApp(
      { logger, metrics, serviceCredential, shutdown, bodyParser: 'none' },
      (routes) => {
        if (mode.enabled) {
          const platform = createPlatformBalance();
          const api = mountStripeApi(routes, {
            platform,
            apiKey: config.SANDBOX_API_KEY,
            publishableKey: config.SANDBOX_PUBLISHABLE_KEY,
            store: createPaymentIntentStore(platform),
            connect: createConnectStore(platform),
            payoutDelayMs: config.SANDBOX_DELAY_MS,
            holdPayouts: config.SANDBOX_HOLD_PAYOUTS,
            duplicateDelivery: config.SANDBOX_DUPLICATE_DELIVERY,
            reorderWithinMs: config.SANDBOX_REORDER_EVENTS_MS,
            forgetEvents: {
              ratio: config.SANDBOX_FORGET_EVENTS,
              types: new Set(splitList(config.SANDBOX_FORGET_EVENT_TYPES)),
            },
            client,
            logger,
            autoPay: config.SANDBOX_AUTO_CONFIRM ? { delayMs: config.SANDBOX_DELAY_MS } : undefined,
          });
          shutdown.add('sandbox customer', () => api.stop());
        }
      },
    );
    const address = await serveHttp(NAME, app, config, shutdown);
    logger.info(
      { url: address.url, enabled: mode.enabled, webhook: config.WEBHOOK_INGEST_URL },
      'provider-sandbox listening',
    );
    return address;
  });
}
