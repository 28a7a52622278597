import { randomBytes } from 'node:crypto';
import {
  DEAD_LETTER_EXCHANGE,
  EVENTS_EXCHANGE,
  QUEUES,
  deadLetterQueueName,
  replayExchangeName,
  type QueueKey,
} from '@payments/contracts';
import { connectToAnyNode } from '@payments/infra';
import { findInfrastructure } from './infrastructure.js';

export interface TestBroker {
  url: string;
  /** Prefix for every exchange and queue of this run (AMQP_NAMESPACE). */
  namespace: string;
  /** Deletes one of the namespace's queues and its dead-letter queue, e.g. to stand for a deployment without it. */
  deleteQueue(queue: QueueKey): Promise<void>;
  cleanup(): Promise<void>;
}

/** A uuid-namespaced slice of the broker for one test run; cleanup deletes its queues and exchanges. */
export async function createTestBroker(): Promise<TestBroker> {
  const { amqpUrl } = await findInfrastructure();
  const namespace = `t-${randomBytes(4).toString('hex')}.`;
  return {
    url: amqpUrl,
    namespace,
    deleteQueue: (queue) => deleteQueues(amqpUrl, [namespace + QUEUES[queue].name]),
    cleanup: () => deleteNamespace(amqpUrl, namespace),
  };
}

/** Deletes the queues (each with its dead-letter queue) and, when asked, the namespace's exchanges. */
async function deleteQueues(url: string, names: string[], exchanges: string[] = []): Promise<void> {
  const connection = await connectToAnyNode(url);
  try {
    const channel = await connection.createChannel();
    for (const name of names) {
      await channel.deleteQueue(name);
      await channel.deleteQueue(deadLetterQueueName(name));
    }
    for (const exchange of exchanges) await channel.deleteExchange(exchange);
    await channel.close();
  } finally {
    await connection.close();
  }
}

function deleteNamespace(url: string, namespace: string): Promise<void> {
  return deleteQueues(
    url,
    Object.values(QUEUES).map(({ name }) => namespace + name),
    [
      namespace + EVENTS_EXCHANGE,
      namespace + DEAD_LETTER_EXCHANGE,
      ...Object.values(QUEUES).map(({ name }) => replayExchangeName(namespace + name)),
    ],
  );
}
