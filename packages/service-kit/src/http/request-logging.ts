import type { Express, Request, RequestHandler, Response } from 'express';
import type { Logger } from '../logger.js';
import { routeTemplateOf } from '../metrics.js';

declare module 'http' {
  interface IncomingMessage {
    /** The request id (X-Request-Id), on every line logged for the request. */
    id: string;
    /** Logs with the request's id, method and url; made on first use. */
    log: Logger;
  }
}

/** Probes are polled constantly; their access lines would drown the rest. */
const UNLOGGED_PATHS = new Set(['/health', '/ready', '/metrics']);
const REQUEST_LINE = Symbol('request line');

interface RequestLine {
  method: string;
  url: string;
}

type LoggedRequest = Request & { [REQUEST_LINE]: RequestLine };

/**
 * `req.log` and one access line per request, level error for a 5xx (or a response that failed), info otherwise.
 * A service logs at warn under load, so nothing per request is built for lines that would be dropped: `req.log`
 * is a child logger made only when something logs through it, and a 2xx–4xx access line below info costs nothing.
 * `req.id` must be set before this middleware runs.
 */
export function logRequests(app: Express, logger: Logger): RequestHandler {
  // On this app's request prototype, so requests that log nothing never make a child logger.
  Object.defineProperty(app.request, 'log', {
    configurable: true,
    get(this: LoggedRequest): Logger {
      return keepLog(this, logger.child({ req: this[REQUEST_LINE], request_id: this.id }));
    },
    set(this: LoggedRequest, log: Logger) {
      keepLog(this, log);
    },
  });
  return (req, res, next) => {
    // Taken now: routers and the gateway's versioning rewrite the url later.
    (req as LoggedRequest)[REQUEST_LINE] = { method: req.method, url: req.originalUrl };
    logAccessWhenDone(logger, req as LoggedRequest, res, UNLOGGED_PATHS.has(req.url));
    next();
  };
}

function keepLog(req: Request, log: Logger): Logger {
  Object.defineProperty(req, 'log', { value: log, configurable: true, writable: true });
  return log;
}

function logAccessWhenDone(logger: Logger, req: LoggedRequest, res: Response, probe: boolean): void {
  const startedAt = Date.now();
  let logged = false;
  const done = (error?: Error) => {
    if (logged) return;
    logged = true;
    const failure =
      error ?? (res.statusCode >= 500 ? new Error(`failed with status code ${res.statusCode}`) : undefined);
    if (!failure && !logger.isLevelEnabled('info')) return;
    const fields = {
      req: req[REQUEST_LINE],
      request_id: req.id,
      res: { statusCode: res.statusCode },
      responseTime: Date.now() - startedAt,
      route: routeTemplateOf(req, res) ?? 'unmatched',
      user_id: req.auth?.userId ?? null,
    };
    if (failure) logger.error({ ...fields, err: failure }, 'request errored');
    else logger.info(fields, 'request completed');
  };
  // Also keeps an error on the response from becoming an uncaught exception; probes are logged only then.
  res.once('error', done);
  if (probe) return;
  const settle = () => done();
  res.once('finish', settle);
  res.once('close', settle);
}
