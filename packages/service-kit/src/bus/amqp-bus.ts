import {
  BROADCASTS,
  EVENTS_EXCHANGE,
  QUEUES,
  brokerTopology,
  deployedQueues,
  type BroadcastKey,
  type Deployment,
  type QueueKey,
} from '@payments/contracts';
import type { Logger } from '../logger.js';
import { notDeployed, type BroadcastOptions, type DeliveryObserver, type EventBus } from './event-bus.js';
import { createBrokerConnection } from './amqp/connection.js';
import { createConsumers } from './amqp/consumers.js';
import { createDeadLetters } from './amqp/dead-letters.js';
import { createPublisher } from './amqp/publisher.js';
import { ensureTopology } from './amqp/topology.js';

export interface AmqpBusOptions {
  url: string;
  logger: Logger;
  /** Prefix for every exchange and queue name; tests use a uuid so runs never share a queue. */
  namespace?: string;
  /** How long start() waits for the first connection before carrying on and retrying in the background. */
  connectTimeoutMs?: number;
  publishTimeoutMs?: number;
  /** Sees the outcome of every delivery on a service queue; a retry past the delivery limit counts as a dead letter. */
  onDelivery?: DeliveryObserver;
  /**
   * The optional queues this process needs (checked, or declared where its user may): the sandbox needs its own.
   * By default none, so no other service requires the sandbox's queue to exist.
   */
  deployment?: Deployment;
}

export interface AmqpBus extends EventBus {
  /** Connects and declares the topology; resolves when connected or when the first attempt times out. */
  start(): Promise<void>;
}

/**
 * RabbitMQ adapter: one connection (amqp/connection.ts) that amqplib re-establishes after a loss, on which each
 * new connection checks the topology, opens the confirm channel (amqp/publisher.ts) and restarts the consumers
 * (amqp/consumers.ts); dead letters are read and replayed on channels of their own (amqp/dead-letters.ts).
 */
export function createAmqpBus(options: AmqpBusOptions): AmqpBus {
  const { logger } = options;
  const ns = options.namespace ?? '';
  const exchange = ns + EVENTS_EXCHANGE;
  const deployment = options.deployment ?? { sandbox: false };
  const topology = brokerTopology(ns, deployment);
  const queueName = (key: QueueKey) => ns + QUEUES[key].name;

  const publisher = createPublisher({ exchange, logger, timeoutMs: options.publishTimeoutMs ?? 10_000 });
  const connection = createBrokerConnection({
    url: options.url,
    logger,
    async setup(model) {
      // A set-up given up for taking too long (connection.ts) goes no further on its connection.
      const abandoned = () => {
        if (connection.current() === model) return;
        publisher.detach('the set-up of the connection to RabbitMQ was given up');
        consumers.detachAll();
        throw new Error('the set-up of this connection was given up');
      };
      await ensureTopology(model, topology);
      abandoned();
      await publisher.open(model);
      abandoned();
      await consumers.startAll(model);
    },
    onLost() {
      publisher.detach('the connection to RabbitMQ was lost');
      consumers.detachAll();
    },
  });
  const consumers = createConsumers({
    exchange,
    logger,
    onDelivery: options.onDelivery,
    current: () => connection.current(),
  });
  const deadLetters = createDeadLetters(connection);

  return {
    start: () => connection.start(options.connectTimeoutMs ?? 5000),

    publish: (event) => publisher.publish(event),

    consume(key, handlers, consumeOptions = {}) {
      if (!deployedQueues(deployment).includes(key)) return Promise.reject(notDeployed(key));
      return consumers.subscribe({
        kind: 'queue',
        key,
        queue: queueName(key),
        events: QUEUES[key].events,
        handlers,
        prefetch: consumeOptions.prefetch ?? 20,
      });
    },

    broadcast(key: BroadcastKey, handlers, broadcastOptions: BroadcastOptions = {}) {
      return consumers.subscribe({
        kind: 'broadcast',
        key,
        events: BROADCASTS[key].events,
        handlers,
        prefetch: 50,
        onSubscribed: broadcastOptions.onSubscribed,
      });
    },

    replayDeadLetters: (key, limit = Infinity) => deadLetters.replay(queueName(key), limit),
    listDeadLetters: (key, limit = 100) => deadLetters.list(queueName(key), limit),
    countDeadLetters: (key) => deadLetters.count(queueName(key)),
    // A passive declare: it needs no permission on the queue, so any service may read another's depth.
    countQueued: (key) =>
      connection.withChannel(async (channel) => (await channel.checkQueue(queueName(key))).messageCount),

    isConnected: () => publisher.isReady(),

    async close() {
      await consumers.stopAll();
      publisher.detach('the bus is closing');
      await connection.close();
    },
  };
}
