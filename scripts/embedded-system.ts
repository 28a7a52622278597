import type { TObject } from '@sinclair/typebox';
import {
  createLogger,
  createMemoryBus,
  loadConfig,
  type EventBus,
  type Logger,
  type RunningService,
} from '@payments/service-kit';
import { CurrencyConfigSchema, startCurrency } from '@payments/currency';
import { IdentityConfigSchema, startIdentity } from '@payments/identity';
import { LedgerConfigSchema, startLedger } from '@payments/ledger';
import { startWebhookIngest, WebhookIngestConfigSchema } from '@payments/webhook-ingest';
import { startWebhookDelivery, WebhookDeliveryConfigSchema } from '@payments/webhook-delivery';
import { ProviderSandboxConfigSchema, startProviderSandbox } from '@payments/provider-sandbox';
import { GatewayConfigSchema, startGateway } from '@payments/gateway';
import { startEmbeddedPostgres } from './embedded-postgres.js';
import type { Deployment } from '@payments/contracts';
import {
  deployedServices,
  planLogins,
  provisionLogins,
  serviceEnvironment,
  type ServiceName,
  type SystemSettings,
} from '@payments/infra';

type Starter = (config: never, deps: { bus: EventBus; logger: Logger }) => Promise<RunningService>;

const STARTERS: Record<ServiceName, { schema: TObject; start: Starter }> = {
  currency: { schema: CurrencyConfigSchema, start: startCurrency as Starter },
  identity: { schema: IdentityConfigSchema, start: startIdentity as Starter },
  ledger: { schema: LedgerConfigSchema, start: startLedger as Starter },
  'webhook-ingest': { schema: WebhookIngestConfigSchema, start: startWebhookIngest as Starter },
  'provider-sandbox': { schema: ProviderSandboxConfigSchema, start: startProviderSandbox as Starter },
  'webhook-delivery': { schema: WebhookDeliveryConfigSchema, start: startWebhookDelivery as Starter },
  gateway: { schema: GatewayConfigSchema, start: startGateway as Starter },
};

export interface EmbeddedSystemOptions extends Omit<SystemSettings, 'postgresUrl' | 'amqpUrl'> {
  postgresPort: number;
  /** Without the sandbox it is not started, and the bus holds no queue for it. */
  deployment: Deployment;
  /** Aborted (Ctrl-C while starting): what has started is stopped and the start rejects with the reason. */
  signal?: AbortSignal;
}

export interface EmbeddedSystem {
  gatewayUrl: string;
  /** Where the cluster lives: `<dataDir>/postgres`, or as root a directory the postgres user can reach. */
  databaseDir: string;
  /** Every service started (no sandbox where it is not deployed). */
  urls: Partial<Record<ServiceName, string>>;
  stop(): Promise<void>;
}

/**
 * Embedded mode: one process, a real PostgreSQL from the embedded-postgres package with its data under
 * `<dataDir>/postgres`, and the in-memory bus. The services are the same code with the other adapters.
 */
export async function startEmbeddedSystem(options: EmbeddedSystemOptions): Promise<EmbeddedSystem> {
  const logger = createLogger('embedded', options.logLevel ?? 'info');
  const { signal, deployment, ...rest } = options;
  const postgres = await startEmbeddedPostgres(options.dataDir, options.postgresPort, logger, signal);
  const bus = createMemoryBus(logger.child({ component: 'bus' }), { deployment });
  // As deployed: each service's migrations run as the owner of its database, and it connects as a runtime role
  // that owns nothing (new passwords each start).
  const logins = planLogins({}, { database: true, broker: false, deployment });
  await provisionLogins({ postgresUrl: postgres.url, amqpUrl: 'amqp://in-memory' }, logins, deployment).catch(
    async (error: unknown) => {
      await postgres.stop();
      throw error;
    },
  );
  const settings: SystemSettings = {
    ...rest,
    postgresUrl: postgres.url,
    amqpUrl: 'amqp://in-memory',
    logins,
  };
  const started: RunningService[] = [];
  /** Services first, then the bus, the database last: each is stopped even when one before it fails to. */
  const stop = async () => {
    try {
      for (const service of [...started].reverse()) {
        await service
          .stop()
          .catch((error: unknown) => logger.error({ err: error }, `${service.name} did not stop cleanly`));
      }
      await bus
        .close()
        .catch((error: unknown) => logger.error({ err: error }, 'the bus did not close cleanly'));
    } finally {
      await postgres.stop();
    }
  };
  try {
    for (const name of deployedServices(deployment)) {
      signal?.throwIfAborted();
      const { schema, start } = STARTERS[name];
      const config = loadConfig(schema, { ...process.env, ...serviceEnvironment(name, settings) });
      started.push(
        await start(config as never, { bus, logger: createLogger(name, options.logLevel ?? 'info') }),
      );
    }
    signal?.throwIfAborted();
  } catch (error) {
    await stop();
    throw error;
  }
  const urls: Partial<Record<ServiceName, string>> = Object.fromEntries(
    started.map((service) => [service.name, service.url]),
  );
  return { gatewayUrl: urls.gateway as string, databaseDir: postgres.databaseDir, urls, stop };
}
