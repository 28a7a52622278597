import type { Consumer, EventBus, Metrics } from '@payments/service-kit';

/**
 * The sandbox's queue is emptied, never answered: the ledger asks the sandbox for payments and payouts through its
 * Stripe API, as it asks Stripe, so a WithdrawalRequested routed here is for nobody. With nobody consuming it the
 * queue would grow for as long as the system runs. Each request is acknowledged and counted; nothing is sent.
 */
export function startSandboxDrain(bus: EventBus, metrics: Metrics): Promise<Consumer> {
  const discarded = metrics.counter(
    'sandbox_requests_discarded_total',
    'Money requests the sandbox took off its queue without answering',
    ['type'],
  );
  return bus.consume(
    'provider-sandbox',
    { WithdrawalRequested: async () => discarded.inc({ type: 'WithdrawalRequested' }) },
    { prefetch: 200 },
  );
}
