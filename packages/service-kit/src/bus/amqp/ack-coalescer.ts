import type { Channel, ConsumeMessage } from 'amqplib';
import type { Logger } from '../../logger.js';

export interface AckCoalescer {
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
export function createAckCoalescer(channel: Channel, logger: Logger): AckCoalescer {
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
