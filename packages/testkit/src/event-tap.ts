import amqp, { type ChannelModel, type ConfirmChannel } from 'amqplib';

/** An event as it travelled on the broker, decoded. */
export interface TappedEvent {
  id: string;
  type: string;
  correlation_id: string;
  data: Record<string, unknown>;
}

export interface EventTap {
  /** Every event published on the namespace's exchange since the tap opened, in arrival order. */
  events: TappedEvent[];
  /** Publishes raw bytes to the namespace's events exchange, as a misbehaving publisher would. */
  publishRaw(routingKey: string, body: string): Promise<void>;
  /** Puts raw bytes straight onto one of the namespace's queues, e.g. to stand for an earlier dead letter. */
  sendToQueue(queue: string, body: string): Promise<void>;
  /** Ready (not in-flight) messages of one of the namespace's queues, e.g. `ledger.events.dlq`. */
  depth(queue: string): Promise<number>;
  /** How many consumers one of the namespace's queues has. */
  consumers(queue: string): Promise<number>;
  close(): Promise<void>;
}

/**
 * A private, auto-deleted queue bound to every routing key of a test system's exchange: the test sees what
 * the services publish without taking anything from their own queues.
 */
export async function tapEvents(amqpUrl: string, namespace: string): Promise<EventTap> {
  const exchange = `${namespace}payments.events`;
  const connection: ChannelModel = await amqp.connect(amqpUrl);
  const channel: ConfirmChannel = await connection.createConfirmChannel();
  await channel.assertExchange(exchange, 'topic', { durable: true });
  const { queue } = await channel.assertQueue('', { exclusive: true, autoDelete: true, durable: false });
  await channel.bindQueue(queue, exchange, '#');
  const events: TappedEvent[] = [];
  await channel.consume(
    queue,
    (message) => {
      if (!message) return;
      try {
        events.push(JSON.parse(message.content.toString('utf8')) as TappedEvent);
      } catch {
        // Not an event (the poison message a test sends itself); nothing to record.
      }
    },
    { noAck: true },
  );
  const check = async (name: string) => {
    const probe = await connection.createChannel();
    try {
      return await probe.checkQueue(namespace + name);
    } finally {
      await probe.close().catch(() => undefined);
    }
  };
  return {
    events,
    async publishRaw(routingKey, body) {
      channel.publish(exchange, routingKey, Buffer.from(body), { persistent: true });
      await channel.waitForConfirms();
    },
    async sendToQueue(name, body) {
      channel.sendToQueue(namespace + name, Buffer.from(body), { persistent: true });
      await channel.waitForConfirms();
    },
    depth: async (name) => (await check(name)).messageCount,
    consumers: async (name) => (await check(name)).consumerCount,
    close: () => connection.close().catch(() => undefined),
  };
}
