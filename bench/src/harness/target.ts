import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { developmentSecretsPath, type DevelopmentSecrets } from '@payments/infra';
import { DEVELOPMENT_SERVICE_TOKEN, DEVELOPMENT_WEBHOOK_SECRET } from '@payments/service-kit';
import { findInfrastructure, startSystem, type TestSystem, type TestSystemOptions } from '@payments/testkit';

/** Where the system under test answers, and the databases behind it the bench may read and seed. */
export interface Target {
  gatewayUrl: string;
  ledgerUrl: string;
  webhookIngestUrl: string;
  /** The PostgreSQL server (maintenance database), for scratch databases. */
  postgresUrl: string;
  ledgerDatabaseUrl: string;
  webhookDatabaseUrl: string;
  webhookSecret: string;
  /** SERVICE_TOKEN, for the ledger's /internal/audit. */
  serviceToken: string;
  amqpUrl: string;
  /** The prefix of this system's exchanges and queues. */
  amqpNamespace: string;
  /** Each service's port, and the suffix of this system's database names, to find its processes. */
  ports: Record<string, number>;
  databaseSuffix: string;
  /** The processes, when the bench started them; null against a system someone else runs. */
  system: TestSystem | null;
  stop(): Promise<void>;
}

const LOOPBACK = /^https?:\/\/(127\.0\.0\.1|localhost|\[::1\])(:\d+)?(\/|$)/;

function loopbackOnly(name: string, url: string): string {
  if (!LOOPBACK.test(url))
    throw new Error(`${name} must point at 127.0.0.1 (got ${url}): the bench never leaves the machine`);
  return url;
}

const portsOf = (urls: Record<string, string>) =>
  Object.fromEntries(Object.entries(urls).map(([service, url]) => [service, Number(new URL(url).port)]));

const databaseNameOf = (url: string) => new URL(url).pathname.slice(1);

/** Starts every service as its own process with fresh databases and a private broker namespace. */
export async function startTarget(options: TestSystemOptions): Promise<Target> {
  const { postgresUrl, amqpUrl } = await findInfrastructure();
  const system = await startSystem(options);
  const ledgerEnv = system.environment('ledger');
  const webhookEnv = system.environment('webhook-ingest');
  return {
    gatewayUrl: system.gatewayUrl,
    ledgerUrl: system.urls.ledger,
    webhookIngestUrl: system.urls['webhook-ingest'],
    postgresUrl,
    ledgerDatabaseUrl: ledgerEnv.DATABASE_URL as string,
    webhookDatabaseUrl: webhookEnv.DATABASE_URL as string,
    webhookSecret: system.webhookSecret,
    serviceToken: system.serviceToken,
    // The bench publishes confirmations itself, which no service's own broker user may do.
    amqpUrl,
    amqpNamespace: ledgerEnv.AMQP_NAMESPACE ?? '',
    ports: portsOf(system.urls),
    databaseSuffix: databaseNameOf(ledgerEnv.DATABASE_URL as string).replace('payments_ledger', ''),
    system,
    stop: () => system.stop(),
  };
}

/** The secrets `pnpm start` generated under DATA_DIR (relative to the repository), when there are any. */
function launcherSecrets(env: NodeJS.ProcessEnv): Partial<DevelopmentSecrets> {
  const file = developmentSecretsPath(path.resolve(import.meta.dirname, '../../..', env.DATA_DIR ?? '.data'));
  return existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as DevelopmentSecrets) : {};
}

/**
 * A system already running (e.g. `pnpm start`), named by BENCH_GATEWAY_URL; the other addresses default to the
 * launcher's ports and databases and can be given with BENCH_LEDGER_URL, BENCH_WEBHOOK_URL, BENCH_POSTGRES_URL,
 * BENCH_LEDGER_DATABASE_URL, BENCH_WEBHOOK_DATABASE_URL, BENCH_WEBHOOK_SECRET, BENCH_SERVICE_TOKEN, BENCH_AMQP_URL
 * and BENCH_AMQP_NAMESPACE; the secrets default to the ones `pnpm start` keeps in DATA_DIR. Its provider sandbox
 * must be off for the deposit pipeline (it would confirm twice).
 */
export function attachTarget(env: NodeJS.ProcessEnv): Target {
  const generated = launcherSecrets(env);
  const gatewayUrl = loopbackOnly('BENCH_GATEWAY_URL', env.BENCH_GATEWAY_URL as string);
  const postgresUrl = env.BENCH_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
  const database = (name: string) => {
    const url = new URL(postgresUrl);
    url.pathname = `/${name}`;
    return url.toString();
  };
  return {
    gatewayUrl,
    ledgerUrl: loopbackOnly('BENCH_LEDGER_URL', env.BENCH_LEDGER_URL ?? 'http://127.0.0.1:3002'),
    webhookIngestUrl: loopbackOnly('BENCH_WEBHOOK_URL', env.BENCH_WEBHOOK_URL ?? 'http://127.0.0.1:3004'),
    postgresUrl,
    ledgerDatabaseUrl: env.BENCH_LEDGER_DATABASE_URL ?? database('payments_ledger'),
    webhookDatabaseUrl: env.BENCH_WEBHOOK_DATABASE_URL ?? database('payments_webhook_ingest'),
    webhookSecret: env.BENCH_WEBHOOK_SECRET ?? generated.webhookSecret ?? DEVELOPMENT_WEBHOOK_SECRET,
    serviceToken: env.BENCH_SERVICE_TOKEN ?? generated.serviceToken ?? DEVELOPMENT_SERVICE_TOKEN,
    amqpUrl: env.BENCH_AMQP_URL ?? 'amqp://guest:guest@127.0.0.1:5672',
    amqpNamespace: env.BENCH_AMQP_NAMESPACE ?? '',
    ports: {
      gateway: Number(new URL(gatewayUrl).port || 80),
      ledger: Number(new URL(env.BENCH_LEDGER_URL ?? 'http://127.0.0.1:3002').port),
      'webhook-ingest': Number(new URL(env.BENCH_WEBHOOK_URL ?? 'http://127.0.0.1:3004').port),
    },
    databaseSuffix: '',
    system: null,
    stop: async () => undefined,
  };
}
