import type { Metrics } from '@payments/service-kit';

export interface DeliveryMetrics {
  attempted(result: 'success' | 'failure'): void;
  succeeded(): void;
  failed(): void;
}

/**
 * `/metrics`: attempts by result, deliveries that succeeded and that failed for good, and the queue depth
 * (pending deliveries, read at each scrape).
 */
export function createDeliveryMetrics(
  metrics: Metrics,
  countPending: () => Promise<number>,
): DeliveryMetrics {
  const attempts = metrics.counter(
    'webhook_delivery_attempts_total',
    'Outgoing webhook delivery attempts, by result (2xx is success)',
    ['result'],
  );
  const succeeded = metrics.counter(
    'webhook_deliveries_succeeded_total',
    'Outgoing webhook deliveries delivered',
  );
  const failed = metrics.counter(
    'webhook_deliveries_failed_total',
    'Outgoing webhook deliveries given up on after their retry window',
  );
  metrics.gauge(
    'webhook_delivery_queue_depth',
    'Outgoing webhook deliveries not yet delivered nor given up on',
    countPending,
  );
  return {
    attempted: (result) => attempts.inc({ result }),
    succeeded: () => succeeded.inc(),
    failed: () => failed.inc(),
  };
}
