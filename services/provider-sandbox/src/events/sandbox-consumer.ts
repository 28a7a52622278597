import type { EventEnvelope } from '@payments/contracts';
import type { Consumer, DeliveryContext, EventBus, Metrics } from '@payments/service-kit';
import { buildPayoutEvent } from '../domain/provider-event.js';
import type { ProviderWebhookClient } from '../http/provider-webhook-client.js';

export interface SandboxConsumerOptions {
  bus: EventBus;
  client: ProviderWebhookClient;
  metrics: Metrics;
  delayMs: number;
  duplicateDelivery: boolean;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Plays the payment provider for payouts: each requested withdrawal is answered, after a delay, with a signed
 * payout event on /webhook/provider. The request stays unacknowledged until the webhook took it. (Deposits are
 * asked of the sandbox through its Stripe API, by the ledger.)
 */
export function startSandboxConsumer(options: SandboxConsumerOptions): Promise<Consumer> {
  const { bus, client, delayMs, duplicateDelivery } = options;
  const sent = options.metrics.counter(
    'sandbox_provider_events_sent_total',
    'Provider events the sandbox delivered to the webhook',
    ['type'],
  );

  const answer = async (request: EventEnvelope<'WithdrawalRequested'>, { logger }: DeliveryContext) => {
    await sleep(delayMs);
    const event = buildPayoutEvent(
      {
        requestEventId: request.id,
        transactionId: request.data.transaction_id,
        amount: request.data.amount,
        currency: request.data.currency,
      },
      new Date(),
    );
    for (let copy = 0; copy < (duplicateDelivery ? 2 : 1); copy += 1) {
      await client.send(event, request.correlation_id);
      sent.inc({ type: event.type });
    }
    logger.info(
      {
        provider_event_id: event.id,
        provider_event_type: event.type,
        transaction_id: request.data.transaction_id,
      },
      'sandbox delivered the provider event',
    );
  };

  return bus.consume(
    'provider-sandbox',
    { WithdrawalRequested: answer },
    // Each delivery mostly waits out the delay, so many can be in hand at once.
    { prefetch: 100 },
  );
}

/**
 * A disabled sandbox still empties its queue: where a sandbox is deployed its queue exists, and every
 * WithdrawalRequested is routed to it whether or not it plays the provider, so with nobody
 * consuming it would grow for as long as the system runs. (Where no sandbox is deployed the queue does not exist;
 * this is the defence in depth for a sandbox deployed but switched off.) Each request is acknowledged and counted;
 * nothing is sent, and the ledger is told nothing: a provider that was never asked confirms nothing.
 */
export function startSandboxDrain(bus: EventBus, metrics: Metrics): Promise<Consumer> {
  const discarded = metrics.counter(
    'sandbox_requests_discarded_total',
    'Money requests a disabled sandbox took off its queue without answering',
    ['type'],
  );
  return bus.consume(
    'provider-sandbox',
    { WithdrawalRequested: async () => discarded.inc({ type: 'WithdrawalRequested' }) },
    { prefetch: 200 },
  );
}
