import amqp, { type ChannelModel } from 'amqplib';
import { EVENTS, EVENTS_EXCHANGE } from '@payments/contracts';
import { sleep } from './load.js';

/** The withdrawals a payment provider has received (WithdrawalRequested), as the provider sees them. */
export interface PayoutRequests {
  /** Resolves true once the request for the withdrawal has arrived, false if it has not within `timeoutMs`. */
  received(transactionId: string, timeoutMs: number): Promise<boolean>;
  /** Every withdrawal whose request arrived. */
  ids(): ReadonlySet<string>;
  close(): Promise<void>;
}

/**
 * A private, auto-deleted queue bound to the system's `withdrawal.requested` routing key: the drill plays the
 * provider and may only pay out what was handed to it, exactly as a real one.
 */
export async function receivePayoutRequests(amqpUrl: string, namespace: string): Promise<PayoutRequests> {
  const exchange = `${namespace}${EVENTS_EXCHANGE}`;
  const connection: ChannelModel = await amqp.connect(amqpUrl);
  const channel = await connection.createChannel();
  await channel.assertExchange(exchange, 'topic', { durable: true });
  const { queue } = await channel.assertQueue('', { exclusive: true, autoDelete: true, durable: false });
  await channel.bindQueue(queue, exchange, EVENTS.WithdrawalRequested.routingKey);
  const arrived = new Set<string>();
  await channel.consume(
    queue,
    (message) => {
      if (!message) return;
      try {
        const event = JSON.parse(message.content.toString('utf8')) as { data?: { transaction_id?: string } };
        if (event.data?.transaction_id) arrived.add(event.data.transaction_id);
      } catch {
        // Not an event; nothing for the provider to pay.
      }
    },
    { noAck: true },
  );
  return {
    async received(transactionId, timeoutMs) {
      const deadline = Date.now() + timeoutMs;
      while (!arrived.has(transactionId)) {
        if (Date.now() > deadline) return false;
        await sleep(20);
      }
      return true;
    },
    ids: () => arrived,
    close: () => connection.close().catch(() => undefined),
  };
}
