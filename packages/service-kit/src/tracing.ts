import {
  context,
  propagation,
  ProxyTracerProvider,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
  type Attributes,
  type Context,
  type Link,
  type Span,
} from '@opentelemetry/api';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BatchSpanProcessor, NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import { Type } from '@sinclair/typebox';

export { SpanKind, type Context, type Span };

/** W3C trace context as it travels in HTTP and AMQP headers and is stored with an outbox row. */
export type TraceCarrier = Record<string, string>;

export const TracingConfig = {
  OTEL_EXPORTER_OTLP_ENDPOINT: Type.Optional(
    Type.String({
      pattern: '^https?://',
      description:
        'Where traces are sent by OTLP over HTTP (`/v1/traces` is appended), e.g. a collector at ' +
        '`http://otel-collector:4318`. Unset: no tracing at all (no SDK, no spans, no exporter)',
    }),
  ),
};

export interface Tracing {
  /** Whether this call started the SDK (false: no endpoint, or another service of this process already did). */
  started: boolean;
  /** Exports what is buffered and stops. */
  stop(): Promise<void>;
}

const NOOP_TRACER_PROVIDER = new ProxyTracerProvider().getDelegate();

/** Whether an SDK is registered in this process; without one every span is the API's no-op. */
export function isTracing(): boolean {
  const provider = trace.getTracerProvider();
  const delegate = provider instanceof ProxyTracerProvider ? provider.getDelegate() : provider;
  return delegate !== NOOP_TRACER_PROVIDER;
}

/**
 * Starts the OpenTelemetry SDK for this process when OTEL_EXPORTER_OTLP_ENDPOINT is set: spans batched and sent
 * by OTLP/HTTP, the W3C propagator, and an AsyncLocalStorage context. Unset, nothing is started and the API's
 * no-op tracer stays in place, so the kit's seams add no work.
 */
export function startTracing(
  service: string,
  config: { OTEL_EXPORTER_OTLP_ENDPOINT?: string | undefined },
): Tracing {
  const endpoint = config.OTEL_EXPORTER_OTLP_ENDPOINT;
  // In one process (embedded mode), the first service's SDK serves the others.
  if (!endpoint || isTracing()) return { started: false, stop: () => Promise.resolve() };
  const provider = new NodeTracerProvider({
    resource: resourceFromAttributes({ 'service.name': service }),
    spanProcessors: [
      new BatchSpanProcessor(new OTLPTraceExporter({ url: `${endpoint.replace(/\/+$/, '')}/v1/traces` })),
    ],
  });
  provider.register();
  return { started: true, stop: () => provider.shutdown() };
}

/** The kit's tracer; which service a span belongs to is its resource's `service.name`. */
export const tracer = () => trace.getTracer('@payments/service-kit');

/** The active trace context as W3C headers, or null when there is none (tracing off, or outside any span). */
export function currentTraceCarrier(active: Context = context.active()): TraceCarrier | null {
  const carrier: TraceCarrier = {};
  propagation.inject(active, carrier);
  return carrier.traceparent ? carrier : null;
}

/** Adds the active trace context to outgoing headers (nothing when tracing is off). */
export function injectTraceContext(
  headers: Record<string, unknown>,
  active: Context = context.active(),
): void {
  propagation.inject(active, headers);
}

/** The context a carrier names (its `traceparent`), as the parent of the spans that continue it. */
export function contextFromCarrier(carrier: unknown, base: Context = ROOT_CONTEXT): Context {
  if (!carrier || typeof carrier !== 'object') return base;
  return propagation.extract(base, carrier);
}

export interface SpanOptions {
  kind?: SpanKind;
  attributes?: Attributes;
  /** The parent; the active context by default. */
  parent?: Context;
  links?: Link[];
}

/**
 * Runs `work` inside a new span that ends when it settles, recording a thrown error. With tracing off, the span is
 * the API's non-recording one and `work` runs as it would without it.
 */
export async function inSpan<T>(
  name: string,
  options: SpanOptions,
  work: (span: Span) => Promise<T>,
): Promise<T> {
  const parent = options.parent ?? context.active();
  const span = tracer().startSpan(
    name,
    { kind: options.kind, attributes: options.attributes, links: options.links },
    parent,
  );
  try {
    return await context.with(trace.setSpan(parent, span), () => work(span));
  } catch (error) {
    span.recordException(error as Error);
    span.setStatus({ code: SpanStatusCode.ERROR, message: (error as Error).message });
    throw error;
  } finally {
    span.end();
  }
}

/** A link to the active span (none outside a span): a trace continued from elsewhere still points at its cause. */
export function linksToActiveSpan(): Link[] {
  const span = trace.getActiveSpan();
  return span ? [{ context: span.spanContext() }] : [];
}

/** `trace_id` and `span_id` of the active span, for log lines; empty outside a span or with tracing off. */
export function traceLogFields(): { trace_id?: string; span_id?: string } {
  const span = trace.getActiveSpan();
  if (!span) return {};
  const { traceId, spanId } = span.spanContext();
  return { trace_id: traceId, span_id: spanId };
}
