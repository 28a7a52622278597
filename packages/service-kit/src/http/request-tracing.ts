import type { Request, RequestHandler, Response } from 'express';
import { context, propagation, SpanStatusCode, trace } from '@opentelemetry/api';
import { routeTemplateOf } from '../metrics.js';
import { SpanKind, tracer, type Span } from '../tracing.js';

/**
 * One SERVER span per request, continuing the caller's `traceparent` (the gateway's, another service's), named
 * by its route template once answered. The request and response emitters are bound to the span's context:
 * body parsing resumes in a stream callback that would otherwise run outside it.
 */
export function traceRequests(): RequestHandler {
  return (req, res, next) => {
    const parent = propagation.extract(context.active(), req.headers);
    const span = tracer().startSpan(
      req.method,
      {
        kind: SpanKind.SERVER,
        attributes: { 'http.request.method': req.method, 'url.path': req.path },
      },
      parent,
    );
    const active = trace.setSpan(parent, span);
    context.bind(active, req);
    context.bind(active, res);
    res.once('close', () => endRequestSpan(req, res, span));
    context.with(active, next);
  };
}

function endRequestSpan(req: Request, res: Response, span: Span) {
  const route = routeTemplateOf(req, res);
  if (route) span.updateName(`${req.method} ${route}`);
  span.setAttributes({
    'http.response.status_code': res.statusCode,
    ...(route ? { 'http.route': route } : {}),
  });
  if (res.statusCode >= 500 || !res.writableFinished) span.setStatus({ code: SpanStatusCode.ERROR });
  span.end();
}
