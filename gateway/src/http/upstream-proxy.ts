import { Agent, type ClientRequest } from 'node:http';
import type { Socket } from 'node:net';
import type { Request, RequestHandler, Response } from 'express';
import { createProxyMiddleware } from 'http-proxy-middleware';
import { buildProblem } from '@payments/contracts';
import { injectTraceContext, requestPath, type Logger } from '@payments/service-kit';
import type { UpstreamName } from '../domain/route-table.js';
import { renderError } from './error-rendering.js';

export interface Upstream {
  name: UpstreamName;
  url: string;
}

export interface UpstreamProxy {
  handler: RequestHandler;
  close(): void;
}

export interface UpstreamProxyOptions {
  /** How long a service may stay silent (connecting, or mid-answer) before the request gets a 503. */
  timeoutMs: number;
  /** Connections kept to the service at most; requests beyond them wait for one. */
  maxSockets: number;
  /** A chunked body (no Content-Length to check up front) is cut off, and answered 413, past this many bytes. */
  maxBodyBytes: number;
  logger: Logger;
  /** The client's address as derived under TRUSTED_PROXIES: what X-Forwarded-For tells the service. */
  clientAddress: (req: Request) => string | undefined;
  /** Sees each upstream answer before it is passed on to the client. */
  onResponse?: (req: Request, status: number) => void;
}

// Hop-by-hop headers concern one connection and must not travel past the gateway (RFC 9110 §7.6.1). Node answered
// the client's Expect itself; Connection and Transfer-Encoding are the proxy's (see proxyReq below).
const REQUEST_HEADERS_NOT_FORWARDED = [
  'proxy-connection',
  'keep-alive',
  'te',
  'trailer',
  'upgrade',
  'proxy-authorization',
  'expect',
];
// The service's Connection concerns the pool's connection: the proxy sets the client's own instead, and Node
// frames the answer.
const RESPONSE_HEADERS_NOT_RELAYED = [
  'connection',
  'keep-alive',
  'proxy-connection',
  'trailer',
  'upgrade',
  'transfer-encoding',
];
const RETRY_AFTER_SECONDS = 1;

class BodyTooLargeError extends Error {
  override name = 'BodyTooLargeError';
}

/**
 * Forwards requests to one service with http-proxy-middleware, over a bounded pool of keep-alive connections.
 * Bodies are streamed, never parsed or buffered (webhook signatures cover the raw bytes). A service that is down
 * or silent for longer than `timeoutMs` gives a 503 problem.
 */
export function createUpstreamProxy(upstream: Upstream, options: UpstreamProxyOptions): UpstreamProxy {
  // Without an agent the proxy sends `Connection: close` and pays a TCP handshake per request.
  const agent = new Agent({ keepAlive: true, maxSockets: options.maxSockets });
  const proxy = createProxyMiddleware<Request, Response>({
    // A URL rather than a string: the proxy would parse a string again for every request.
    target: new URL(upstream.url),
    agent,
    proxyTimeout: options.timeoutMs,
    xfwd: true,
    on: {
      proxyReq: (proxyReq, req) => {
        // The client's Connection concerns its own connection; the pool keeps this one open, except after a
        // chunked body, which the proxy closes (no room for request smuggling).
        if (req.headers['transfer-encoding'] === undefined) proxyReq.setHeader('connection', 'keep-alive');
        else limitBody(req, proxyReq, options.maxBodyBytes);
      },
      proxyRes: (proxyRes, req) => {
        options.onResponse?.(req, proxyRes.statusCode ?? 0);
        for (const name of RESPONSE_HEADERS_NOT_RELAYED) delete proxyRes.headers[name];
        const prefix = req.get('x-forwarded-prefix');
        const location = proxyRes.headers.location;
        // Relative redirects keep the version prefix the client used.
        if (prefix && location?.startsWith('/') && !location.startsWith('//')) {
          proxyRes.headers.location = `${prefix}${location}`;
        }
      },
      error: (error, req, res) => answerFailure(error, req, res, options.logger, upstream.name),
    },
  });
  // Set on the request itself, before the proxy copies its headers, so they never depend on a proxy event.
  const handler: RequestHandler = (req, res, next) => {
    for (const name of REQUEST_HEADERS_NOT_FORWARDED) delete req.headers[name];
    // Replaced, not appended: the client address as derived under TRUSTED_PROXIES, the one value services
    // believe from the gateway; whatever the client wrote there is not passed on.
    req.headers['x-forwarded-for'] = options.clientAddress(req) ?? '';
    // The verified caller, for services' logs; a client cannot supply it. Services still verify the token.
    delete req.headers['x-user-id'];
    if (req.auth) req.headers['x-user-id'] = req.auth.userId;
    // The service continues the gateway's span, not the client's (nothing when tracing is off).
    injectTraceContext(req.headers);
    return proxy(req, res, next);
  };
  return { handler, close: () => agent.destroy() };
}

/**
 * Counts a chunked body as it streams to the service: past `maxBytes` the request to the service is destroyed
 * mid-body (the service never sees a complete request) and the proxy's error answers the client 413.
 */
function limitBody(req: Request, proxyReq: ClientRequest, maxBytes: number): void {
  let seen = 0;
  const count = (chunk: Buffer) => {
    seen += chunk.length;
    if (seen <= maxBytes) return;
    req.off('data', count);
    req.unpipe(proxyReq);
    proxyReq.destroy(new BodyTooLargeError(`The request body is larger than ${maxBytes} bytes`));
  };
  req.on('data', count);
}

function answerFailure(
  error: Error,
  req: Request,
  res: Response | Socket,
  logger: Logger,
  upstream: UpstreamName,
): void {
  if (!('writeHead' in res)) return void res.destroy();
  // The client went away, or was answered: there is nobody to answer now.
  if (res.destroyed || res.writableEnded) return;
  if (res.headersSent) return void res.destroy();
  if (error instanceof BodyTooLargeError) {
    // The rest of the body is never read, so the connection cannot carry another request.
    res.setHeader('connection', 'close');
    return renderError(buildProblem('PAYLOAD_TOO_LARGE', error.message, requestPath(req)), req, res);
  }
  logger.warn({ err: error, upstream, url: req.url }, 'upstream unavailable');
  const problem = buildProblem(
    'SERVICE_UNAVAILABLE',
    'A service this request needs is unavailable; try again shortly',
    requestPath(req),
  );
  renderError(problem, req, res, { 'Retry-After': String(RETRY_AFTER_SECONDS) });
}
