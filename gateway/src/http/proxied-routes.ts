import type { IncomingMessage, RequestListener } from 'node:http';
import express, { type Express, type Request, type RequestHandler, type Response } from 'express';
import { Histogram } from 'prom-client';
import { VERSION_HEADER, type ApiVersion, type Problem } from '@payments/contracts';
import {
  AppError,
  assignRequestId,
  logRequests,
  requireAuth,
  toProblem,
  type Logger,
  type Metrics,
  type TokenVerifier,
} from '@payments/service-kit';
import { VERSION_LIFECYCLE, type VersionLifecycle } from '../domain/api-version.js';
import { isPublicRoute, matchRoute, type RouteEntry, type UpstreamName } from '../domain/route-table.js';
import { pathTemplateOf } from '../openapi/operations.js';
import { helmetDefaults, type HeaderList } from './security-headers.js';
import { retirementHeaders, versionUrl } from './versioning.js';

/** As the kit's app (http/app.ts) accepts a client's X-Request-Id. */
/** What makes parseurl (Express's `req.path`) leave its fast path: such urls get Express's own answer. */
const UNUSUAL_URL = /[\t\n\f\r #\u00a0\ufeff]/;
const expressPath = Object.getOwnPropertyDescriptor(express.request, 'path')?.get as (this: {
  url: string;
}) => string;

type Step = (req: Request, res: Response, next: (error?: unknown) => void) => unknown;

export interface ProxiedRoutesDeps {
  /** The app every other path goes to; its prototypes are the requests' and responses' (kit's listen). */
  app: Express;
  logger: Logger;
  metrics: Metrics;
  verifier: TokenVerifier;
  maxBodyBytes: number;
  /** Run after the edge and before the body limit, as in the app: CORS, then the per-address limit. */
  before: RequestHandler[];
  /** Run after the token check: the per-user limit. */
  afterAuth: RequestHandler[];
  proxies: Record<UpstreamName, (req: Request, res: Response) => void>;
  renderError: (problem: Problem, req: Request, res: Response) => void;
  lifecycle?: Partial<Record<ApiVersion, VersionLifecycle>>;
}

interface RoutedLocals {
  entry: RouteEntry;
  path: string;
}

interface Routed {
  route: RouteEntry;
  /** The url the service sees (the version prefix taken off), and its path. */
  url: string;
  path: string;
  version: ApiVersion;
  prefix: string | null;
}

/**
 * The gateway's front door. Requests for a routed path (after versioning) are served here, without Express: the
 * same steps in the same order as the app's pipeline — request id, access log, HTTP metrics, security headers,
 * versioning, CORS and the per-address limit, body limit, token check, per-user limit, X-User-Id, upstream
 * metrics, proxy — and errors rendered by the same code. Everything else (/, docs, probes, 404s, an unsupported
 * version) goes to the Express app untouched.
 */
export function gatewayListener(deps: ProxiedRoutesDeps): RequestListener {
  const serve = proxiedRoutes(deps);
  const { app } = deps;
  return (incoming, outgoing) => {
    const req = incoming as Request;
    const res = outgoing as Response;
    const routed = routedTarget(req);
    if (routed) serve(req, res, routed);
    else app(req, res);
  };
}

/** The route a request is proxied to, decided exactly as the app did (version first, then `req.path`). */
function routedTarget(req: IncomingMessage): Routed | null {
  const { headers } = req;
  const versioned = versionUrl(req.url ?? '/', headers.accept, headers[VERSION_HEADER] as string | undefined);
  if (!versioned.ok) return null;
  const { url, resolution } = versioned;
  const path = pathnameOf(url);
  const route = matchRoute(path);
  if (!route) return null;
  return { route, url, path, version: resolution.version, prefix: resolution.prefix };
}

function pathnameOf(url: string): string {
  if (url.charCodeAt(0) === 0x2f && !UNUSUAL_URL.test(url)) {
    const at = url.indexOf('?');
    return at === -1 ? url : url.slice(0, at);
  }
  return expressPath.call({ url });
}

function proxiedRoutes(deps: ProxiedRoutesDeps) {
  const { app, logger, metrics } = deps;
  const lifecycle = deps.lifecycle ?? VERSION_LIFECYCLE;
  const security: HeaderList = helmetDefaults();
  const versionHeaders = new Map<ApiVersion, HeaderList>();
  const versionHeadersOf = (version: ApiVersion): HeaderList => {
    let headers = versionHeaders.get(version);
    if (!headers) {
      headers = [
        ['X-API-Version', version],
        ['Vary', 'Accept, X-API-Version'],
        ...retirementHeaders(lifecycle, version),
      ];
      versionHeaders.set(version, headers);
    }
    return headers;
  };
  // The kit's own access-log middleware (it also gives these requests `req.log`) and HTTP metrics.
  const logAccess = logRequests(app, logger);
  const upstreamDuration = upstreamHistogram(metrics);
  const authenticate = requireAuth(deps.verifier);

  const fail = (error: unknown, req: Request, res: Response) => {
    // As the app's error handler (http/app.ts).
    const { problem, headers } = toProblem(error, req);
    if (error instanceof AppError && problem.status >= 500) req.log.warn({ code: error.code }, error.detail);
    else if (problem.status >= 500) req.log.error({ err: error }, 'request failed');
    if (res.headersSent) return void res.end();
    deps.renderError(problem, req, res.set(headers ?? {}));
  };

  const forward: Step = (req, res) => {
    // The verified caller, for services' logs; a client cannot supply it. Services still verify the token.
    delete req.headers['x-user-id'];
    if (req.auth) req.headers['x-user-id'] = req.auth.userId;
    const route = (res.locals.route as RoutedLocals).entry;
    const end = upstreamDuration.startTimer({
      method: req.method,
      upstream: route.upstream,
      route: route.pattern,
    });
    res.on('finish', () => end({ status: res.statusCode }));
    deps.proxies[route.upstream](req, res);
  };
  const limitBody: Step = (req, _res, next) => {
    const length = Number(req.headers['content-length'] ?? 0);
    if (length > deps.maxBodyBytes) {
      return next(
        new AppError('PAYLOAD_TOO_LARGE', `The request body is larger than ${deps.maxBodyBytes} bytes`),
      );
    }
    next();
  };
  const checkToken: Step = (req, res, next) => {
    if (isPublicRoute(req.method, (res.locals.route as RoutedLocals).path)) return next();
    return authenticate(req, res, next);
  };
  // Where the app's routed part began: what answered before it (a CORS preflight, the per-address limit) is
  // logged and measured as 'unmatched', as it was.
  const enterRoute: Step = (_req, res, next) => {
    const { entry, path } = res.locals.route as RoutedLocals;
    res.locals.routeTemplate = pathTemplateOf(path) ?? entry.pattern;
    next();
  };
  const steps: Step[] = [...deps.before, enterRoute, limitBody, checkToken, ...deps.afterAuth, forward];

  // One `next` per request, walking the steps as Express's router would.
  const run = (req: Request, res: Response) => {
    let at = 0;
    const next = (error?: unknown) => {
      if (error) return fail(error, req, res);
      const step = steps[at++] as Step;
      try {
        const returned = step(req, res, next);
        // As Express 5: a rejected promise from a step is that step's error.
        if (returned instanceof Promise) {
          returned.then(undefined, (reason: unknown) => next(reason ?? new Error('Rejected promise')));
        }
      } catch (thrown) {
        next(thrown);
      }
    };
    next();
  };

  return (req: Request, res: Response, routed: Routed) => {
    // What Express's app.handle gives every request; the error rendering uses it.
    req.res = res;
    res.req = req;
    req.originalUrl = req.url;
    const locals: Record<string, unknown> = Object.create(null) as Record<string, unknown>;
    res.locals = locals;

    assignRequestId(req, res);
    logAccess(req, res, noop);
    metrics.middleware(req, res, noop);

    for (const [name, value] of security) res.setHeader(name, value);
    delete req.headers['x-forwarded-prefix'];
    if (routed.prefix) {
      req.url = routed.url;
      req.originalUrl = routed.url;
      req.headers['x-forwarded-prefix'] = routed.prefix;
      locals.versionPrefix = routed.prefix;
    }
    req.headers[VERSION_HEADER] = routed.version;
    for (const [name, value] of versionHeadersOf(routed.version)) res.setHeader(name, value);

    locals.route = { entry: routed.route, path: routed.path } satisfies RoutedLocals;
    run(req, res);
  };
}

function noop() {}

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
