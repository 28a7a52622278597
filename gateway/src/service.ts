import {
  checkedServiceCredential,
  connectBus,
  createHttpApp,
  createLogger,
  createMetrics,
  createServiceClient,
  followIdentityTokens,
  measureBusConnection,
  serveHttp,
  startService,
  type RunningService,
  type ServiceDeps,
  startTracing,
} from '@payments/service-kit';
import { paymentPageSettingsOf, type GatewayConfig } from './config.js';
import type { UpstreamName } from './domain/route-table.js';
import { createLimiterStore } from './data/rate-limit-store.js';
import { revokedThroughGateway } from './events/revocations.js';
import { createKeyExchange } from './http/api-key-auth.js';
import { renderError } from './http/error-rendering.js';
import { gatewayEdge, mountGatewayRoutes, type RateLimits } from './http/gateway-routes.js';
import { createUpstreamProxy, type UpstreamProxy } from './http/upstream-proxy.js';

export interface GatewayDeps extends ServiceDeps {
  /** Where the console's build is (default: the @payments/console package's dist/); a test names another. */
  consoleDirectory?: string;
}

export async function startGateway(config: GatewayConfig, deps: GatewayDeps = {}): Promise<RunningService> {
  const logger = deps.logger ?? createLogger('gateway', config.LOG_LEVEL);
  const serviceCredential = checkedServiceCredential(config, logger);
  // Checked before anything starts; the payment page's route serves with it (ADR 0128).
  const paymentPage = paymentPageSettingsOf(config);
  logger.info({ payment_page: paymentPage.provider }, 'payment page provider');
  return startService(logger, { drainSeconds: config.SHUTDOWN_DRAIN_SECONDS }, async (shutdown) => {
    // First opened, last closed: the spans of the shutdown itself are still exported.
    const tracing = startTracing('gateway', config);
    shutdown.add('tracing', () => tracing.stop());
    const metrics = createMetrics('gateway');

    const bus =
      config.AMQP_URL || deps.bus
        ? await connectBus(
            { AMQP_URL: config.AMQP_URL ?? '', AMQP_NAMESPACE: config.AMQP_NAMESPACE },
            logger,
            shutdown,
            deps.bus,
          )
        : null;
    if (bus) measureBusConnection(metrics, bus);
    // Without a bus, reloading is how revocations arrive.
    const { verifier, followed } = await followIdentityTokens(config, {
      serviceToken: serviceCredential.token,
      bus,
      reloadEveryMs: bus ? undefined : config.REVOCATIONS_RELOAD_SECONDS * 1000,
      shutdown,
      logger,
    });

    let limits: RateLimits | null = null;
    if (config.RATE_LIMIT_ENABLED) {
      const store = await createLimiterStore({
        redisUrl: config.REDIS_URL,
        keyPrefix: config.RATE_LIMIT_KEY_PREFIX,
        logger,
      });
      shutdown.add('rate-limit store', () => store.close());
      limits = {
        address: store.limiter({
          name: 'address',
          quota: config.RATE_LIMIT_ADDRESS_POINTS,
          windowSeconds: config.RATE_LIMIT_ADDRESS_WINDOW_SECONDS,
        }),
        webhook: store.limiter({
          name: 'webhook',
          quota: config.RATE_LIMIT_WEBHOOK_POINTS,
          windowSeconds: config.RATE_LIMIT_WEBHOOK_WINDOW_SECONDS,
        }),
        user: store.limiter({
          name: 'user',
          quota: config.RATE_LIMIT_USER_POINTS,
          windowSeconds: config.RATE_LIMIT_USER_WINDOW_SECONDS,
        }),
        apiKey: store.limiter({
          name: 'api-key',
          quota: config.RATE_LIMIT_API_KEY_POINTS,
          windowSeconds: config.RATE_LIMIT_API_KEY_WINDOW_SECONDS,
        }),
      };
    }

    const keys = createKeyExchange({
      identity: createServiceClient(config.IDENTITY_URL, {
        serviceToken: serviceCredential.token,
        timeoutMs: config.UPSTREAM_TIMEOUT_MS,
      }),
      verifier,
    });

    const upstreams: Record<UpstreamName, string> = {
      identity: config.IDENTITY_URL,
      ledger: config.LEDGER_URL,
      currency: config.CURRENCY_URL,
      'webhook-ingest': config.WEBHOOK_INGEST_URL,
      'webhook-delivery': config.WEBHOOK_DELIVERY_URL,
    };
    const proxies = Object.fromEntries(
      Object.entries(upstreams).map(([name, url]) => [
        name,
        createUpstreamProxy(
          { name: name as UpstreamName, url },
          {
            timeoutMs: config.UPSTREAM_TIMEOUT_MS,
            maxSockets: config.UPSTREAM_MAX_SOCKETS,
            maxBodyBytes: config.MAX_BODY_BYTES,
            logger,
            // Express's req.ip: under 'trust proxy' (TRUSTED_PROXIES) what they forwarded, else the socket's address.
            clientAddress: (req) => req.ip ?? req.socket.remoteAddress,
            onResponse: (req, status) => {
              const revocation = revokedThroughGateway(req, status);
              if (revocation) followed.revocations.add(revocation);
            },
          },
        ),
      ]),
    ) as Record<UpstreamName, UpstreamProxy>;
    shutdown.add('upstream connections', () => {
      for (const proxy of Object.values(proxies)) proxy.close();
    });

    const app = createHttpApp(
      {
        logger,
        metrics,
        serviceCredential,
        privateReadiness: true,
        bodyParser: 'none',
        early: gatewayEdge(),
        renderError,
        // Only what this process needs: an upstream that is down answers 503 on its own routes (docs/adr/0110).
        readiness: [{ name: 'revocations', check: followed.sync.isLoaded }],
        shutdown,
      },
      (app) =>
        mountGatewayRoutes(app, config, {
          limits,
          verifier,
          keys,
          metrics,
          proxies,
          consoleDirectory: deps.consoleDirectory,
        }),
    );
    const address = await serveHttp(
      'gateway',
      app,
      { HOST: config.HOST, PORT: config.GATEWAY_PORT ?? config.PORT },
      shutdown,
    );
    logger.info({ url: address.url }, 'gateway listening');
    return address;
  });
}
