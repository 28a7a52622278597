import amqp, { type Channel, type ChannelModel, type ConfirmChannel, type ConsumeMessage } from 'amqplib';
import {
  BROADCASTS,
  EVENTS_EXCHANGE,
  QUEUES,
  bindingKeys,
  brokerTopology,
  deadLetterQueueName,
  replayExchangeName,
  deployedQueues,
  mustBeRouted,
  routingKeyOf,
  validateEvent,
  type AnyEvent,
  type BroadcastKey,
  type Deployment,
  type EventType,
  type QueueKey,
} from '@payments/contracts';
import type { Logger } from '../logger.js';
import {
  BusUnavailableError,
  dispatchDelivery,
  notDeployed,
  retryDelayMs,
  type BroadcastOptions,
  type Consumer,
  type DeadLetter,
  type DeliveryObserver,
  type EventBus,
  type EventHandlers,
} from './event-bus.js';

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

interface Subscription {
  kind: 'queue' | 'broadcast';
  key: string;
  events: readonly EventType[];
  handlers: EventHandlers;
  prefetch: number;
  channel: Channel | null;
  consumerTag: string | null;
  inFlight: Set<Promise<void>>;
  stopped: boolean;
  onSubscribed?: () => void;
}

/** How long a dead-letter listing waits for the quorum queue to take back the messages it peeked at. */
const RETURN_WAIT_MS = 2_000;

export interface AmqpBus extends EventBus {
  /** Connects and declares the topology; resolves when connected or when the first attempt times out. */
  start(): Promise<void>;
}

/**
 * RabbitMQ adapter. Publishes persistent messages on a confirm channel and resolves only on the broker's ack; an
 * event a queue of every deployment must receive is mandatory and rejects when unroutable (returned). Consumers use
 * manual acks, a bounded prefetch and durable quorum queues whose delivery limit sends repeated failures to the
 * queue's dead-letter queue.
 * A lost connection is re-established with backoff, and topology and consumers are restored.
 */
export function createAmqpBus(options: AmqpBusOptions): AmqpBus {
  const { logger } = options;
  const ns = options.namespace ?? '';
  const exchange = ns + EVENTS_EXCHANGE;
  const publishTimeoutMs = options.publishTimeoutMs ?? 10_000;
  const subscriptions = new Set<Subscription>();
  const pending = new Map<number, { reject: (error: Error) => void }>();
  const returned = new Set<number>();
  let connection: ChannelModel | null = null;
  let publisher: ConfirmChannel | null = null;
  let connecting: Promise<void> | null = null;
  let reconnectTimer: NodeJS.Timeout | null = null;
  let attempts = 0;
  let closed = false;
  let publishSeq = 0;

  const queueName = (key: QueueKey) => ns + QUEUES[key].name;

  const deployment = options.deployment ?? { sandbox: false };
  const topology = brokerTopology(ns, deployment);

  /** Passive checks need no permission, so a service whose broker user may not declare can still verify. */
  const topologyIsDeclared = async (conn: ChannelModel): Promise<boolean> => {
    const probe = await conn.createChannel();
    // A missing exchange or queue closes the probe channel with 404; that is the answer, not an error.
    probe.on('error', () => undefined);
    try {
      for (const { name } of topology.exchanges) await probe.checkExchange(name);
      for (const { name } of topology.queues) await probe.checkQueue(name);
      return true;
    } catch {
      return false;
    } finally {
      await probe.close().catch(() => undefined);
    }
  };

  /**
   * Declares what is missing when this user may (an administrative user: `pnpm start`, tests). A service with
   * its own restricted user finds everything declared by the provisioner and declares nothing.
   */
  const ensureTopology = async (conn: ChannelModel) => {
    if (await topologyIsDeclared(conn)) return;
    const channel = await conn.createChannel();
    channel.on('error', () => undefined);
    try {
      for (const { name, type } of topology.exchanges)
        await channel.assertExchange(name, type, { durable: true });
      for (const queue of topology.queues)
        await channel.assertQueue(queue.name, { durable: true, arguments: queue.arguments });
      for (const { queue, exchange: source, routingKey } of topology.bindings)
        await channel.bindQueue(queue, source, routingKey);
    } catch (error) {
      if (/ACCESS[-_]REFUSED/.test(String((error as Error).message))) {
        throw new Error(
          `the broker topology (${exchange} and its queues) is missing and this broker user may not declare it; ` +
            'provision the broker first (pnpm provision, or the test kit / launcher that starts the services)',
          { cause: error },
        );
      }
      throw error;
    } finally {
      await channel.close().catch(() => undefined);
    }
  };

  const failPending = (reason: string) => {
    for (const [seq, entry] of pending) {
      pending.delete(seq);
      entry.reject(new BusUnavailableError(reason));
    }
  };

  const scheduleReconnect = () => {
    if (closed || reconnectTimer) return;
    const delay = Math.min(250 * 2 ** Math.min(attempts, 5), 5000);
    attempts += 1;
    reconnectTimer = setTimeout(() => {
      reconnectTimer = null;
      // A failed attempt is logged and schedules the next one; left unhandled it would end the process.
      connect().catch(() => undefined);
    }, delay);
  };

  const onConnectionLost = (error?: Error) => {
    if (!connection) return;
    logger.warn({ err: error }, 'lost the RabbitMQ connection; reconnecting');
    connection = null;
    publisher = null;
    failPending('the connection to RabbitMQ was lost');
    for (const subscription of subscriptions) {
      subscription.channel = null;
      subscription.consumerTag = null;
    }
    scheduleReconnect();
  };

  const connect = (): Promise<void> => {
    connecting ??= (async () => {
      try {
        const conn = await amqp.connect(options.url, { clientProperties: { connection_name: 'payments' } });
        conn.on('error', (error: Error) => logger.warn({ err: error }, 'RabbitMQ connection error'));
        conn.on('close', (error?: Error) => {
          if (connection === conn) onConnectionLost(error);
        });
        await ensureTopology(conn);
        const channel = await conn.createConfirmChannel();
        channel.on('return', (message: ConsumeMessage) => {
          returned.add(Number(message.properties.headers?.['x-publish-seq']));
        });
        channel.on('error', (error: Error) => logger.warn({ err: error }, 'RabbitMQ publish channel error'));
        channel.on('close', () => {
          if (publisher === channel) {
            publisher = null;
            failPending('the RabbitMQ publish channel closed');
            if (connection === conn) void conn.close().catch(() => undefined);
          }
        });
        connection = conn;
        publisher = channel;
        attempts = 0;
        logger.info('connected to RabbitMQ');
        for (const subscription of subscriptions) await startSubscription(subscription);
      } catch (error) {
        if (attempts === 0 || attempts % 20 === 0)
          logger.warn({ err: error }, 'cannot reach RabbitMQ; retrying');
        scheduleReconnect();
        throw error;
      } finally {
        connecting = null;
      }
    })();
    return connecting;
  };

  const startSubscription = async (subscription: Subscription) => {
    if (!connection || subscription.stopped || subscription.channel) return;
    const channel = await connection.createChannel();
    channel.on('error', (error: Error) =>
      logger.warn({ err: error, queue: subscription.key }, 'consumer channel error'),
    );
    await channel.prefetch(subscription.prefetch);
    let queue: string;
    if (subscription.kind === 'queue') {
      queue = queueName(subscription.key as QueueKey);
    } else {
      queue = (await channel.assertQueue('', { exclusive: true, autoDelete: true, durable: false })).queue;
      for (const routingKey of bindingKeys(subscription.events))
        await channel.bindQueue(queue, exchange, routingKey);
    }
    subscription.channel = channel;
    const acks = createAckCoalescer(channel, logger);
    const { consumerTag } = await channel.consume(queue, (message) => {
      if (!message) return;
      acks.received(message);
      const delivery = handleMessage(subscription, acks, message).finally(() => {
        subscription.inFlight.delete(delivery);
      });
      subscription.inFlight.add(delivery);
    });
    subscription.consumerTag = consumerTag;
    subscription.onSubscribed?.();
  };

  const handleMessage = async (subscription: Subscription, acks: AckCoalescer, message: ConsumeMessage) => {
    // Quorum queues count earlier deliveries in x-delivery-count.
    const deliveryCount = Number(message.properties.headers?.['x-delivery-count'] ?? 0) + 1;
    const outcome = await dispatchDelivery(
      message.content.toString('utf8'),
      subscription.handlers,
      deliveryCount,
      logger,
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

  const subscribe = async (subscription: Subscription): Promise<Consumer> => {
    subscriptions.add(subscription);
    await startSubscription(subscription).catch((error: unknown) => {
      subscription.channel = null;
      logger.warn(
        { err: error, queue: subscription.key },
        'could not start a consumer yet; will on reconnect',
      );
    });
    return {
      async stop() {
        subscription.stopped = true;
        subscriptions.delete(subscription);
        const { channel, consumerTag } = subscription;
        if (channel && consumerTag) await channel.cancel(consumerTag).catch(() => undefined);
        await Promise.allSettled([...subscription.inFlight]);
        if (channel) await channel.close().catch(() => undefined);
      },
    };
  };

  const withChannel = async <T>(work: (channel: Channel) => Promise<T>): Promise<T> => {
    if (!connection) throw new BusUnavailableError('not connected to RabbitMQ');
    const channel = await connection.createChannel();
    try {
      return await work(channel);
    } finally {
      await channel.close().catch(() => undefined);
    }
  };

  const withConfirmChannel = async <T>(work: (channel: ConfirmChannel) => Promise<T>): Promise<T> => {
    if (!connection) throw new BusUnavailableError('not connected to RabbitMQ');
    const channel = await connection.createConfirmChannel();
    try {
      return await work(channel);
    } finally {
      await channel.close().catch(() => undefined);
    }
  };

  return {
    async start() {
      const timeout = new Promise<void>((resolve) =>
        setTimeout(resolve, options.connectTimeoutMs ?? 5000).unref(),
      );
      await Promise.race([connect().catch(() => undefined), timeout]);
    },

    publish(event: AnyEvent) {
      const validation = validateEvent(event);
      if (!validation.ok) {
        return Promise.reject(
          new Error(`refusing to publish an invalid event: ${validation.errors.join('; ')}`),
        );
      }
      const channel = publisher;
      if (!channel || closed) return Promise.reject(new BusUnavailableError('not connected to RabbitMQ'));
      const seq = ++publishSeq;
      return new Promise<void>((resolve, reject) => {
        const timer = setTimeout(
          () => settle(new BusUnavailableError('RabbitMQ did not confirm in time')),
          publishTimeoutMs,
        );
        const settle = (error?: Error | null) => {
          if (!pending.has(seq)) return;
          pending.delete(seq);
          clearTimeout(timer);
          const unroutable = returned.delete(seq);
          if (error)
            reject(error instanceof BusUnavailableError ? error : new BusUnavailableError(error.message));
          else if (unroutable) reject(new BusUnavailableError(`no queue is bound for ${event.type}`));
          else resolve();
        };
        pending.set(seq, { reject: (error) => settle(error) });
        try {
          channel.publish(
            exchange,
            routingKeyOf(event.type),
            Buffer.from(JSON.stringify(event)),
            {
              persistent: true,
              // An announcement nobody hears, or a request for a sandbox not deployed here, is dropped, not refused.
              mandatory: mustBeRouted(event.type),
              contentType: 'application/json',
              messageId: event.id,
              correlationId: event.correlation_id,
              type: event.type,
              timestamp: Math.floor(Date.now() / 1000),
              headers: { 'x-publish-seq': seq },
            },
            (error) => settle(error),
          );
        } catch (error) {
          settle(error as Error);
        }
      });
    },

    consume(key, handlers, consumeOptions = {}) {
      if (!deployedQueues(deployment).includes(key)) return Promise.reject(notDeployed(key));
      return subscribe({
        kind: 'queue',
        key,
        events: QUEUES[key].events,
        handlers,
        prefetch: consumeOptions.prefetch ?? 20,
        channel: null,
        consumerTag: null,
        inFlight: new Set(),
        stopped: false,
      });
    },

    broadcast(key: BroadcastKey, handlers, broadcastOptions: BroadcastOptions = {}) {
      return subscribe({
        onSubscribed: broadcastOptions.onSubscribed,
        kind: 'broadcast',
        key,
        events: BROADCASTS[key].events,
        handlers,
        prefetch: 50,
        channel: null,
        consumerTag: null,
        inFlight: new Set(),
        stopped: false,
      });
    },

    replayDeadLetters(key, limit = Infinity) {
      return withConfirmChannel(async (channel) => {
        const target = queueName(key);
        const dlq = deadLetterQueueName(target);
        // Only what is there now: a poison message that fails again comes back behind these, not round and round.
        const { messageCount } = await channel.checkQueue(dlq);
        const replay = replayExchangeName(target);
        // A replay exchange bound to nothing would drop the copy: mandatory, it is returned instead.
        let unrouted = false;
        channel.on('return', () => (unrouted = true));
        let moved = 0;
        while (moved < Math.min(limit, messageCount)) {
          const message = await channel.get(dlq, { noAck: false });
          if (!message) break;
          // Back onto the queue alone through its replay exchange, with a fresh delivery count.
          channel.publish(replay, '', message.content, {
            ...message.properties,
            headers: {},
            persistent: true,
            mandatory: true,
          });
          // Taken off the dead-letter queue only once the broker holds the copy.
          await channel.waitForConfirms();
          // Left unacknowledged, it goes back to the dead-letter queue when the channel closes.
          if (unrouted) throw new Error(`${replay} is bound to no queue; replayed ${moved} before it`);
          channel.ack(message);
          moved += 1;
        }
        return moved;
      });
    },

    async listDeadLetters(key, limit = 100) {
      const dlq = deadLetterQueueName(queueName(key));
      const letters = await withChannel(async (channel) => {
        const peeked: DeadLetter[] = [];
        while (peeked.length < limit) {
          const message = await channel.get(dlq, { noAck: false });
          if (!message) break;
          peeked.push({ queue: dlq, body: message.content.toString('utf8') });
        }
        // Closing the channel returns every message we peeked at, unacknowledged.
        return peeked;
      });
      // A quorum queue takes them back a moment after the channel has closed. Answer once it holds them again,
      // so that a replay straight after this listing finds what it listed (bounded, in case one is taking them).
      if (letters.length === 0) return letters;
      await withChannel(async (channel) => {
        const deadline = Date.now() + RETURN_WAIT_MS;
        while ((await channel.checkQueue(dlq)).messageCount < letters.length && Date.now() < deadline) {
          await new Promise((resolve) => setTimeout(resolve, 10));
        }
      });
      return letters;
    },

    countDeadLetters(key) {
      return withChannel(
        async (channel) => (await channel.checkQueue(deadLetterQueueName(queueName(key)))).messageCount,
      );
    },

    isConnected: () => publisher !== null,

    async close() {
      closed = true;
      if (reconnectTimer) clearTimeout(reconnectTimer);
      await Promise.allSettled(
        [...subscriptions].map((s) => s.channel && s.consumerTag && s.channel.cancel(s.consumerTag)),
      );
      await Promise.allSettled([...subscriptions].flatMap((s) => [...s.inFlight]));
      const conn = connection;
      connection = null;
      publisher = null;
      failPending('the bus is closing');
      if (conn) await conn.close().catch(() => undefined);
    },
  };
}

interface AckCoalescer {
  /** Called for every delivery, in the order the channel delivers them. */
  received(message: ConsumeMessage): void;
  /**
   * Acknowledged soon, together with the other deliveries acknowledged in the same turn of the event loop;
   * resolves once the acknowledgement is sent.
   */
  ack(message: ConsumeMessage): Promise<void>;
  /** Rejected at once (requeued or dead-lettered). */
  nack(message: ConsumeMessage, requeue: boolean): void;
}

/**
 * Acknowledges in groups: the deliveries settled in one turn of the event loop (a batch that committed
 * together) are acknowledged by one `basic.ack` with `multiple` set, for the longest run of settled deliveries at
 * the front of the channel's unsettled ones; a delivery settled behind one still in hand is acknowledged alone.
 * One frame and one settlement in the queue's log instead of one per delivery, and never an acknowledgement for
 * a delivery whose handler has not finished (`multiple` covers every unsettled delivery up to its tag, so the
 * front run is exactly what it covers).
 */
function createAckCoalescer(channel: Channel, logger: Logger): AckCoalescer {
  // Unsettled deliveries in delivery-tag order, and which of them are waiting to be acknowledged.
  const unsettled: ConsumeMessage[] = [];
  const toAck = new Set<ConsumeMessage>();
  let flushed: Promise<void> | null = null;

  const settle = (work: () => void) => {
    try {
      work();
    } catch (error) {
      // The channel closed under us; the broker redelivers the unacked messages to another consumer.
      logger.debug({ err: error }, 'could not settle a delivery on a closed channel');
    }
  };

  const flush = () => {
    flushed = null;
    let last: ConsumeMessage | null = null;
    while (unsettled.length > 0 && toAck.has(unsettled[0] as ConsumeMessage)) {
      last = unsettled.shift() as ConsumeMessage;
      toAck.delete(last);
    }
    if (last) {
      const upTo = last;
      settle(() => channel.ack(upTo, true));
    }
    if (toAck.size === 0) return;
    for (const message of toAck) {
      unsettled.splice(unsettled.indexOf(message), 1);
      settle(() => channel.ack(message));
    }
    toAck.clear();
  };

  return {
    received(message) {
      unsettled.push(message);
    },
    ack(message) {
      toAck.add(message);
      flushed ??= new Promise<void>((resolve) =>
        setImmediate(() => {
          flush();
          resolve();
        }),
      );
      return flushed;
    },
    nack(message, requeue) {
      const index = unsettled.indexOf(message);
      if (index >= 0) unsettled.splice(index, 1);
      settle(() => channel.nack(message, false, requeue));
    },
  };
}
