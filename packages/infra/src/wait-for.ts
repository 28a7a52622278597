import { brokerNodeUrls, connectToAnyNode, openBrokerAdmin } from './broker-admin.js';
import { withPgClient } from './pg-client.js';

/** What provisioning needs to answer before it starts: each checked until it does, or until the time is up. */
export interface Dependency {
  /** Named without credentials, e.g. `PostgreSQL at postgres:5432`. */
  name: string;
  /** Resolves once it answers; rejects with why it does not (yet). */
  check(): Promise<void>;
}

/**
 * Checks each dependency in turn, again every `intervalMs` while it does not answer, saying so on the first miss and
 * when it answers; throws naming the one that did not answer within `timeoutMs` in all, and its last error.
 */
export async function waitForDependencies(
  dependencies: Dependency[],
  options: { timeoutMs: number; intervalMs?: number; log?: (line: string) => void },
): Promise<void> {
  const started = Date.now();
  const deadline = started + options.timeoutMs;
  const log = options.log ?? (() => undefined);
  for (const { name, check } of dependencies) {
    for (let attempt = 1; ; attempt += 1) {
      try {
        await check();
        if (attempt > 1) log(`${name} answers, after ${((Date.now() - started) / 1000).toFixed(1)} s`);
        break;
      } catch (error) {
        const reason = error instanceof Error ? error.message : String(error);
        if (Date.now() >= deadline)
          throw new Error(
            `${name} did not answer within ${Math.round(options.timeoutMs / 1000)} s (last: ${reason})`,
            { cause: error },
          );
        if (attempt === 1) log(`waiting for ${name} (${reason})`);
        await new Promise((resolve) => setTimeout(resolve, options.intervalMs ?? 1_000));
      }
    }
  }
}

const hostOf = (url: string) => {
  const parsed = new URL(url);
  return `${parsed.hostname}:${parsed.port || (parsed.protocol.startsWith('postgres') ? 5432 : 5672)}`;
};

/** What `pnpm provision` needs: the PostgreSQL server, the broker, and a way to manage the broker's users. */
export function provisioningDependencies(target: {
  postgresUrl: string;
  amqpUrl: string;
  managementUrl?: string;
}): Dependency[] {
  return [
    {
      name: `PostgreSQL at ${hostOf(target.postgresUrl)}`,
      check: () => withPgClient(target.postgresUrl, async (client) => void (await client.query('SELECT 1'))),
    },
    {
      name: `RabbitMQ at ${brokerNodeUrls(target.amqpUrl).map(hostOf).join(' or ')}`,
      async check() {
        const connection = await connectToAnyNode(target.amqpUrl);
        await connection.close().catch(() => undefined);
      },
    },
    {
      // Up after the broker's AMQP port: a broker that answers AMQP may not serve its management API yet.
      name: `RabbitMQ's user management (${target.managementUrl ?? `the management API on ${new URL(brokerNodeUrls(target.amqpUrl)[0] as string).hostname}:15672, or rabbitmqctl`})`,
      check: async () => void (await openBrokerAdmin(target)),
    },
  ];
}
