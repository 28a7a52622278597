import type { AnyEvent, BroadcastKey, EventEnvelope, EventType, QueueKey } from '@payments/contracts';
import { validateEvent } from '@payments/contracts';
import type { Logger } from '../logger.js';
import { contextFromCarrier, inSpan, isTracing, SpanKind } from '../tracing.js';

export interface DeliveryContext {
  /** 1 on the first delivery, then counts redeliveries. */
  deliveryCount: number;
  logger: Logger;
}

export type EventHandler<T extends EventType> = (
  event: EventEnvelope<T>,
  context: DeliveryContext,
) => Promise<void>;
export type EventHandlers = { [T in EventType]?: EventHandler<T> };

/** Thrown by a handler for an event that can never succeed: it is dead-lettered at once, not retried. */
export class PermanentEventError extends Error {
  override name = 'PermanentEventError';
}

/** Thrown by publish when the broker cannot take the event: callers answer 500 and the sender retries. */
export class BusUnavailableError extends Error {
  override name = 'BusUnavailableError';
}

export interface ConsumeOptions {
  prefetch?: number;
}

export interface BroadcastOptions {
  /**
   * Called each time the subscription is (re)made, first and after every reconnect: a broadcast queue lives only
   * as long as its connection, so events published while it was gone are lost and must be caught up from the source.
   */
  onSubscribed?: () => void;
}

export interface Consumer {
  /** Stops taking deliveries and waits for the ones in hand to finish. */
  stop(): Promise<void>;
}

export interface DeadLetter {
  queue: string;
  body: string;
}

/**
 * The port every service publishes and consumes through. Both adapters keep the same promises:
 * publish resolves only once the event is safely stored (broker confirm); a consumer's handler is retried with
 * backoff up to the queue's delivery limit and then dead-lettered; invalid events are dead-lettered at once.
 */
export interface EventBus {
  publish(event: AnyEvent): Promise<void>;
  /** Competing consumers on the service's durable queue. */
  consume(queue: QueueKey, handlers: EventHandlers, options?: ConsumeOptions): Promise<Consumer>;
  /** Every process gets its own copy (revocations and the like). Failures are logged, never retried. */
  broadcast(key: BroadcastKey, handlers: EventHandlers, options?: BroadcastOptions): Promise<Consumer>;
  /** Moves up to `limit` dead letters of a queue back onto it; returns how many moved. */
  replayDeadLetters(queue: QueueKey, limit?: number): Promise<number>;
  /** Up to `limit` dead letters of a queue, oldest first, left where they are. */
  listDeadLetters(queue: QueueKey, limit?: number): Promise<DeadLetter[]>;
  /** How many dead letters a queue holds (those a listing has in hand a moment longer excepted). */
  countDeadLetters(queue: QueueKey): Promise<number>;
  /** How many messages a queue holds ready for its consumers (those delivered and not yet acknowledged aside). */
  countQueued(queue: QueueKey): Promise<number>;
  isConnected(): boolean;
  close(): Promise<void>;
}

/** Consuming an optional queue the bus was not told it needs: a wiring mistake, said at once. */
export function notDeployed(key: QueueKey): Error {
  return new Error(
    `the ${key} queue is optional and not part of this bus's deployment (pass deployment: { sandbox: true })`,
  );
}

export type DeliveryOutcome = 'ack' | 'retry' | 'dead-letter';

/** Told what became of each delivery on a service queue, e.g. to count dead letters. */
export type DeliveryObserver = (queue: QueueKey, outcome: DeliveryOutcome) => void;

export function retryDelayMs(deliveryCount: number): number {
  return Math.min(100 * 2 ** (deliveryCount - 1), 5000);
}

/**
 * The failure policy both adapters share: decode, validate, dispatch by type, and decide the outcome. With tracing
 * on, the handler runs in a CONSUMER span continuing the publisher's trace (`traceCarrier`: the message headers).
 */
export async function dispatchDelivery(
  body: string,
  handlers: EventHandlers,
  deliveryCount: number,
  logger: Logger,
  traceCarrier?: unknown,
): Promise<DeliveryOutcome> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    logger.error({ deliveryCount }, 'dead-lettering an event that is not JSON');
    return 'dead-letter';
  }
  const validation = validateEvent(parsed);
  if (!validation.ok) {
    logger.error({ errors: validation.errors }, 'dead-lettering an event that fails its schema');
    return 'dead-letter';
  }
  const event = validation.event;
  const handler = handlers[event.type] as EventHandler<EventType> | undefined;
  const eventLogger = logger.child({
    event_id: event.id,
    event_type: event.type,
    correlation_id: event.correlation_id,
  });
  if (!handler) {
    eventLogger.warn('no handler for this event type; acknowledged without effect');
    return 'ack';
  }
  try {
    if (!isTracing()) await handler(event, { deliveryCount, logger: eventLogger });
    else {
      await inSpan(
        `${event.type} process`,
        {
          kind: SpanKind.CONSUMER,
          parent: contextFromCarrier(traceCarrier),
          attributes: {
            'messaging.system': 'rabbitmq',
            'messaging.message.id': event.id,
            'messaging.operation.type': 'process',
            'payments.delivery_count': deliveryCount,
          },
        },
        () => handler(event, { deliveryCount, logger: eventLogger }),
      );
    }
    return 'ack';
  } catch (error) {
    if (error instanceof PermanentEventError) {
      eventLogger.error({ err: error }, 'dead-lettering an event its handler rejected');
      return 'dead-letter';
    }
    eventLogger.warn({ err: error, deliveryCount }, 'event handler failed; will retry');
    return 'retry';
  }
}
