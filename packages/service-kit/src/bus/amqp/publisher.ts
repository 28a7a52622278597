import type { ChannelModel, ConfirmChannel, ConsumeMessage } from 'amqplib';
import { mustBeRouted, routingKeyOf, validateEvent, type AnyEvent } from '@payments/contracts';
import type { Logger } from '../../logger.js';
import { injectTraceContext } from '../../tracing.js';
import { BusUnavailableError } from '../event-bus.js';

export interface Publisher {
  /** Opens the confirm channel on a new connection; closing that channel closes the connection, to start afresh. */
  open(model: ChannelModel): Promise<void>;
  /** Resolves once the broker confirms the event; rejects if it is unroutable, unconfirmed in time or lost. */
  publish(event: AnyEvent): Promise<void>;
  /** Rejects every unconfirmed publish and forgets the channel (the connection is gone or closing). */
  detach(reason: string): void;
  isReady(): boolean;
}

/**
 * Publishes persistent messages on one confirm channel, many in flight at once; an event a queue of every
 * deployment must receive is mandatory and rejects when the broker returns it unroutable.
 */
export function createPublisher(options: { exchange: string; logger: Logger; timeoutMs: number }): Publisher {
  const { exchange, logger, timeoutMs } = options;
  const pending = new Map<number, { reject: (error: Error) => void }>();
  // A return arrives before the confirm of the same message, so settling the confirm can look it up here.
  const returned = new Set<number>();
  let channel: ConfirmChannel | null = null;
  let sequence = 0;

  const failPending = (reason: string) => {
    for (const [seq, entry] of pending) {
      pending.delete(seq);
      entry.reject(new BusUnavailableError(reason));
    }
  };

  return {
    async open(model) {
      const opened = await model.createConfirmChannel();
      opened.on('return', (message: ConsumeMessage) => {
        returned.add(Number(message.properties.headers?.['x-publish-seq']));
      });
      opened.on('error', (error: Error) => logger.warn({ err: error }, 'RabbitMQ publish channel error'));
      opened.on('close', () => {
        if (channel !== opened) return;
        channel = null;
        failPending('the RabbitMQ publish channel closed');
        // Publishing is impossible without it: a fresh connection (recovery) brings a fresh channel.
        model.close().catch(() => undefined);
      });
      channel = opened;
    },

    publish(event) {
      const validation = validateEvent(event);
      if (!validation.ok) {
        return Promise.reject(
          new Error(`refusing to publish an invalid event: ${validation.errors.join('; ')}`),
        );
      }
      const target = channel;
      if (!target) return Promise.reject(new BusUnavailableError('not connected to RabbitMQ'));
      const seq = ++sequence;
      return new Promise<void>((resolve, reject) => {
        const timer = setTimeout(
          () => settle(new BusUnavailableError('RabbitMQ did not confirm in time')),
          timeoutMs,
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
        const headers: Record<string, unknown> = { 'x-publish-seq': seq };
        // The consumer continues the publisher's trace (an outbox row's, when the relay publishes it).
        injectTraceContext(headers);
        try {
          target.publish(
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
              headers,
            },
            (error) => settle(error),
          );
        } catch (error) {
          settle(error as Error);
        }
      });
    },

    detach(reason) {
      channel = null;
      failPending(reason);
    },

    isReady: () => channel !== null,
  };
}
