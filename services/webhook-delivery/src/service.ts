import { busRightsOf } from '@payments/contracts';
import {
  checkedServiceCredential,
  connectBus,
  createHttpApp,
  createLogger,
  createMetrics,
  DEFAULT_WEBHOOK_TOLERANCE_SECONDS,
  measureBusConnection,
  databaseReadiness,
  deadLetterRoutes,
  followIdentityTokens,
  openServiceDatabase,
  publishedAdminTrail,
  requireAuth,
  serveHttp,
  startInboxRetention,
  startService,
  type RunningService,
  type ServiceDeps,
  startTracing,
} from '@payments/service-kit';
import { checkProductionSettings, resolveSecretKeys, type WebhookDeliveryConfig } from './config.js';
import { createDeliveryRepository } from './data/delivery-repository.js';
import { createDrillRepository } from './data/drill-repository.js';
import { createEndpointRepository } from './data/endpoint-repository.js';
import { createEventRepository } from './data/event-repository.js';
import { migrations } from './data/migrations.js';
import { privileges } from './data/privileges.js';
import { createSecretBox } from './data/secret-box.js';
import { createObjectRenderer } from './data/object-renderer.js';
import { createAddressGuard, type Resolver } from './delivery/address-guard.js';
import { createDeliveryMetrics } from './delivery/delivery-metrics.js';
import { startDeliveryWorker, type DeliveryWorker } from './delivery/delivery-worker.js';
import { createEventRendering, startEventRenderer } from './delivery/event-rendering.js';
import { createWebhookSender } from './delivery/http-sender.js';
import { startLogRetention } from './delivery/log-retention.js';
import { createDrillRunner } from './drill/drill-runner.js';
import { startEventFanOut } from './events/event-fan-out.js';
import { drillRoutes } from './http/drill-routes.js';
import { endpointRoutes } from './http/endpoint-routes.js';
import { eventRoutes } from './http/event-routes.js';
import { internalRoutes } from './http/internal-routes.js';
import { createTransactionActivityRepository } from './data/transaction-activity-repository.js';

const NAME = 'webhook-delivery';

export interface WebhookDeliveryDeps extends ServiceDeps {
  /** Stands in for DNS (tests of rebinding). */
  resolve?: Resolver;
}

export async function startWebhookDelivery(
  config: WebhookDeliveryConfig,
  deps: WebhookDeliveryDeps = {},
): Promise<RunningService> {
  const logger = deps.logger ?? createLogger(NAME, config.LOG_LEVEL);
  checkProductionSettings(config);
  const secretKeys = resolveSecretKeys(config);
  const serviceCredential = checkedServiceCredential(config, logger, {
    WEBHOOK_ENDPOINT_SECRETS_KEYS: secretKeys.development,
  });
  return startService(logger, { drainSeconds: config.SHUTDOWN_DRAIN_SECONDS }, async (shutdown) => {
    // First opened, last closed: the spans of the shutdown itself are still exported.
    const tracing = startTracing(NAME, config);
    shutdown.add('tracing', () => tracing.stop());
    const knex = await openServiceDatabase(config, { migrations, privileges, logger }, shutdown);
    const metrics = createMetrics(NAME);
    const bus = await connectBus(config, logger, shutdown, deps.bus, { metrics });
    measureBusConnection(metrics, bus);
    const endpoints = createEndpointRepository(knex, createSecretBox(secretKeys.keys));
    const deliveries = createDeliveryRepository(knex);
    const events = createEventRepository(knex);
    const deliveryMetrics = createDeliveryMetrics(metrics, () => deliveries.countPending());
    const allowPrivate = config.WEBHOOK_ALLOW_PRIVATE_URLS;
    const guard = createAddressGuard({ allowPrivate, resolve: deps.resolve });
    const retryWindowMs = config.DELIVERY_RETRY_WINDOW_SECONDS * 1000;
    const sender = createWebhookSender({ guard, allowPrivate, timeoutMs: config.DELIVERY_TIMEOUT_MS });

    const renderer = createObjectRenderer({
      ledgerUrl: config.LEDGER_URL,
      identityUrl: config.IDENTITY_URL,
      serviceToken: serviceCredential.token,
    });
    const rendering = createEventRendering({ events, renderer });
    let worker: DeliveryWorker | null = null;
    let eventRenderer: { wake(): void } | null = null;
    if (config.DELIVERY_WORKER_ENABLED) {
      const started = startEventRenderer({
        events,
        rendering,
        logger,
        pollMs: config.DELIVERY_POLL_INTERVAL_MS,
      });
      shutdown.add('event renderer', () => started.stop());
      eventRenderer = started;
      worker = startDeliveryWorker({
        deliveries,
        endpoints,
        sender,
        renderer,
        events,
        rendering,
        metrics: deliveryMetrics,
        logger,
        retry: { baseMs: config.DELIVERY_BACKOFF_BASE_MS, maxMs: config.DELIVERY_BACKOFF_MAX_MS },
        concurrency: config.DELIVERY_CONCURRENCY,
        perEndpointConcurrency: config.DELIVERY_ENDPOINT_CONCURRENCY,
        timeoutMs: config.DELIVERY_TIMEOUT_MS,
        pollMs: config.DELIVERY_POLL_INTERVAL_MS,
      });
      const running = worker;
      shutdown.add('delivery worker', () => running.stop());
    }
    const wake = () => worker?.wake();
    const retention = startLogRetention({
      deliveries,
      events,
      retentionMs: config.DELIVERY_LOG_RETENTION_DAYS * 86_400_000,
      intervalMs: 3_600_000,
      logger,
    });
    shutdown.add('delivery log retention', () => retention.stop());
    const inboxRetention = startInboxRetention(knex, { retentionDays: config.INBOX_RETENTION_DAYS, logger });
    shutdown.add('inbox retention', () => inboxRetention.stop());

    const fanOut = await startEventFanOut({
      bus,
      knex,
      endpoints,
      deliveries,
      events,
      retryWindowMs,
      wake,
      wakeRenderer: () => eventRenderer?.wake(),
    });
    shutdown.add('event fan-out', () => fanOut.stop());

    const { verifier, followed } = await followIdentityTokens(config, {
      serviceToken: serviceCredential.token,
      bus,
      shutdown,
      logger,
    });
    // No outbox here: an admin's action is confirmed by the broker before it commits, or it is not done.
    const trail = publishedAdminTrail(bus);

    const app = createHttpApp(
      {
        logger,
        metrics,
        serviceCredential,
        // Endpoints are managed in the database; deliveries wait for the broker in their fan-out.
        readiness: [databaseReadiness(knex), { name: 'revocations', check: followed.sync.isLoaded }],
        shutdown,
      },
      (routes) => {
        const auth = requireAuth(verifier);
        routes.use(
          endpointRoutes(auth, {
            endpoints,
            deliveries,
            guard,
            maxEndpointsPerUser: config.MAX_ENDPOINTS_PER_USER,
            retryWindowMs,
            wake,
            trail,
          }),
        );
        routes.use(
          drillRoutes(auth, {
            endpoints,
            drills: createDrillRepository(knex),
            guard,
            runner: createDrillRunner({
              sender,
              budgetMs: config.WEBHOOK_DRILL_TIMEOUT_MS,
              toleranceSeconds: DEFAULT_WEBHOOK_TOLERANCE_SECONDS,
            }),
            limits: {
              endpointIntervalSeconds: config.WEBHOOK_DRILL_INTERVAL_SECONDS,
              perUserPerHour: config.WEBHOOK_DRILLS_PER_USER_PER_HOUR,
            },
          }),
        );
        routes.use(eventRoutes(auth, { events, rendering }));
        routes.use(internalRoutes({ activity: createTransactionActivityRepository(knex) }));
        routes.use(deadLetterRoutes({ bus, queues: busRightsOf(NAME).consumes, auth, trail }));
      },
    );
    const address = await serveHttp(NAME, app, config, shutdown);
    if (allowPrivate) logger.warn('WEBHOOK_ALLOW_PRIVATE_URLS: endpoints may point to private addresses');
    logger.info({ url: address.url, worker: config.DELIVERY_WORKER_ENABLED }, 'webhook-delivery listening');
    return address;
  });
}
