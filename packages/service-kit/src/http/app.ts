import express, {
  type Express,
  type NextFunction,
  type Request,
  type RequestHandler,
  type Response,
} from 'express';
import { buildProblem, PROBLEM_CONTENT_TYPE, type Problem } from '@payments/contracts';
import { AppError } from '../errors.js';
import type { Shutdown } from '../lifecycle.js';
import type { Logger } from '../logger.js';
import type { Metrics } from '../metrics.js';
import { requireServiceCredential, type ServiceCredential } from '../service-credential.js';
import { isTracing } from '../tracing.js';
import { logRequests } from './request-logging.js';
import { traceRequests } from './request-tracing.js';

export interface ReadinessCheck {
  name: string;
  check: () => Promise<boolean> | boolean;
}

export interface HttpAppOptions {
  logger: Logger;
  metrics: Metrics;
  /** JSON body limit; 'none' leaves body parsing to the routes (webhooks verify raw bytes first). */
  bodyParser?: { limit: string } | 'none';
  /** What this process needs to serve its own requests; never another service's readiness. */
  readiness?: ReadinessCheck[];
  /** Once it is stopping, `/ready` answers 503 whatever the checks say, while requests are still served. */
  shutdown?: Pick<Shutdown, 'isStopping'>;
  /** Required on every `/internal` path and on `/metrics` (see service-credential.ts). */
  serviceCredential: ServiceCredential;
  /** `/ready` needs the credential too: the gateway's is reachable from the internet. */
  privateReadiness?: boolean;
  /** Middleware run on every request before the probes and routes (the gateway resolves the API version there). */
  early?: RequestHandler[];
  /** How errors are written; defaults to problem+json. Webhooks answer `{ error }` instead. */
  renderError?: (problem: Problem, req: Request, res: Response) => void;
}

/** A version prefix the gateway forwards (`/v1.1`); anything else in X-Forwarded-Prefix is not repeated. */
const SAFE_PREFIX = /^[\w.:-]{1,128}$/;
const JSON_TYPES = ['application/json', 'application/*+json'];
const BODY_METHODS = new Set(['POST', 'PUT', 'PATCH']);

export function requestPath(req: Request): string {
  const prefix = req.get('x-forwarded-prefix') ?? '';
  return `${SAFE_PREFIX.test(prefix.replaceAll('/', '')) ? prefix : ''}${req.originalUrl.split('?')[0]}`;
}

export function sendProblem(res: Response, problem: Problem, headers: Record<string, string> = {}): void {
  res.status(problem.status).set(headers).type(PROBLEM_CONTENT_TYPE).send(JSON.stringify(problem));
}

const QUERY_CANCELED = '57014';

/** A statement cancelled by its statement_timeout, or no free connection in the pool in time: both pass. */
const isDatabaseOverloaded = (error: unknown) => {
  const { code, name } = (error ?? {}) as { code?: string; name?: string };
  return code === QUERY_CANCELED || name === 'KnexTimeoutError';
};

/**
 * The database went away or stopped being the primary: a failover (its connections end with 57P01 or without a
 * word, the old primary turns read-only, the new one is not up yet), a restart, or a cut. The transaction under way
 * was rolled back (or committed, its answer lost): nothing is half-done, and it may be sent again, with its
 * Idempotency-Key where it moves money.
 */
const UNREACHABLE = new Set([
  '57P01', // admin_shutdown: terminated, as a switchover or pg_terminate_backend does
  '57P02', // crash_shutdown
  '57P03', // cannot_connect_now: starting up, or in recovery
  '25006', // read_only_sql_transaction: a connection to a primary since demoted
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
]);
const isDatabaseUnreachable = (error: unknown) => {
  const { code, message } = (error ?? {}) as { code?: unknown; message?: unknown };
  if (typeof code === 'string' && (code.startsWith('08') || UNREACHABLE.has(code))) return true;
  // node-postgres ends a query whose connection closed under it with this message and no code (knex puts the
  // statement before it).
  return (
    typeof message === 'string' &&
    /Connection terminated( unexpectedly| due to connection timeout)?$/.test(message)
  );
};

/** Turns anything thrown into a problem; unknown errors become a 500 that reveals nothing. */
function toProblem(error: unknown, req: Request): { problem: Problem; headers?: Record<string, string> } {
  const instance = requestPath(req);
  if (error instanceof AppError) {
    return {
      problem: buildProblem(error.code, error.detail, instance, error.errors),
      headers: error.headers,
    };
  }
  if (isDatabaseOverloaded(error)) {
    return {
      problem: buildProblem('SERVICE_UNAVAILABLE', 'The database is busy; try again shortly', instance),
      headers: { 'Retry-After': '1' },
    };
  }
  if (isDatabaseUnreachable(error)) {
    return {
      problem: buildProblem(
        'SERVICE_UNAVAILABLE',
        'The database is unavailable; try again shortly',
        instance,
      ),
      headers: { 'Retry-After': '1' },
    };
  }
  const type = (error as { type?: string } | null)?.type;
  if (type === 'entity.parse.failed') {
    return { problem: buildProblem('VALIDATION_ERROR', 'The request body is not valid JSON', instance) };
  }
  if (type === 'entity.too.large') {
    return { problem: buildProblem('PAYLOAD_TOO_LARGE', 'The request body is too large', instance) };
  }
  if (type === 'charset.unsupported' || type === 'encoding.unsupported') {
    return {
      problem: buildProblem('UNSUPPORTED_MEDIA_TYPE', 'The request body encoding is not supported', instance),
    };
  }
  return { problem: buildProblem('INTERNAL_ERROR', 'An unexpected error occurred', instance) };
}

/** A body a JSON endpoint cannot read is a 415, not a confusing 400 about a missing object. */
const requireJsonBody: RequestHandler = (req, _res, next) => {
  const length = Number(req.get('content-length') ?? 0);
  const hasBody = req.get('transfer-encoding') !== undefined || length > 0;
  if (!BODY_METHODS.has(req.method) || !hasBody || req.is(JSON_TYPES)) return next();
  next(
    new AppError(
      'UNSUPPORTED_MEDIA_TYPE',
      `The request body must be JSON (Content-Type: application/json), not ${req.get('content-type') ?? 'untyped'}`,
    ),
  );
};

/**
 * The Express app every service starts from: request ids, access logs, JSON bodies, health and readiness,
 * metrics, then the service's routes, then 404 and one error handler that speaks problem+json. `/internal/*` and
 * `/metrics` answer only callers with the service credential; `/health` answers anyone.
 */
export function createHttpApp(options: HttpAppOptions, mountRoutes: (app: Express) => void): Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('trust proxy', false);
  app.set('etag', false);

  // First, so the access line and everything after it run inside the request's span; absent when tracing is off.
  if (isTracing()) app.use(traceRequests());
  app.use(logRequests(options.logger));
  app.use(options.metrics.middleware);
  const { shutdown } = options;
  if (shutdown) {
    // While draining, each answer closes its connection: keep-alive clients (the gateway's agents) reconnect to a
    // replica that stays, rather than find the socket cut when the drain ends.
    app.use((_req, res, next) => {
      if (shutdown.isStopping()) res.set('connection', 'close');
      next();
    });
  }
  for (const middleware of options.early ?? []) app.use(middleware);

  const serviceOnly = requireServiceCredential(options.serviceCredential);
  // Before any route, so every internal endpoint is covered, including ones added later.
  app.use('/internal', serviceOnly);
  app.get('/health', (_req, res) => {
    res.json({ status: 'ok' });
  });
  const readinessGuard: RequestHandler[] = options.privateReadiness ? [serviceOnly] : [];
  app.get('/ready', ...readinessGuard, async (_req, res) => {
    const results = await Promise.all(
      (options.readiness ?? []).map(async ({ name, check }) => [
        name,
        await Promise.resolve(check()).catch(() => false),
      ]),
    );
    const checks = Object.fromEntries(results) as Record<string, boolean>;
    if (options.shutdown?.isStopping()) {
      res.status(503).json({ status: 'stopping', checks });
      return;
    }
    const ready = Object.values(checks).every(Boolean);
    res.status(ready ? 200 : 503).json({ status: ready ? 'ready' : 'not ready', checks });
  });
  app.get('/metrics', serviceOnly, options.metrics.handler);

  if (options.bodyParser !== 'none') {
    app.use(requireJsonBody);
    app.use(
      // body-parser's own default limit (100kb) unless the service names one.
      express.json({ limit: options.bodyParser?.limit, type: JSON_TYPES }),
    );
  }

  mountRoutes(app);

  app.use((req, _res, next) => {
    next(new AppError('RESOURCE_NOT_FOUND', `No route for ${req.method} ${requestPath(req)}`));
  });
  app.use((error: unknown, req: Request, res: Response, _next: NextFunction) => {
    answerError(error, req, res, options.renderError);
  });
  return app;
}

/** Anything thrown becomes a problem (logged when it is a 5xx), written as problem+json or by `renderError`. */
function answerError(
  error: unknown,
  req: Request,
  res: Response,
  renderError?: HttpAppOptions['renderError'],
): void {
  const { problem, headers } = toProblem(error, req);
  // A 5xx we chose to answer (a dependency down, revocations still loading) is news, not a failure of ours.
  if (error instanceof AppError && problem.status >= 500) req.log.warn({ code: error.code }, error.detail);
  else if (problem.status >= 500) req.log.error({ err: error }, 'request failed');
  if (res.headersSent) {
    res.end();
    return;
  }
  if (renderError) return renderError(problem, req, res.set(headers ?? {}));
  sendProblem(res, problem, headers);
}
