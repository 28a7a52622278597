import { Agent, type ServerResponse } from 'node:http';
import type { Request, RequestHandler, Response } from 'express';
import { createProxyMiddleware } from 'http-proxy-middleware';
import { buildProblem } from '@payments/contracts';
import { requestPath, type Logger } from '@payments/service-kit';
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

// Hop-by-hop request headers that must not travel past the gateway (RFC 9110 §7.6.1).
const HOP_BY_HOP = ['proxy-connection', 'keep-alive', 'te', 'trailer', 'upgrade', 'proxy-authorization'];
export const RETRY_AFTER_SECONDS = 1;

/**
 * Streams requests to one service over keep-alive connections (bodies are never parsed or buffered here:
 * webhook signatures cover the raw bytes). A service that is down or slower than `timeoutMs` gives a 503.
 */
export function createUpstreamProxy(
  upstream: Upstream,
  options: {
    timeoutMs: number;
    logger: Logger;
    /** Sees each upstream answer before it is passed on to the client. */
    onResponse?: (req: Request, status: number) => void;
  },
): UpstreamProxy {
  // Without an agent the proxy sends `Connection: close` upstream and pays a TCP handshake per request.
  const agent = new Agent({ keepAlive: true, maxSockets: 256 });
  const proxy = createProxyMiddleware<Request, Response>({
    target: upstream.url,
    agent,
    proxyTimeout: options.timeoutMs,
    xfwd: true,
    on: {
      proxyRes: (proxyRes, req) => {
        options.onResponse?.(req, proxyRes.statusCode ?? 0);
        const prefix = req.get('x-forwarded-prefix');
        const location = proxyRes.headers.location;
        if (prefix && location?.startsWith('/') && !location.startsWith('//')) {
          proxyRes.headers.location = `${prefix}${location}`;
        }
      },
      error: (error, req, res) => {
        if (!isResponse(res)) return void res.destroy();
        options.logger.warn({ err: error, upstream: upstream.name, url: req.url }, 'upstream unavailable');
        if (res.headersSent) return void res.destroy();
        const problem = buildProblem(
          'SERVICE_UNAVAILABLE',
          'A service this request needs is unavailable; try again shortly',
          requestPath(req),
        );
        renderError(problem, req, res, { 'Retry-After': String(RETRY_AFTER_SECONDS) });
      },
    },
  });
  return {
    handler: (req, res, next) => {
      for (const header of HOP_BY_HOP) delete req.headers[header];
      return proxy(req, res, next);
    },
    close: () => agent.destroy(),
  };
}

function isResponse(value: unknown): value is Response {
  return typeof (value as ServerResponse).writeHead === 'function';
}
