import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Express, Request, RequestHandler, Response } from 'express';
import {
  assignRequestId,
  logRequests,
  toProblem,
  AppError,
  type FrontHandler,
  type Metrics,
} from '@payments/service-kit';
import {
  ENDPOINTS,
  handleWebhookCall,
  WEBHOOK_BODY_LIMIT_BYTES,
  webhookErrorBody,
  type WebhookEndpoint,
  type WebhookRoutesDeps,
} from './webhook-routes.js';

/** The kit's request-id rule (http/app.ts). */

const noop = () => undefined;

/**
 * The webhook calls providers make, served on node's http handler instead of Express: a webhook is the hottest
 * request of the deposit flow, and Express's router, request and response decoration cost as much as the
 * signature check and the publish together. Served here: a `POST` of a webhook path (no query-string variants,
 * no trailing slash) with a `Content-Length` within the body limit and no content encoding; everything else,
 * including every refusal of those conditions (413, 415, 404, other methods), is left to the Express app, which
 * answers as it always did. What a call sees is the same either way: the same request id (`X-Request-Id`), access
 * log, `http_request_duration_seconds` observation, signature check, `{ error }` bodies and status codes.
 */
export function leanWebhookHandler(app: Express, metrics: Metrics, deps: WebhookRoutesDeps): FrontHandler {
  const endpoints = new Map<string, WebhookEndpoint>();
  for (const endpoint of ENDPOINTS) {
    // Disabled, the unsigned endpoint does not exist; Express answers its 404.
    if (endpoint.signatureHeader === null && !deps.settings.unsignedEnabled) continue;
    endpoints.set(endpoint.path, endpoint);
  }
  // The same access log the app writes (level, fields and the lazily made `req.log`).
  const logAccess: RequestHandler = logRequests(app, deps.logger);
  const observe = metrics.middleware;

  const answerError = (req: IncomingMessage, res: ServerResponse, error: unknown) => {
    const { problem, headers } = toProblem(error, req as Request);
    // As the app's error handler logs them.
    if (error instanceof AppError && problem.status >= 500) req.log.warn({ code: error.code }, error.detail);
    else if (problem.status >= 500) req.log.error({ err: error }, 'request failed');
    if (res.headersSent) {
      res.end();
      return;
    }
    const body = JSON.stringify(webhookErrorBody(problem));
    for (const [name, value] of Object.entries(headers ?? {})) res.setHeader(name, value);
    res.writeHead(problem.status, {
      'Content-Type': 'application/json; charset=utf-8',
      'Content-Length': Buffer.byteLength(body),
    });
    res.end(body);
  };

  const handle = (req: IncomingMessage, res: ServerResponse, endpoint: WebhookEndpoint, raw: Buffer) => {
    handleWebhookCall(endpoint, deps, {
      raw,
      header: (name) => {
        const value = req.headers[name.toLowerCase()];
        return Array.isArray(value) ? value[0] : value;
      },
      requestId: req.id,
      log: () => req.log,
    }).then(
      () => {
        res.statusCode = 200;
        res.end();
      },
      (error: unknown) => answerError(req, res, error),
    );
  };

  return (req, res) => {
    if (req.method !== 'POST') return false;
    const url = req.url ?? '';
    const endpoint = endpoints.get(url);
    if (!endpoint) return false;
    const { headers } = req;
    const length = Number(headers['content-length']);
    const encoding = headers['content-encoding'];
    if (
      headers['content-length'] === undefined ||
      !(length <= WEBHOOK_BODY_LIMIT_BYTES) ||
      headers['transfer-encoding'] !== undefined ||
      (encoding !== undefined && encoding.toLowerCase() !== 'identity')
    ) {
      return false;
    }

    // What the app's first middlewares do: the request id, the access log, the latency metric.
    assignRequestId(req, res);
    const request = req as Request;
    const response = res as Response;
    request.originalUrl = url;
    response.locals = { routeTemplate: endpoint.path };
    logAccess(request, response, noop);
    observe(request, response, noop);

    // The parser delivers at most Content-Length bytes, which is within the limit.
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      chunks.push(chunk);
      size += chunk.length;
    });
    req.on('end', () => {
      const raw = chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks, size);
      handle(req, res, endpoint, raw);
    });
    // A caller that went away gets no answer; the error only must not go unhandled.
    req.on('error', noop);
    return true;
  };
}
