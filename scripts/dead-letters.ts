import { deadLetterQueueName, QUEUES, type QueueKey } from '@payments/contracts';
import { createAmqpBus, createLogger } from '@payments/service-kit';

// `pnpm dlq list <queue> [--limit N]` prints the dead letters of a service queue, one JSON body per line, without
// removing them; `pnpm dlq replay <queue> [--limit N]` moves them back onto the queue. AMQP_URL and
// AMQP_NAMESPACE name the broker and the namespace, as for the services.

const USAGE = `usage: pnpm dlq list <queue> [--limit N]
       pnpm dlq replay <queue> [--limit N]
queues: ${Object.keys(QUEUES).join(', ')}`;

interface Command {
  action: 'list' | 'replay';
  queue: QueueKey;
  limit: number | undefined;
}

function parseArguments(args: string[]): Command | string {
  const [action, queue, ...options] = args;
  if (action !== 'list' && action !== 'replay') return `unknown command ${JSON.stringify(action ?? '')}`;
  if (!queue || !Object.hasOwn(QUEUES, queue)) return `unknown queue ${JSON.stringify(queue ?? '')}`;
  let limit: number | undefined;
  for (let i = 0; i < options.length; i += 1) {
    const option = options[i] as string;
    const value = option.startsWith('--limit=') ? option.slice('--limit='.length) : undefined;
    const given = option === '--limit' ? options[(i += 1)] : value;
    if (given === undefined || !/^[1-9]\d*$/.test(given)) return `invalid option ${JSON.stringify(option)}`;
    limit = Number(given);
  }
  return { action, queue: queue as QueueKey, limit };
}

async function main(): Promise<number> {
  const command = parseArguments(process.argv.slice(2).filter((arg) => arg !== '--'));
  if (typeof command === 'string') {
    console.error(`${command}\n${USAGE}`);
    return 2;
  }
  const namespace = process.env.AMQP_NAMESPACE ?? '';
  const bus = createAmqpBus({
    url: process.env.AMQP_URL || 'amqp://guest:guest@127.0.0.1:5672',
    namespace,
    logger: createLogger('dead-letters', 'silent'),
    connectTimeoutMs: 10_000,
  });
  await bus.start();
  try {
    if (!bus.isConnected()) {
      console.error('cannot reach RabbitMQ (AMQP_URL)');
      return 1;
    }
    const dlq = deadLetterQueueName(namespace + QUEUES[command.queue].name);
    if (command.action === 'list') {
      const letters = await bus.listDeadLetters(command.queue, command.limit);
      for (const letter of letters) console.log(letter.body);
      console.error(`${letters.length} dead letter(s) listed from ${dlq}`);
    } else {
      const moved = await bus.replayDeadLetters(command.queue, command.limit);
      console.error(
        `${moved} dead letter(s) replayed from ${dlq} onto ${namespace}${QUEUES[command.queue].name}`,
      );
    }
    return 0;
  } finally {
    await bus.close();
  }
}

process.exitCode = await main();
