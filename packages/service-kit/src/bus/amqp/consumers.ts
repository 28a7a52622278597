import type { Channel, ChannelModel, ConsumeMessage } from 'amqplib';
import { QUEUES, bindingKeys, type EventType, type QueueKey } from '@payments/contracts';
import type { Logger } from '../../logger.js';
import {
  dispatchDelivery,
  retryDelayMs,
  type Consumer,
  type DeliveryObserver,
  type EventHandlers,
} from '../event-bus.js';
import { createAckCoalescer, type AckCoalescer } from './ack-coalescer.js';

export interface Subscription {
  kind: 'queue' | 'broadcast';
  key: string;
  /** The durable queue a `queue` subscription consumes; a broadcast gets a private queue on each connection. */
  queue?: string;
  events: readonly EventType[];
  handlers: EventHandlers;
  prefetch: number;
  onSubscribed?: () => void;
}

export interface Consumers {
  /** Starts consuming now if connected, and again on every later connection, until stopped. */
  subscribe(subscription: Subscription): Promise<Consumer>;
  /** Starts every subscription on a new connection. */
  startAll(model: ChannelModel): Promise<void>;
  /** Forgets the channels of a lost connection; the broker redelivers what they had unacknowledged. */
  detachAll(): void;
  /** Cancels every consumer and waits for the deliveries in hand to finish. */
  stopAll(): Promise<void>;
}

interface Active {
  subscription: Subscription;
  channel: Channel | null;
  consumerTag: string | null;
  starting: Promise<void> | null;
  inFlight: Set<Promise<void>>;
  stopped: boolean;
}

/**
 * Consumers with manual acks and a bounded prefetch, one channel each. A delivery's outcome follows the shared
 * failure policy: acknowledged (in groups), retried after a backoff by requeueing, or dead-lettered by the queue's
 * delivery limit or at once. Broadcast deliveries are acknowledged whatever their outcome.
 */
export function createConsumers(options: {
  exchange: string;
  logger: Logger;
  onDelivery?: DeliveryObserver;
  current: () => ChannelModel | null;
}): Consumers {
  const { exchange, logger } = options;
  const active = new Set<Active>();

  const handleMessage = async (entry: Active, acks: AckCoalescer, message: ConsumeMessage) => {
    const { subscription } = entry;
    // Quorum queues count earlier deliveries in x-delivery-count.
    const deliveryCount = Number(message.properties.headers?.['x-delivery-count'] ?? 0) + 1;
    const outcome = await dispatchDelivery(
      message.content.toString('utf8'),
      subscription.handlers,
      deliveryCount,
      logger,
      message.properties.headers,
    );
    if (subscription.kind === 'queue') {
      const key = subscription.key as QueueKey;
      // The broker dead-letters a message returned more often than the queue's delivery limit.
      const exhausted = outcome === 'retry' && deliveryCount > QUEUES[key].deliveryLimit;
      options.onDelivery?.(key, exhausted ? 'dead-letter' : outcome);
    }
    // Waits for the acknowledgement to be sent, so stopping (which waits for deliveries in hand) sends it first.
    if (outcome === 'ack' || subscription.kind === 'broadcast') await acks.ack(message);
    else if (outcome === 'dead-letter') acks.nack(message, false);
    else {
      await new Promise((resolve) => setTimeout(resolve, retryDelayMs(deliveryCount)));
      acks.nack(message, true);
    }
  };

  const consumeOn = async (entry: Active, model: ChannelModel) => {
    const { subscription } = entry;
    const channel = await model.createChannel();
    channel.on('error', (error: Error) =>
      logger.warn({ err: error, queue: subscription.key }, 'consumer channel error'),
    );
    await channel.prefetch(subscription.prefetch);
    let queue = subscription.queue;
    if (queue === undefined) {
      queue = (await channel.assertQueue('', { exclusive: true, autoDelete: true, durable: false })).queue;
      for (const routingKey of bindingKeys(subscription.events))
        await channel.bindQueue(queue, exchange, routingKey);
    }
    entry.channel = channel;
    const acks = createAckCoalescer(channel, logger);
    const { consumerTag } = await channel.consume(queue, (message) => {
      if (!message) return;
      acks.received(message);
      const delivery = handleMessage(entry, acks, message).finally(() => {
        entry.inFlight.delete(delivery);
      });
      entry.inFlight.add(delivery);
    });
    entry.consumerTag = consumerTag;
    subscription.onSubscribed?.();
  };

  const start = (entry: Active, model: ChannelModel | null): Promise<void> => {
    if (!model || entry.stopped || entry.channel) return Promise.resolve();
    // One start at a time: a subscription made while a connection is being set up must not consume twice.
    entry.starting ??= consumeOn(entry, model).finally(() => {
      entry.starting = null;
    });
    return entry.starting;
  };

  const stop = async (entry: Active) => {
    entry.stopped = true;
    active.delete(entry);
    const { channel, consumerTag } = entry;
    if (channel && consumerTag) await channel.cancel(consumerTag).catch(() => undefined);
    await Promise.allSettled([...entry.inFlight]);
    if (channel) await channel.close().catch(() => undefined);
  };

  return {
    async subscribe(subscription) {
      const entry: Active = {
        subscription,
        channel: null,
        consumerTag: null,
        starting: null,
        inFlight: new Set(),
        stopped: false,
      };
      active.add(entry);
      await start(entry, options.current()).catch((error: unknown) => {
        entry.channel = null;
        logger.warn(
          { err: error, queue: subscription.key },
          'could not start a consumer yet; will on reconnect',
        );
      });
      return { stop: () => stop(entry) };
    },

    async startAll(model) {
      for (const entry of active) await start(entry, model);
    },

    detachAll() {
      for (const entry of active) {
        entry.channel = null;
        entry.consumerTag = null;
      }
    },

    async stopAll() {
      await Promise.allSettled(
        [...active].map(({ channel, consumerTag }) => channel && consumerTag && channel.cancel(consumerTag)),
      );
      await Promise.allSettled([...active].flatMap((entry) => [...entry.inFlight]));
    },
  };
}
