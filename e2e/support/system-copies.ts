import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { startProcessSystem, type ProcessSystem, type ServiceName } from '@payments/infra';
import { freePort, testRuntime, type TestSystem } from '@payments/testkit';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

export function portsOf(system: TestSystem): Record<ServiceName, number> {
  return Object.fromEntries(
    Object.entries(system.urls).map(([name, url]) => [name, Number(new URL(url).port)]),
  ) as Record<ServiceName, number>;
}

/**
 * Another process of `service` joining a running test system: same databases, same queues. On a port of its
 * own by default, or on the service's own port to stand in for a killed one (the gateway then reaches it).
 * `entry`: a script of the tests' own that starts the service instead (with a fault passed in), and its arguments.
 */
export async function startCopy(
  system: TestSystem,
  service: ServiceName,
  options: { port?: number; env?: Record<string, string>; entry?: { script: string; args: string[] } } = {},
): Promise<ProcessSystem> {
  const env = { ...system.environment(service), ...options.env };
  const port = options.port ?? (await freePort());
  const runtime = testRuntime();
  const { entry } = options;
  // Through tsx, resolved from here (never looked up on PATH); compiled, the packages it imports load from dist/.
  const command = entry && {
    args: [
      ...(runtime === 'sources' ? ['--conditions=development'] : []),
      '--import',
      createRequire(import.meta.url).resolve('tsx'),
      fileURLToPath(new URL(entry.script, import.meta.url)),
      ...entry.args,
    ],
    cwd: ROOT,
  };
  return startProcessSystem({
    // The copy's DATABASE_URL and AMQP_URL come from `env`, which overrides whatever these would give.
    postgresUrl: 'postgres://unused',
    amqpUrl: env.AMQP_URL as string,
    ports: { ...portsOf(system), [service]: port },
    dataDir: env.DATA_DIR as string,
    services: [service],
    runtime,
    ...(command ? { commands: { [service]: command } } : {}),
    serviceEnv: { [service]: { ...env, PORT: String(port) } },
  });
}
