import type { EventEnvelope } from '@payments/contracts';
import type { Consumer, DeliveryContext, EventBus, Metrics } from '@payments/service-kit';
import { buildProviderEvents, type MoneyMovement } from '../domain/provider-event.js';
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
 * Plays the payment provider: each requested deposit or withdrawal is answered, after a delay, with signed
 * provider events on /webhook/provider (a declined deposit: the failed attempt, then after another delay the
 * cancellation). The request stays unacknowledged until the webhook took them all.
 */
export function startSandboxConsumer(options: SandboxConsumerOptions): Promise<Consumer> {
  const { bus, client, delayMs, duplicateDelivery } = options;
  const sent = options.metrics.counter(
    'sandbox_provider_events_sent_total',
    'Provider events the sandbox delivered to the webhook',
    ['type'],
  );

  const answer =
    (movement: MoneyMovement) =>
    async (
      request: EventEnvelope<'DepositRequested' | 'WithdrawalRequested'>,
      { logger }: DeliveryContext,
    ) => {
      await sleep(delayMs);
      const events = buildProviderEvents(
        movement,
        {
          requestEventId: request.id,
          transactionId: request.data.transaction_id,
          amount: request.data.amount,
          currency: request.data.currency,
        },
        new Date(),
      );
      for (const [i, event] of events.entries()) {
        // A customer gives up on a declined payment a while after the decline, not at once.
        if (i > 0) await sleep(delayMs);
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
      }
    };

  return bus.consume(
    'provider-sandbox',
    { DepositRequested: answer('deposit'), WithdrawalRequested: answer('withdrawal') },
    // Each delivery mostly waits out the delay, so many can be in hand at once.
    { prefetch: 100 },
  );
}

/**
 * A disabled sandbox still empties its queue: where a sandbox is deployed its queue exists, and every
 * DepositRequested and WithdrawalRequested is routed to it whether or not it plays the provider, so with nobody
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
  const discard = (type: 'DepositRequested' | 'WithdrawalRequested') => async () => {
    discarded.inc({ type });
  };
  return bus.consume(
    'provider-sandbox',
    { DepositRequested: discard('DepositRequested'), WithdrawalRequested: discard('WithdrawalRequested') },
    { prefetch: 200 },
  );
}
