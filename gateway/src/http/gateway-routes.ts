import type { Express, Request, RequestHandler } from 'express';
import cors from 'cors';
import helmet from 'helmet';
import { discoveryBody } from '@payments/contracts';
import { clientAddressKey, splitList } from '@payments/service-kit';
import type { GatewayConfig } from '../config.js';
import { buildOpenApiDocument } from '../openapi/openapi-document.js';
import type { Limiter } from '../data/rate-limit-store.js';
import { apiDocsRoutes } from './api-docs.js';
import { rateLimit } from './rate-limiting.js';
import { versioning } from './versioning.js';

export interface RateLimits {
  address: Limiter;
  user: Limiter;
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
 * The steps every request takes after the edge, routed or not (CORS, then the per-address limit), and the
 * per-user limit routed requests take after their token check. The Express app and the proxied routes
 * (proxied-routes.ts) run the same instances, so they share the counters.
 */
export interface GatewaySteps {
  beforeRoutes: RequestHandler[];
  afterAuth: RequestHandler[];
  /** The client's address as derived under TRUSTED_PROXIES. */
  clientAddress: (req: Request) => string | undefined;
}

export function gatewaySteps(config: GatewayConfig, limits: RateLimits | null): GatewaySteps {
  const trusted = splitList(config.TRUSTED_PROXIES).length > 0;
  // Express's req.ip under 'trust proxy' (set on the app in mountGatewayRoutes); without trusted proxies that is
  // the socket's address, taken straight.
  const clientAddress = trusted
    ? (req: Request) => req.ip ?? req.socket.remoteAddress
    : (req: Request) => req.socket.remoteAddress;
  const beforeRoutes: RequestHandler[] = [];
  const origins = splitList(config.CORS_ORIGINS);
  if (origins.length > 0)
    beforeRoutes.push(cors({ origin: origins, exposedHeaders: EXPOSED_HEADERS, maxAge: 600 }));
  // Per client as derived under TRUSTED_PROXIES; an IPv6 client's whole /64 shares one allowance.
  if (limits) beforeRoutes.push(rateLimit(limits.address, (req) => clientAddressKey(clientAddress(req))));
  const afterAuth = limits ? [rateLimit(limits.user, (req) => req.auth?.userId)] : [];
  return { beforeRoutes, afterAuth, clientAddress };
}

/**
 * The Express app's part after its edge: CORS and the per-address limit, then discovery and the API docs.
 * Routed paths never get here: the proxied routes serve them (proxied-routes.ts). Others fall through to the
 * kit's 404.
 */
export function mountGatewayRoutes(app: Express, config: GatewayConfig, steps: GatewaySteps): void {
  const trusted = splitList(config.TRUSTED_PROXIES);
  app.set('trust proxy', trusted.length > 0 ? trusted : false);
  for (const step of steps.beforeRoutes) app.use(step);
  app.get('/', (_req, res) => {
    res.json(discoveryBody());
  });
  app.use(apiDocsRoutes(buildOpenApiDocument()));
}
