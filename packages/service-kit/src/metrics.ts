import type { Request, RequestHandler, Response } from 'express';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';

export interface Metrics {
  registry: Registry;
  middleware: RequestHandler;
  handler: RequestHandler;
  counter(name: string, help: string, labelNames?: string[]): Counter<string>;
  /** A gauge read at each scrape; when reading fails it keeps its last value (and the scrape still answers). */
  gauge(name: string, help: string, read: () => Promise<number>): Gauge<string>;
  /**
   * A gauge with one label, read at each scrape: a value for each of `values` (0 where `read` answers none). When
   * reading fails it keeps its last values.
   */
  labelledGauge(
    name: string,
    help: string,
    label: string,
    values: readonly string[],
    read: () => Promise<ReadonlyMap<string, number>>,
  ): Gauge<string>;
}

/**
 * The route a request matched as a template (`/account/:id`): express's route, or `res.locals.routeTemplate`
 * where a router of its own decided (the gateway's proxied paths).
 */
export function routeTemplateOf(req: Request, res: Response): string | undefined {
  const given: unknown = res.locals.routeTemplate;
  if (typeof given === 'string') return given;
  const path = (req.route as { path?: string } | undefined)?.path;
  return path ? `${req.baseUrl}${path}` : undefined;
}

/** A registry per service (several services share one process in embedded mode), with HTTP metrics. */
export function createMetrics(service: string): Metrics {
  const registry = new Registry();
  registry.setDefaultLabels({ service });
  // The event-loop lag histogram is sampled once a second (prom-client's default is every 10 ms): each sample is
  // a timer that wakes an idle process, and on the bench machine a wake-up costs 25–300 µs of CPU: at 10 or 100
  // samples a second they were most of an idle gateway's cost (bench/README.md, idle). A stall shows in the
  // histogram when a sample falls into it; `nodejs_eventloop_lag_seconds` is measured at every scrape anyway.
  collectDefaultMetrics({ register: registry, eventLoopMonitoringPrecision: 1000 });
  const duration = new Histogram({
    name: 'http_request_duration_seconds',
    help: 'HTTP request latency by route and status',
    labelNames: ['method', 'route', 'status'],
    buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
    registers: [registry],
  });
  return {
    registry,
    middleware: (req, res, next) => {
      const end = duration.startTimer();
      res.on('finish', () => {
        end({ method: req.method, route: routeTemplateOf(req, res) ?? 'unmatched', status: res.statusCode });
      });
      next();
    },
    handler: async (_req, res) => {
      res.type(registry.contentType).send(await registry.metrics());
    },
    counter: (name, help, labelNames = []) =>
      (registry.getSingleMetric(name) as Counter<string> | undefined) ??
      new Counter({ name, help, labelNames, registers: [registry] }),
    gauge: (name, help, read) =>
      (registry.getSingleMetric(name) as Gauge<string> | undefined) ??
      new Gauge({
        name,
        help,
        registers: [registry],
        async collect() {
          const value = await read().catch(() => null);
          if (value !== null) this.set(value);
        },
      }),
    labelledGauge: (name, help, label, values, read) =>
      (registry.getSingleMetric(name) as Gauge<string> | undefined) ??
      new Gauge({
        name,
        help,
        labelNames: [label],
        registers: [registry],
        async collect() {
          const counts = await read().catch(() => null);
          if (counts === null) return;
          for (const value of values) this.set({ [label]: value }, counts.get(value) ?? 0);
        },
      }),
  };
}
