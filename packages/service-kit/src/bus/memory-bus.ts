import {
  BROADCASTS,
  QUEUES,
  deployedQueues,
  validateEvent,
  type AnyEvent,
  type BroadcastKey,
  type Deployment,
  type EventType,
  type QueueKey,
} from '@payments/contracts';
import type { Logger } from '../logger.js';
import { currentTraceCarrier, type TraceCarrier } from '../tracing.js';
import {
  dispatchDelivery,
  notDeployed,
  retryDelayMs,
  type Consumer,
  type DeadLetter,
  type EventBus,
  type EventHandlers,
} from './event-bus.js';

interface Message {
  body: string;
  deliveryCount: number;
  /** The publisher's trace context, as the AMQP adapter carries it in the message headers. */
  trace: TraceCarrier | null;
}

interface QueueState {
  name: string;
  events: readonly EventType[];
  deliveryLimit: number;
  ready: Message[];
  deadLetters: Message[];
  consumers: MemoryConsumer[];
  next: number;
}

interface MemoryConsumer {
  handlers: EventHandlers;
  prefetch: number;
  inFlight: Set<Promise<void>>;
  stopped: boolean;
}

/**
 * The in-process adapter for embedded mode and tests: the same queues, validation, retries and dead letters
 * as the AMQP adapter, kept in memory. Events survive nothing but the process. Like the broker's topology, it
 * holds an optional queue (the sandbox's) only where `deployment` runs its consumer; what only such a queue would
 * take is dropped elsewhere.
 */
export function createMemoryBus(logger: Logger, options: { deployment?: Deployment } = {}): EventBus {
  const queues = new Map<QueueKey, QueueState>(
    deployedQueues(options.deployment ?? { sandbox: false }).map((key) => [
      key,
      { ...QUEUES[key], ready: [], deadLetters: [], consumers: [], next: 0 },
    ]),
  );
  const broadcasts = new Map<BroadcastKey, Set<EventHandlers>>();
  const timers = new Set<NodeJS.Timeout>();
  let closed = false;

  const pump = (queue: QueueState) => {
    while (queue.ready.length > 0) {
      const consumer = pickConsumer(queue);
      if (!consumer) return;
      const message = queue.ready.shift() as Message;
      const delivery = deliver(queue, consumer, message).finally(() => {
        consumer.inFlight.delete(delivery);
        pump(queue);
      });
      consumer.inFlight.add(delivery);
    }
  };

  const pickConsumer = (queue: QueueState): MemoryConsumer | undefined => {
    const active = queue.consumers.filter((c) => !c.stopped && c.inFlight.size < c.prefetch);
    if (active.length === 0) return undefined;
    queue.next = (queue.next + 1) % active.length;
    return active[queue.next];
  };

  const deliver = async (queue: QueueState, consumer: MemoryConsumer, message: Message) => {
    const deliveryCount = message.deliveryCount + 1;
    const outcome = await dispatchDelivery(
      message.body,
      consumer.handlers,
      deliveryCount,
      logger,
      message.trace,
    );
    if (outcome === 'ack') return;
    if (outcome === 'dead-letter' || deliveryCount >= queue.deliveryLimit) {
      queue.deadLetters.push({ ...message, deliveryCount });
      return;
    }
    const timer = setTimeout(() => {
      timers.delete(timer);
      queue.ready.push({ ...message, deliveryCount });
      pump(queue);
    }, retryDelayMs(deliveryCount));
    timers.add(timer);
  };

  const queueOf = (key: QueueKey) => {
    const queue = queues.get(key);
    if (!queue) throw notDeployed(key);
    return queue;
  };

  return {
    async publish(event: AnyEvent) {
      if (closed) throw new Error('bus is closed');
      const validation = validateEvent(event);
      if (!validation.ok)
        throw new Error(`refusing to publish an invalid event: ${validation.errors.join('; ')}`);
      const body = JSON.stringify(event);
      const trace = currentTraceCarrier();
      for (const queue of queues.values()) {
        if (queue.events.includes(event.type)) {
          queue.ready.push({ body, deliveryCount: 0, trace });
          setImmediate(() => pump(queue));
        }
      }
      for (const [key, subscribers] of broadcasts) {
        if ((BROADCASTS[key].events as readonly EventType[]).includes(event.type)) {
          for (const handlers of subscribers)
            setImmediate(() => void dispatchDelivery(body, handlers, 1, logger, trace));
        }
      }
    },

    async consume(key, handlers, options = {}) {
      const queue = queueOf(key);
      const consumer: MemoryConsumer = {
        handlers,
        prefetch: options.prefetch ?? 20,
        inFlight: new Set(),
        stopped: false,
      };
      queue.consumers.push(consumer);
      setImmediate(() => pump(queue));
      return {
        async stop() {
          consumer.stopped = true;
          queue.consumers = queue.consumers.filter((c) => c !== consumer);
          await Promise.allSettled([...consumer.inFlight]);
        },
      } satisfies Consumer;
    },

    async broadcast(key, handlers, broadcastOptions = {}) {
      const subscribers = broadcasts.get(key) ?? new Set();
      broadcasts.set(key, subscribers.add(handlers));
      // Never disconnected: subscribed once, for good.
      broadcastOptions.onSubscribed?.();
      return {
        async stop() {
          subscribers.delete(handlers);
        },
      };
    },

    async replayDeadLetters(key, limit = Infinity) {
      const queue = queueOf(key);
      const moved = queue.deadLetters.splice(0, Math.min(limit, queue.deadLetters.length));
      queue.ready.push(...moved.map((m) => ({ ...m, deliveryCount: 0 })));
      pump(queue);
      return moved.length;
    },

    async listDeadLetters(key, limit = 100): Promise<DeadLetter[]> {
      const queue = queueOf(key);
      return queue.deadLetters.slice(0, limit).map((m) => ({ queue: queue.name, body: m.body }));
    },

    async countDeadLetters(key) {
      return queueOf(key).deadLetters.length;
    },

    async countQueued(key) {
      return queueOf(key).ready.length;
    },

    isConnected: () => !closed,

    async close() {
      closed = true;
      for (const timer of timers) clearTimeout(timer);
      await Promise.allSettled(
        [...queues.values()].flatMap((q) => q.consumers.flatMap((c) => [...c.inFlight])),
      );
    },
  };
}
