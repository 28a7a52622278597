// pino-http declares `req.log` and `req.id`; packages using the compiled types need its declarations too.
/// <reference types="pino-http" preserve="true" />
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Request, RequestHandler, Response } from 'express';
import { pinoHttp } from 'pino-http';
import type { Logger } from '../logger.js';
import { routeTemplateOf } from '../metrics.js';

const REQUEST_ID = /^[\w.:-]{1,128}$/;
/** Probes are polled constantly: their access lines would drown the rest, so none is logged (`/ready` answers why it fails). */
const PROBES = new Set(['/health', '/ready', '/metrics']);

/**
 * The request's id: the caller's `X-Request-Id` when it is a plausible one, else a new UUID; set as the header
 * services forward (the gateway's proxy passes it on) and echoed on the response.
 */
function requestIdOf(req: IncomingMessage, res: ServerResponse): string {
  const given = req.headers['x-request-id'];
  const id = typeof given === 'string' && REQUEST_ID.test(given) ? given : randomUUID();
  req.headers['x-request-id'] = id;
  res.setHeader('X-Request-Id', id);
  return id;
}

/** The access line's route template and caller, beside pino-http's method, url, status and time. */
function accessLogFields(req: IncomingMessage, res: ServerResponse) {
  return {
    route: routeTemplateOf(req as Request, res as Response) ?? 'unmatched',
    user_id: (req as Request).auth?.userId ?? null,
  };
}

/**
 * pino-http: the request id (`req.id`), `req.log` carrying it, and one access line per request, level error for a
 * 5xx (or a response that failed), info otherwise.
 */
export function logRequests(logger: Logger): RequestHandler {
  return pinoHttp({
    logger,
    genReqId: requestIdOf,
    customProps: (req) => ({ request_id: req.id }),
    customLogLevel: (_req, res, error) => (error || res.statusCode >= 500 ? 'error' : 'info'),
    customSuccessObject: (req, res, fields: object) => ({ ...fields, ...accessLogFields(req, res) }),
    customErrorObject: (req, res, _error, fields: object) => ({ ...fields, ...accessLogFields(req, res) }),
    autoLogging: { ignore: (req) => PROBES.has(req.url ?? '') },
    // Taken when the request arrives: the gateway's versioning rewrites the url later.
    wrapSerializers: false,
    serializers: {
      req: (req: Request) => ({ method: req.method, url: req.originalUrl }),
      res: (res: ServerResponse) => ({ statusCode: res.statusCode }),
    },
  }) as RequestHandler;
}
