import amqp from 'amqplib';
import { QUEUES, type QueueKey } from '@payments/contracts';

export interface QueueSampler {
  /** Messages ready in the queue now (not counting the unacknowledged ones a consumer holds). */
  depth(): Promise<number>;
  close(): Promise<void>;
}

/** Reads a queue's depth passively (it never declares or changes anything), for backlog figures. */
export async function openQueueSampler(
  url: string,
  namespace: string,
  queue: QueueKey,
): Promise<QueueSampler> {
  const connection = await amqp.connect(url);
  const channel = await connection.createChannel();
  const name = namespace + QUEUES[queue].name;
  return {
    depth: async () => (await channel.checkQueue(name)).messageCount,
    async close() {
      await channel.close().catch(() => undefined);
      await connection.close().catch(() => undefined);
    },
  };
}
