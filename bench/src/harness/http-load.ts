import autocannon from 'autocannon';
import { createLatencySamples, type LatencySamples, type LatencySummary } from './load.js';

export interface HttpLoadOptions {
  url: string;
  method?: 'GET' | 'POST';
  headers?: Record<string, string>;
  body?: string;
  connections: number;
  seconds: number;
  /** Requests per second across all connections; unset runs closed-loop, as fast as answers come. */
  overallRate?: number;
  /** Where to add the latencies (to merge several runs); a fresh set by default. */
  samples?: LatencySamples;
}

export interface HttpLoadResult {
  requestsPerSecond: number;
  requests: number;
  seconds: number;
  /** Answers other than 2xx, plus connection errors and timeouts. */
  errors: number;
  latency: LatencySummary | null;
}

/** One autocannon run over keep-alive connections; latency percentiles from every response it saw. */
export async function runHttpLoad(options: HttpLoadOptions): Promise<HttpLoadResult> {
  const samples = options.samples ?? createLatencySamples();
  const instance = autocannon({
    url: options.url,
    method: options.method ?? 'GET',
    headers: options.headers,
    body: options.body,
    connections: options.connections,
    duration: options.seconds,
    overallRate: options.overallRate,
    timeout: 30,
  });
  // The instance passes the client first; @types/autocannon leaves it out.
  (instance as unknown as NodeJS.EventEmitter).on(
    'response',
    (_client: unknown, _status: number, _bytes: number, responseTime: number) => samples.add(responseTime),
  );
  const result = await instance;
  const answered = result.requests.total;
  const seconds = result.duration || options.seconds;
  return {
    requestsPerSecond: answered / seconds,
    requests: answered,
    seconds,
    errors: result.non2xx + result.errors + result.timeouts,
    latency: samples.summary(),
  };
}
