import { deadLetterQueueName, replayExchangeName } from '@payments/contracts';
import type { DeadLetter } from '../event-bus.js';
import type { BrokerConnection } from './connection.js';

/** How long a dead-letter listing waits for the quorum queue to take back the messages it peeked at. */
const RETURN_WAIT_MS = 2_000;

export interface DeadLetters {
  /** Moves up to `limit` of what a queue's dead-letter queue holds now back onto the queue; returns how many. */
  replay(queue: string, limit: number): Promise<number>;
  list(queue: string, limit: number): Promise<DeadLetter[]>;
  count(queue: string): Promise<number>;
}

/** A queue's dead-letter queue, read and replayed on channels of their own. */
export function createDeadLetters(connection: BrokerConnection): DeadLetters {
  return {
    replay(queue, limit) {
      return connection.withConfirmChannel(async (channel) => {
        const dlq = deadLetterQueueName(queue);
        // Only what is there now: a poison message that fails again comes back behind these, not round and round.
        const { messageCount } = await channel.checkQueue(dlq);
        const replay = replayExchangeName(queue);
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

    async list(queue, limit) {
      const dlq = deadLetterQueueName(queue);
      const letters = await connection.withChannel(async (channel) => {
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
      await connection.withChannel(async (channel) => {
        const deadline = Date.now() + RETURN_WAIT_MS;
        while ((await channel.checkQueue(dlq)).messageCount < letters.length && Date.now() < deadline) {
          await new Promise((resolve) => setTimeout(resolve, 10));
        }
      });
      return letters;
    },

    count(queue) {
      return connection.withChannel(
        async (channel) => (await channel.checkQueue(deadLetterQueueName(queue))).messageCount,
      );
    },
  };
}
