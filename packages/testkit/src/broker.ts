import { randomBytes } from 'node:crypto';
import amqp from 'amqplib';
import { DEAD_LETTER_EXCHANGE, EVENTS_EXCHANGE, QUEUES, deadLetterQueueName } from '@payments/contracts';
import { findInfrastructure } from './infrastructure.js';

export interface TestBroker {
  url: string;
  /** Prefix for every exchange and queue of this run (AMQP_NAMESPACE). */
  namespace: string;
  cleanup(): Promise<void>;
}

/** A uuid-namespaced slice of the broker for one test run; cleanup deletes its queues and exchanges. */
export async function createTestBroker(): Promise<TestBroker> {
  const { amqpUrl } = await findInfrastructure();
  const namespace = `t-${randomBytes(4).toString('hex')}.`;
  return { url: amqpUrl, namespace, cleanup: () => deleteNamespace(amqpUrl, namespace) };
}

async function deleteNamespace(url: string, namespace: string): Promise<void> {
  const connection = await amqp.connect(url);
  try {
    const channel = await connection.createChannel();
    for (const { name } of Object.values(QUEUES)) {
      await channel.deleteQueue(namespace + name);
      await channel.deleteQueue(deadLetterQueueName(namespace + name));
    }
    await channel.deleteExchange(namespace + EVENTS_EXCHANGE);
    await channel.deleteExchange(namespace + DEAD_LETTER_EXCHANGE);
    await channel.close();
  } finally {
    await connection.close();
  }
}
