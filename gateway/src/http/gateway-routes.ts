import express, { type Express, type Request, type RequestHandler, type Router } from 'express';
import cors from 'cors';
import helmet from 'helmet';
import { Histogram } from 'prom-client';
import { discoveryBody } from '@payments/contracts';
import {
  AppError,
  clientAddressKey,
  requireAuth,
  splitList,
  type Metrics,
  type TokenVerifier,
} from '@payments/service-kit';
import type { GatewayConfig } from '../config.js';
import type { PaymentPageSettings } from '../domain/payment-page.js';
import type { Limiter } from '../data/rate-limit-store.js';
import {
  isProviderWebhook,
  isPublicRoute,
  matchRoute,
  pathTemplateOf,
  type RouteEntry,
  type UpstreamName,
} from '../domain/route-table.js';
import { buildOpenApiDocument } from '../openapi/openapi-document.js';
import { apiDocsRoutes } from './api-docs.js';
import { authenticateKeys, requireKeyScopes, type KeyExchange } from './api-key-auth.js';
import { consoleRoutes } from './console.js';
import { paymentPageRoutes } from './payment-page.js';
import { rateLimit } from './rate-limiting.js';
import type { UpstreamProxy } from './upstream-proxy.js';
import { versioning } from './versioning.js';

export interface RateLimits {
  address: Limiter;
  /** Per sending address too, for provider webhooks only: they never spend clients' `address` budget. */
  webhook: Limiter;
  user: Limiter;
  /** Per API key, besides its user's. */
  apiKey: Limiter;
}

export interface GatewayRoutesDeps {
  limits: RateLimits | null;
  verifier: TokenVerifier;
  /** API keys, exchanged at identity for the tokens services verify (docs/adr/0121). */
  keys: KeyExchange;
  metrics: Metrics;
  proxies: Record<UpstreamName, UpstreamProxy>;
  /** Where the console's build is (default: the @payments/console package's dist/). */
  consoleDirectory?: string | undefined;
  /** The payment page's provider (ADR 0128), checked at start-up. */
  paymentPage: PaymentPageSettings;
}

/** What a browser may read from our responses when CORS is on. */
const EXPOSED_HEADERS = [
  'Location',
  'X-Request-Id',
  'X-API-Version',
  'RateLimit',
  'RateLimit-Policy',
  'Retry-After',
];

/** Security headers and the API version, before the kit's probes: /health, /ready and /metrics carry them too. */
export function gatewayEdge(): RequestHandler[] {
  return [helmet(), versioning()];
}

/**
 * The app's part after its edge: CORS and the per-address limit for every path, then the routed paths, each
 * forwarded to its service, discovery, the API docs, the console and the payment page. Others fall through to the
 * kit's 404.
 */
export function mountGatewayRoutes(app: Express, config: GatewayConfig, deps: GatewayRoutesDeps): void {
  const trusted = splitList(config.TRUSTED_PROXIES);
  // req.ip believes X-Forwarded-For only from these; without them it is the socket's address.
  app.set('trust proxy', trusted.length > 0 ? trusted : false);
  const origins = splitList(config.CORS_ORIGINS);
  if (origins.length > 0) app.use(cors({ origin: origins, exposedHeaders: EXPOSED_HEADERS, maxAge: 600 }));
  // Per client as derived under TRUSTED_PROXIES; an IPv6 client's whole /64 shares one allowance. A provider's
  // webhooks count under their own budget: behind one address (an ingress not trusted, a NAT) a flood of clients
  // would otherwise have the provider's deliveries refused, and a burst of deliveries the clients' requests.
  if (deps.limits) {
    const clientKey = (req: Request) => (isProviderWebhook(req.path) ? undefined : clientAddressKey(req.ip));
    const webhookKey = (req: Request) => (isProviderWebhook(req.path) ? clientAddressKey(req.ip) : undefined);
    app.use(rateLimit(deps.limits.address, clientKey), rateLimit(deps.limits.webhook, webhookKey));
  }
  // First: nearly every request is a routed one, and then needs none of the layers below.
  app.use(routedPaths(config, deps));
  app.get('/', (_req, res) => {
    res.json(discoveryBody());
  });
  app.use(apiDocsRoutes(buildOpenApiDocument()));
  app.use(consoleRoutes(deps.consoleDirectory));
  app.use(paymentPageRoutes(deps.paymentPage, deps.consoleDirectory));
}

/**
 * Every path of the route table: its route template named for logs and metrics, the body limit, the token check
 * (unless the route is public), the per-user limit, then the service's proxy. Other paths leave the router.
 */
function routedPaths(config: GatewayConfig, deps: GatewayRoutesDeps): Router {
  const router = express.Router();
  const upstreamDuration = upstreamHistogram(deps.metrics);
  const authenticate = authenticateKeys(deps.keys, requireAuth(deps.verifier));
  router.use((req, res, next) => {
    const entry = matchRoute(req.path);
    if (!entry) return next('router');
    res.locals.routeEntry = entry;
    res.locals.routeTemplate = pathTemplateOf(req.path) ?? entry.pattern;
    next();
  });
  router.use((req, _res, next) => {
    // Chunked bodies are counted as they stream (upstream-proxy.ts).
    const length = Number(req.get('content-length') ?? 0);
    if (length > config.MAX_BODY_BYTES) {
      return next(
        new AppError('PAYLOAD_TOO_LARGE', `The request body is larger than ${config.MAX_BODY_BYTES} bytes`),
      );
    }
    next();
  });
  router.use((req, res, next) =>
    isPublicRoute(req.method, req.path) ? next() : authenticate(req, res, next),
  );
  router.use(requireKeyScopes());
  if (deps.limits) {
    router.use(
      rateLimit(deps.limits.user, (req) => req.auth?.userId),
      rateLimit(deps.limits.apiKey, (req) => req.auth?.apiKey?.id),
    );
  }
  router.use((req, res, next) => {
    const entry = res.locals.routeEntry as RouteEntry;
    const end = upstreamDuration.startTimer({
      method: req.method,
      upstream: entry.upstream,
      route: entry.pattern,
    });
    res.on('finish', () => end({ status: res.statusCode }));
    return deps.proxies[entry.upstream].handler(req, res, next);
  });
  return router;
}

function upstreamHistogram(metrics: Metrics): Histogram<string> {
  return (
    (metrics.registry.getSingleMetric('gateway_upstream_duration_seconds') as
      Histogram<string> | undefined) ??
    new Histogram({
      name: 'gateway_upstream_duration_seconds',
      help: 'Proxied request latency by upstream, route and status',
      labelNames: ['method', 'upstream', 'route', 'status'],
      buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10],
      registers: [metrics.registry],
    })
  );
}
