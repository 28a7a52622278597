import {
  checkedServiceCredential,
  connectBus,
  createHttpApp,
  createLogger,
  createMetrics,
  databaseReadiness,
  measureBusConnection,
  openServiceDatabase,
  serveHttp,
  startRetention,
  startService,
  type RunningService,
  type ServiceDeps,
  startTracing,
} from '@payments/service-kit';
import { resolveWebhookSettings, type WebhookIngestConfig } from './config.js';
import { createLedgerPayments } from './data/ledger-payments.js';
import { migrations } from './data/migrations.js';
import { privileges } from './data/privileges.js';
import { createWebhookEventRepository } from './data/webhook-event-repository.js';
import { startRepublisher } from './events/republisher.js';
import { createWebhookIntake } from './events/webhook-intake.js';
import { mountInternalRoutes } from './http/internal-routes.js';
import { mountWebhookRoutes, renderWebhookError } from './http/webhook-routes.js';
import { createWebhookMetrics } from './webhook-metrics.js';

const NAME = 'webhook-ingest';

export async function startWebhookIngest(
  config: WebhookIngestConfig,
  deps: ServiceDeps = {},
): Promise<RunningService> {
  const logger = deps.logger ?? createLogger(NAME, config.LOG_LEVEL);
  const settings = resolveWebhookSettings(config);
  const serviceCredential = checkedServiceCredential(config, logger, {
    WEBHOOK_SECRETS: settings.usesDevelopmentSecret,
  });
  return startService(logger, { drainSeconds: config.SHUTDOWN_DRAIN_SECONDS }, async (shutdown) => {
    // First opened, last closed: the spans of the shutdown itself are still exported.
    const tracing = startTracing(NAME, config);
    shutdown.add('tracing', () => tracing.stop());
    const knex = await openServiceDatabase(config, { migrations, privileges, logger }, shutdown);
    const bus = await connectBus(config, logger, shutdown, deps.bus);

    const metrics = createMetrics(NAME);
    measureBusConnection(metrics, bus);
    const webhookMetrics = createWebhookMetrics(metrics);
    const events = createWebhookEventRepository(knex);
    const payments = createLedgerPayments(config.LEDGER_URL, serviceCredential.token);
    const republisher = startRepublisher({
      events,
      bus,
      metrics: webhookMetrics,
      logger,
      intervalMs: config.WEBHOOK_REPUBLISH_INTERVAL_MS,
      afterSeconds: config.WEBHOOK_REPUBLISH_AFTER_SECONDS,
    });
    shutdown.add('republisher', () => republisher.stop());
    const retention = startRetention({
      what: 'webhook events',
      pruneBatch: (limit) => events.pruneReceivedBefore(config.WEBHOOK_EVENT_RETENTION_DAYS, limit),
      logger,
    });
    shutdown.add('webhook event retention', () => retention.stop());
    const intake = createWebhookIntake({
      events,
      bus,
      metrics: webhookMetrics,
      payments,
      onUnpublished: (receivedAt) => republisher.leftUnpublished(receivedAt),
    });
    const routeDeps = { logger, intake, metrics: webhookMetrics, settings };
    const app = createHttpApp(
      {
        logger,
        metrics,
        serviceCredential,
        bodyParser: 'none',
        renderError: renderWebhookError,
        // A webhook is answered only once its event is recorded and published (ADR 0009): no broker, nothing served.
        readiness: [databaseReadiness(knex), { name: 'bus', check: () => bus.isConnected() }],
        shutdown,
      },
      (routes) => {
        mountWebhookRoutes(routes, routeDeps);
        mountInternalRoutes(routes, { events });
      },
    );
    const address = await serveHttp(NAME, app, config, shutdown);

    if (settings.usesDevelopmentSecret) {
      logger.warn('WEBHOOK_SECRETS is not set: accepting signatures made with the development secret');
    }
    if (settings.unsignedEnabled) {
      logger.warn('UNSIGNED_WEBHOOK_ENABLED: /webhook/payment confirms payments without a signature');
    }
    logger.info(
      {
        url: address.url,
        unsigned_webhook: settings.unsignedEnabled,
        stand_in_confirmations: settings.standInConfirmations,
      },
      'webhook-ingest listening',
    );
    return address;
  });
}
