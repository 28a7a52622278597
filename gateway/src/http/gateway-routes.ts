import express, { type Express, type Request, type RequestHandler } from 'express';
import cors from 'cors';
import helmet from 'helmet';
import { Histogram } from 'prom-client';
import { discoveryBody } from '@payments/contracts';
import {
  AppError,
  clientAddressKey,
  splitList,
  type Metrics,
  type TokenVerifier,
} from '@payments/service-kit';
import type { GatewayConfig } from '../config.js';
import { matchRoute, type RouteEntry, type UpstreamName } from '../domain/route-table.js';
import { buildOpenApiDocument } from '../openapi/openapi-document.js';
import { pathTemplateOf } from '../openapi/operations.js';
import type { Limiter } from '../data/rate-limit-store.js';
import { apiDocsRoutes } from './api-docs.js';
import { authenticateAtEdge } from './edge-auth.js';
import { rateLimit } from './rate-limiting.js';
import { versioning } from './versioning.js';

export interface RateLimits {
  address: Limiter;
  user: Limiter;
}

export interface GatewayRouteDeps {
  config: GatewayConfig;
  verifier: TokenVerifier;
  limits: RateLimits | null;
  proxies: Record<UpstreamName, RequestHandler>;
  metrics: Metrics;
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
 * The gateway's pipeline after its edge: per-address limit, then for routed paths the token check, the per-user
 * quota and the proxy, then discovery and the API docs. Unrouted paths fall through to the kit's 404.
 */
export function mountGatewayRoutes(app: Express, deps: GatewayRouteDeps): void {
  const { config, limits } = deps;
  const trusted = splitList(config.TRUSTED_PROXIES);
  app.set('trust proxy', trusted.length > 0 ? trusted : false);
  const origins = splitList(config.CORS_ORIGINS);
  if (origins.length > 0) app.use(cors({ origin: origins, exposedHeaders: EXPOSED_HEADERS, maxAge: 600 }));

  // Per client as derived under TRUSTED_PROXIES; an IPv6 client's whole /64 shares one allowance.
  if (limits)
    app.use(rateLimit(limits.address, (req) => clientAddressKey(req.ip ?? req.socket.remoteAddress)));

  const routed = express.Router();
  routed.use(limitBodySize(config.MAX_BODY_BYTES));
  routed.use(authenticateAtEdge(deps.verifier));
  if (limits) routed.use(rateLimit(limits.user, (req) => req.auth?.userId));
  routed.use(forwardIdentity);
  routed.use(recordUpstreamMetrics(deps.metrics));
  routed.use((req, res, next) => deps.proxies[routeOf(res.locals).upstream](req, res, next));

  app.use((req, res, next) => {
    const route = matchRoute(req.path);
    if (!route) return next();
    res.locals.route = route;
    res.locals.routeTemplate = pathTemplateOf(req.path) ?? route.pattern;
    routed(req, res, next);
  });
  // After the routed paths, which never overlap these: the proxied requests do not walk through them.
  app.get('/', (_req, res) => {
    res.json(discoveryBody());
  });
  app.use(apiDocsRoutes(buildOpenApiDocument()));
}

function routeOf(locals: Record<string, unknown>): RouteEntry {
  return locals.route as RouteEntry;
}

function limitBodySize(maxBytes: number): RequestHandler {
  return (req, _res, next) => {
    const length = Number(req.get('content-length') ?? 0);
    if (length > maxBytes) {
      return next(new AppError('PAYLOAD_TOO_LARGE', `The request body is larger than ${maxBytes} bytes`));
    }
    next();
  };
}

/** The verified caller, for services' logs; a client cannot supply it. Services still verify the token. */
const forwardIdentity: RequestHandler = (req: Request, _res, next) => {
  delete req.headers['x-user-id'];
  if (req.auth) req.headers['x-user-id'] = req.auth.userId;
  next();
};

function recordUpstreamMetrics(metrics: Metrics): RequestHandler {
  const duration =
    (metrics.registry.getSingleMetric('gateway_upstream_duration_seconds') as
      Histogram<string> | undefined) ??
    new Histogram({
      name: 'gateway_upstream_duration_seconds',
      help: 'Proxied request latency by upstream, route and status',
      labelNames: ['method', 'upstream', 'route', 'status'],
      buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10],
      registers: [metrics.registry],
    });
  return (req, res, next) => {
    const route = routeOf(res.locals);
    const end = duration.startTimer({ method: req.method, upstream: route.upstream, route: route.pattern });
    res.on('finish', () => end({ status: res.statusCode }));
    next();
  };
}
