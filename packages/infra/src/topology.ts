import { randomBytes } from 'node:crypto';
import { absentQueues, type BusParticipant, type Deployment } from '@payments/contracts';

/** Every service connects to the broker, so the services are the bus's participants. */
export type ServiceName = BusParticipant;

/**
 * Start order: what others depend on first (identity: every service that checks tokens follows its revocations),
 * the gateway last.
 */
export const SERVICE_NAMES: readonly ServiceName[] = [
  'identity',
  'currency',
  'ledger',
  'webhook-ingest',
  'provider-sandbox',
  'webhook-delivery',
  'gateway',
];

/** The services a deployment runs: all but the consumers of the optional queues it does not have (the sandbox). */
export function deployedServices(deployment: Deployment): ServiceName[] {
  const absent: readonly string[] = absentQueues(deployment);
  return SERVICE_NAMES.filter((service) => !absent.includes(service));
}

const DIRECTORIES: Record<ServiceName, string> = {
  identity: 'services/identity',
  ledger: 'services/ledger',
  currency: 'services/currency',
  'webhook-ingest': 'services/webhook-ingest',
  'provider-sandbox': 'services/provider-sandbox',
  'webhook-delivery': 'services/webhook-delivery',
  gateway: 'gateway',
};

/** Services with a database of their own, named payments_<service> on the chosen server (and their role's name). */
export const DATABASES: Partial<Record<ServiceName, string>> = {
  identity: 'payments_identity',
  ledger: 'payments_ledger',
  currency: 'payments_currency',
  'webhook-ingest': 'payments_webhook_ingest',
  'webhook-delivery': 'payments_webhook_delivery',
};

/** A login of a service's own on PostgreSQL or RabbitMQ, made by the provisioner (least privilege). */
export interface Credentials {
  username: string;
  password: string;
}

/**
 * Per service; a service without one logs in with the credentials of `postgresUrl` / `amqpUrl`. `database` is the
 * runtime role the service connects as (DATABASE_URL), `databaseOwner` the role its migrations run as
 * (MIGRATION_DATABASE_URL), which owns the database.
 */
export type SystemLogins = Partial<
  Record<ServiceName, { database?: Credentials; databaseOwner?: Credentials; broker?: Credentials }>
>;

/** The name of a database's runtime role: its owner's (the database's), with `_runtime`. */
export const runtimeRoleOf = (database: string) => `${database}_runtime`;

export interface SystemSettings {
  /** A PostgreSQL server URL; each service gets its own database on it. */
  postgresUrl: string;
  amqpUrl: string;
  amqpNamespace?: string;
  /** Appended to every database name, so a test run never touches another's data. */
  databaseSuffix?: string;
  ports: Record<ServiceName, number>;
  host?: string;
  dataDir: string;
  nodeEnv?: 'development' | 'test' | 'production';
  logLevel?: string;
  webhookSecret?: string;
  /** SANDBOX_API_KEY for the sandbox's Stripe-compatible API; unset, its public development key. */
  sandboxApiKey?: string;
  /**
   * The ledger asks the provider sandbox for each payment (PROVIDER=stripe against its API, with sandboxApiKey), and
   * webhook-ingest takes its events as Stripe's (PROVIDER=stripe too).
   */
  paysThroughSandbox?: boolean;
  /** SERVICE_TOKEN for every process; unset, services fall back to the public development value. */
  serviceToken?: string;
  logins?: SystemLogins;
  /** Extra variables for every service, then per service. */
  env?: Record<string, string>;
  serviceEnv?: Partial<Record<ServiceName, Record<string, string>>>;
}

export function defaultPorts(gatewayPort = 8080, servicesBase = 3000): Record<ServiceName, number> {
  return {
    gateway: gatewayPort,
    identity: servicesBase + 1,
    ledger: servicesBase + 2,
    currency: servicesBase + 3,
    'webhook-ingest': servicesBase + 4,
    'provider-sandbox': servicesBase + 5,
    'webhook-delivery': servicesBase + 6,
  };
}

export function serviceDirectory(service: ServiceName): string {
  return DIRECTORIES[service];
}

export function withCredentials(serverUrl: string, credentials?: Credentials): string {
  if (!credentials) return serverUrl;
  const url = new URL(serverUrl);
  url.username = encodeURIComponent(credentials.username);
  url.password = encodeURIComponent(credentials.password);
  return url.toString();
}

export function databaseUrl(
  serverUrl: string,
  service: ServiceName,
  suffix = '',
  credentials?: Credentials,
): string | undefined {
  const name = DATABASES[service];
  if (!name) return undefined;
  const url = new URL(withCredentials(serverUrl, credentials));
  url.pathname = `/${name}${suffix}`;
  return url.toString();
}

/** The environment each service reads (see each service's config.ts), derived from one set of settings. */
export function serviceEnvironment(service: ServiceName, settings: SystemSettings): Record<string, string> {
  const host = settings.host ?? '127.0.0.1';
  const url = (name: ServiceName) => `http://${host}:${settings.ports[name]}`;
  const env: Record<string, string> = {
    NODE_ENV: settings.nodeEnv ?? 'development',
    LOG_LEVEL: settings.logLevel ?? 'info',
    HOST: host,
    PORT: String(settings.ports[service]),
    // A cluster's nodes (comma-separated), each with the service's own login.
    AMQP_URL: settings.amqpUrl
      .split(',')
      .map((node) => withCredentials(node.trim(), settings.logins?.[service]?.broker))
      .join(','),
    AMQP_NAMESPACE: settings.amqpNamespace ?? '',
    IDENTITY_URL: url('identity'),
    LEDGER_URL: url('ledger'),
    CURRENCY_URL: url('currency'),
    WEBHOOK_INGEST_URL: url('webhook-ingest'),
    WEBHOOK_DELIVERY_URL: url('webhook-delivery'),
    DATA_DIR: settings.dataDir,
    ...(settings.webhookSecret
      ? { WEBHOOK_SECRETS: settings.webhookSecret, SANDBOX_WEBHOOK_SECRET: settings.webhookSecret }
      : {}),
    ...(settings.serviceToken ? { SERVICE_TOKEN: settings.serviceToken } : {}),
    ...(settings.sandboxApiKey ? { SANDBOX_API_KEY: settings.sandboxApiKey } : {}),
  };
  const database = databaseUrl(
    settings.postgresUrl,
    service,
    settings.databaseSuffix,
    settings.logins?.[service]?.database,
  );
  if (database) env.DATABASE_URL = database;
  const owner = settings.logins?.[service]?.databaseOwner;
  if (database && owner)
    env.MIGRATION_DATABASE_URL = databaseUrl(
      settings.postgresUrl,
      service,
      settings.databaseSuffix,
      owner,
    ) as string;
  if (service === 'ledger' && settings.paysThroughSandbox) {
    if (!settings.sandboxApiKey)
      throw new Error('paysThroughSandbox needs the sandboxApiKey to call it with');
    Object.assign(env, {
      PROVIDER: 'stripe',
      STRIPE_API_URL: url('provider-sandbox'),
      STRIPE_SECRET_KEY: settings.sandboxApiKey,
    });
  }
  if (service === 'webhook-ingest' && settings.paysThroughSandbox) env.PROVIDER = 'stripe';
  // The payment page (ADR 0128): the ledger links to it at the gateway's address, and with the sandbox the page
  // confirms at the sandbox's own, both as a browser on this machine reaches them.
  const browserHost = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host;
  if (service === 'ledger') env.PUBLIC_URL = `http://${browserHost}:${settings.ports.gateway}`;
  if (service === 'gateway') {
    env.PAYMENT_PAGE_PROVIDER = settings.paysThroughSandbox ? 'sandbox' : 'none';
    if (settings.paysThroughSandbox)
      env.PAYMENT_PAGE_SANDBOX_URL = `http://${browserHost}:${settings.ports['provider-sandbox']}`;
  }
  return { ...env, ...settings.env, ...settings.serviceEnv?.[service] };
}

export function randomSuffix(): string {
  return `_${randomBytes(4).toString('hex')}`;
}
