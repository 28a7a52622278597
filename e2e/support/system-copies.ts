import { startProcessSystem, type ProcessSystem, type ServiceName } from '@payments/infra';
import { freePort, testRuntime, type TestSystem } from '@payments/testkit';

export function portsOf(system: TestSystem): Record<ServiceName, number> {
  return Object.fromEntries(
    Object.entries(system.urls).map(([name, url]) => [name, Number(new URL(url).port)]),
  ) as Record<ServiceName, number>;
}

/**
 * Another process of `service` joining a running test system: same databases, same queues. On a port of its
 * own by default, or on the service's own port to stand in for a killed one (the gateway then reaches it).
 */
export async function startCopy(
  system: TestSystem,
  service: ServiceName,
  options: { port?: number; env?: Record<string, string> } = {},
): Promise<ProcessSystem> {
  const env = { ...system.environment(service), ...options.env };
  const port = options.port ?? (await freePort());
  return startProcessSystem({
    // The copy's DATABASE_URL and AMQP_URL come from `env`, which overrides whatever these would give.
    postgresUrl: 'postgres://unused',
    amqpUrl: env.AMQP_URL as string,
    ports: { ...portsOf(system), [service]: port },
    dataDir: env.DATA_DIR as string,
    services: [service],
    runtime: testRuntime(),
    serviceEnv: { [service]: { ...env, PORT: String(port) } },
  });
}
