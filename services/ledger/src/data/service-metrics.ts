import { serviceAuthorization } from '@payments/service-kit';
import { samplesOf } from '../domain/overview.js';
import type { ServiceMetricsReader } from '../use-cases/overview.js';

/** Reads another service's `/metrics` with the deployment's service token (docs/adr/0037), within `timeoutMs`. */
export function createServiceMetricsReader(options: {
  urls: Record<'identity' | 'webhook-delivery', string>;
  serviceToken: string;
  timeoutMs: number;
}): ServiceMetricsReader {
  const credential = serviceAuthorization(options.serviceToken);
  return async (service) => {
    const response = await fetch(new URL('/metrics', options.urls[service]), {
      headers: credential,
      signal: AbortSignal.timeout(options.timeoutMs),
    });
    if (!response.ok) throw new Error(`${service}'s /metrics answered ${response.status}`);
    return samplesOf(await response.text());
  };
}
