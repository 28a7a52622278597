import { busRightsOf } from '@payments/contracts';
import {
  checkedServiceCredential,
  connectBus,
  createHttpApp,
  createLogger,
  createMetrics,
  measureBusConnection,
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
import { createConfiguredCatalogue, type CurrencyConfig } from './config.js';
import { createAccountCountRepository } from './data/account-count-repository.js';
import { migrations } from './data/migrations.js';
import { privileges } from './data/privileges.js';
import { createReferenceRateSource } from './data/reference-rate-source.js';
import { createUrlRateSource } from './data/url-rate-source.js';
import type { RateSource } from './domain/exchange-rates.js';
import { createRateCache } from './domain/rate-cache.js';
import { startAccountEventConsumer } from './events/account-event-consumer.js';
import { mountCurrencyRoutes } from './http/currency-routes.js';

export interface CurrencyDeps extends ServiceDeps {
  /** Replaces the configured rate source (tests count its calls or make it fail). */
  rateSource?: RateSource;
  /** The rate cache's clock, in epoch milliseconds. */
  now?: () => number;
}

export async function startCurrency(
  config: CurrencyConfig,
  deps: CurrencyDeps = {},
): Promise<RunningService> {
  const logger = deps.logger ?? createLogger('currency', config.LOG_LEVEL);
  const serviceCredential = checkedServiceCredential(config, logger);
  // Settings are checked before anything is opened, so a bad code fails fast and leaves nothing to close.
  const catalogue = createConfiguredCatalogue(config);
  const rateSource =
    deps.rateSource ??
    (config.RATES_SOURCE_URL ? createUrlRateSource(config.RATES_SOURCE_URL) : createReferenceRateSource());
  return startService(logger, { drainSeconds: config.SHUTDOWN_DRAIN_SECONDS }, async (shutdown) => {
    // First opened, last closed: the spans of the shutdown itself are still exported.
    const tracing = startTracing('currency', config);
    shutdown.add('tracing', () => tracing.stop());
    const knex = await openServiceDatabase(config, { migrations, privileges, logger }, shutdown);
    const bus = await connectBus(config, logger, shutdown, deps.bus);
    const metrics = createMetrics('currency');
    measureBusConnection(metrics, bus);
    const accounts = createAccountCountRepository(knex);
    const consumer = await startAccountEventConsumer(bus, accounts, metrics);
    shutdown.add('event consumer', () => consumer.stop());
    const inboxRetention = startInboxRetention(knex, { retentionDays: config.INBOX_RETENTION_DAYS, logger });
    shutdown.add('inbox retention', () => inboxRetention.stop());

    // Only the admins' dead-letter routes take a token: readiness does not wait for the revocations, so the public
    // catalogue and rates never do.
    const { verifier } = await followIdentityTokens(config, {
      serviceToken: serviceCredential.token,
      bus,
      shutdown,
      logger,
    });
    const auth = requireAuth(verifier);

    const rates = createRateCache({
      source: rateSource,
      ttlMs: config.RATES_CACHE_TTL_SECONDS * 1000,
      graceMs: config.RATES_STALE_GRACE_SECONDS * 1000,
      logger,
      now: deps.now,
    });
    const app = createHttpApp(
      {
        logger,
        metrics,
        serviceCredential,
        // The catalogue and the rates are served from memory; only /statistics reads the database (docs/adr/0110).
        readiness: [],
        shutdown,
      },
      (routes) => {
        mountCurrencyRoutes(routes, { catalogue, accounts, rates });
        const trail = publishedAdminTrail(bus);
        routes.use(deadLetterRoutes({ bus, queues: busRightsOf('currency').consumes, auth, trail }));
      },
    );
    const address = await serveHttp('currency', app, config, shutdown);
    logger.info(
      { url: address.url, supported: catalogue.supported().map((c) => c.code), rates: rateSource.name },
      'currency service listening',
    );
    return address;
  });
}
