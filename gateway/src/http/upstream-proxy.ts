import type { IncomingHttpHeaders } from 'node:http';
import { Transform } from 'node:stream';
import type { Request, Response } from 'express';
import { Pool, type Dispatcher } from 'undici';
import { buildProblem } from '@payments/contracts';
import { requestPath, type Logger } from '@payments/service-kit';
import type { UpstreamName } from '../domain/route-table.js';
import { renderError } from './error-rendering.js';

export interface Upstream {
  name: UpstreamName;
  url: string;
}

export interface UpstreamProxy {
  handler: (req: Request, res: Response) => void;
  close(): Promise<void>;
}

export interface UpstreamProxyOptions {
  timeoutMs: number;
  /** A chunked body (no Content-Length to check up front) is cut off, and answered 413, past this many bytes. */
  maxBodyBytes: number;
  logger: Logger;
  /** The client's address as derived under TRUSTED_PROXIES: what X-Forwarded-For tells the service. */
  clientAddress: (req: Request) => string | undefined;
  /** Sees each upstream answer before it is passed on to the client. */
  onResponse?: (req: Request, status: number) => void;
}

// Hop-by-hop headers concern one connection and must not travel past the gateway (RFC 9110 §7.6.1). The client's
// Transfer-Encoding and Expect were dealt with by this server; the connection to the service has its own.
const REQUEST_HEADERS_NOT_FORWARDED = new Set([
  'connection',
  'proxy-connection',
  'keep-alive',
  'te',
  'trailer',
  'upgrade',
  'proxy-authorization',
  'transfer-encoding',
  'expect',
]);
const RESPONSE_HEADERS_NOT_RELAYED = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'trailer',
  'transfer-encoding',
  'upgrade',
]);
export const RETRY_AFTER_SECONDS = 1;

class BodyTooLargeError extends Error {
  override name = 'BodyTooLargeError';
}

/**
 * Streams requests to one service over a pool of keep-alive connections (bodies are never parsed or buffered here:
 * webhook signatures cover the raw bytes). A service that is down or slower than `timeoutMs` gives a 503.
 * undici's dispatcher rather than a proxy library or `http.request`: on the read path the gateway's own work is
 * what its throughput is made of, and this costs the least of the three.
 */
export function createUpstreamProxy(upstream: Upstream, options: UpstreamProxyOptions): UpstreamProxy {
  const target = new URL(upstream.url);
  const basePath = target.pathname.replace(/\/$/, '');
  const pool = new Pool(target.origin, { connections: 256 });
  const relayOptions = { ...options, upstream: upstream.name };

  const handler = (req: Request, res: Response) => {
    const chunked = req.headers['transfer-encoding'] !== undefined;
    pool.dispatch(
      {
        method: req.method as Dispatcher.HttpMethod,
        path: basePath + req.url,
        headers: forwardedHeaders(req, options.clientAddress(req)),
        // A Content-Length body was checked before it got here, and Node holds the client to that length.
        body: chunked
          ? limitedBody(req, options.maxBodyBytes)
          : req.headers['content-length'] !== undefined
            ? req
            : null,
        // A chunked request body never shares a connection with the next request (no room for request smuggling).
        reset: chunked,
        headersTimeout: options.timeoutMs,
        bodyTimeout: options.timeoutMs,
      },
      relayAnswer(req, res, relayOptions),
    );
  };

  return { handler, close: () => pool.destroy() };
}

/**
 * The client's chunked body, counted as it streams: past `maxBytes` it fails, which aborts the upstream request
 * mid-body (the service never sees a complete request) and lets the client be answered 413. A stream of its own,
 * so aborting it leaves the client's connection open for that answer.
 */
function limitedBody(req: Request, maxBytes: number): Transform {
  let seen = 0;
  const limited = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      seen += chunk.length;
      if (seen > maxBytes)
        return done(new BodyTooLargeError(`The request body is larger than ${maxBytes} bytes`));
      done(null, chunk);
    },
  });
  // undici reports the failure; this keeps one that comes after the upstream answered from being unhandled.
  limited.on('error', () => undefined);
  req.once('error', (error) => limited.destroy(error));
  req.pipe(limited);
  return limited;
}

function forwardedHeaders(req: Request, clientAddress: string | undefined): IncomingHttpHeaders {
  const headers: IncomingHttpHeaders = {};
  for (const name in req.headers) {
    if (!REQUEST_HEADERS_NOT_FORWARDED.has(name)) headers[name] = req.headers[name];
  }
  // Replaced, not appended: the client address as derived under TRUSTED_PROXIES, the one value services believe
  // from the gateway; whatever the client wrote there is not passed on.
  headers['x-forwarded-for'] = clientAddress ?? '';
  appendHeader(headers, 'x-forwarded-port', /:(\d+)$/.exec(req.headers.host ?? '')?.[1] ?? '80');
  appendHeader(headers, 'x-forwarded-proto', 'http');
  headers['x-forwarded-host'] ||= req.headers.host ?? '';
  return headers;
}

function appendHeader(headers: IncomingHttpHeaders, name: string, value: string): void {
  const given = headers[name];
  headers[name] = given === undefined ? value : `${String(given)},${value}`;
}

/** Passes the service's answer on as it streams in; a service that fails before answering gives a 503. */
function relayAnswer(
  req: Request,
  res: Response,
  options: UpstreamProxyOptions & { upstream: UpstreamName },
): Dispatcher.DispatchHandler {
  return {
    onRequestStart(controller) {
      res.once('close', () => {
        if (!res.writableFinished) controller.abort(new Error('the client went away'));
      });
    },
    onResponseStart(_controller, status, headers, statusMessage) {
      // An informational answer (103 Early Hints): the final one follows.
      if (status < 200) return;
      options.onResponse?.(req, status);
      for (const name in headers) {
        const value = headers[name];
        if (value !== undefined && !RESPONSE_HEADERS_NOT_RELAYED.has(name)) res.setHeader(name, value);
      }
      const prefix = req.get('x-forwarded-prefix');
      const location = headers.location;
      // Relative redirects keep the version prefix the client used.
      if (prefix && typeof location === 'string' && location.startsWith('/') && !location.startsWith('//')) {
        res.setHeader('location', `${prefix}${location}`);
      }
      res.statusCode = status;
      if (statusMessage) res.statusMessage = statusMessage;
    },
    onResponseData(controller, chunk) {
      if (res.write(chunk)) return;
      controller.pause();
      res.once('drain', () => controller.resume());
    },
    onResponseEnd() {
      res.end();
    },
    onResponseError(_controller, error) {
      // The client went away, or was answered: there is nobody to answer now.
      if (res.destroyed || res.writableEnded) return;
      if (error instanceof BodyTooLargeError) {
        if (res.headersSent) return void res.destroy();
        // The rest of the body is never read, so the connection cannot carry another request.
        res.setHeader('connection', 'close');
        return renderError(buildProblem('PAYLOAD_TOO_LARGE', error.message, requestPath(req)), req, res);
      }
      options.logger.warn({ err: error, upstream: options.upstream, url: req.url }, 'upstream unavailable');
      if (res.headersSent) return void res.destroy();
      const problem = buildProblem(
        'SERVICE_UNAVAILABLE',
        'A service this request needs is unavailable; try again shortly',
        requestPath(req),
      );
      renderError(problem, req, res, { 'Retry-After': String(RETRY_AFTER_SECONDS) });
    },
  };
}
