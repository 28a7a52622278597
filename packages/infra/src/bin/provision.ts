import {
  DATABASES,
  deployedServices,
  passwordVariablePrefix,
  planLogins,
  provisionLogins,
  provisioningDependencies,
  waitForDependencies,
  type ServiceName,
} from '../index.js';

// `pnpm provision`: as an administrator, gives every service its own PostgreSQL roles (an owner of its database,
// which its migrations run as, and a runtime role that owns nothing, which it connects as) and its own RabbitMQ
// user with exactly its rights, and declares the broker topology. Idempotent: run it on every
// deployment (compose runs it before the services); passwords and rights are set again each time.
//
//   DATABASE_URL             a superuser on the PostgreSQL server (its database is not used)
//   AMQP_URL                 a RabbitMQ administrator; AMQP_NAMESPACE as for the services
//   RABBITMQ_MANAGEMENT_URL  the management API (default: the AMQP host on 15672, then rabbitmqctl)
//   SANDBOX_DEPLOYED         true where the provider sandbox runs (development): its queue and user are made only
//                            then; otherwise (the default) a queue and user an earlier deployment left are removed
//   <SERVICE>_DATABASE_PASSWORD        IDENTITY, LEDGER, CURRENCY, WEBHOOK_INGEST, WEBHOOK_DELIVERY: runtime role
//   <SERVICE>_DATABASE_OWNER_PASSWORD  the same services: the owner role (migrations only)
//   <SERVICE>_AMQP_PASSWORD            the same and GATEWAY, and PROVIDER_SANDBOX with SANDBOX_DEPLOYED=true
//   PROVISION_WAIT_SECONDS   how long to wait for PostgreSQL, RabbitMQ and its management API to answer (120)
// Each service then connects as payments_<service>_runtime (database) and <service> (broker) with its password,
// and its migrations run as payments_<service>.

const env = process.env;
const SUFFIXES = {
  database: 'DATABASE_PASSWORD',
  databaseOwner: 'DATABASE_OWNER_PASSWORD',
  broker: 'AMQP_PASSWORD',
} as const;
const variable = (service: ServiceName, kind: keyof typeof SUFFIXES) =>
  `${passwordVariablePrefix(service)}_${SUFFIXES[kind]}`;

const sandboxSetting = env.SANDBOX_DEPLOYED || 'false';
if (!['true', 'false'].includes(sandboxSetting)) {
  console.error(
    `pnpm provision: SANDBOX_DEPLOYED must be true or false, not ${JSON.stringify(sandboxSetting)}`,
  );
  process.exit(1);
}
const deployment = { sandbox: sandboxSetting === 'true' };
const services = deployedServices(deployment);

const required = [
  ...['DATABASE_URL', 'AMQP_URL'],
  ...services.flatMap((service) => [
    ...(DATABASES[service] ? [variable(service, 'database'), variable(service, 'databaseOwner')] : []),
    variable(service, 'broker'),
  ]),
];
const missing = required.filter((name) => !env[name]);
if (missing.length > 0) {
  console.error(`pnpm provision: set ${missing.join(', ')}`);
  process.exit(1);
}

const waitSeconds = Number(env.PROVISION_WAIT_SECONDS || 120);
if (!Number.isInteger(waitSeconds) || waitSeconds < 0) {
  console.error('pnpm provision: PROVISION_WAIT_SECONDS must be a whole number of seconds');
  process.exit(1);
}

const target = {
  postgresUrl: env.DATABASE_URL as string,
  // A cluster's nodes (comma-separated): users, permissions and queues are the cluster's, made through one node.
  amqpUrl: env.AMQP_URL as string,
  managementUrl: env.RABBITMQ_MANAGEMENT_URL || undefined,
  namespace: env.AMQP_NAMESPACE ?? '',
};
const logins = planLogins(
  target,
  { database: true, broker: true, deployment },
  (service, kind) => env[variable(service, kind)] as string,
);
try {
  // Started beside them (a compose one-shot, a Kubernetes Job), it may come up first: it waits, bounded, and says so.
  await waitForDependencies(provisioningDependencies(target), {
    timeoutMs: waitSeconds * 1000,
    log: (line) => console.error(`pnpm provision: ${line}`),
  });
  const changes = await provisionLogins(target, logins, deployment);
  for (const { queue, messages } of changes?.removed ?? [])
    console.log(`removed ${queue} (no sandbox is deployed; ${messages} unanswerable request(s) dropped)`);
  for (const { queue, consumers } of changes?.kept ?? [])
    console.warn(`kept ${queue}: no sandbox is deployed, yet ${consumers} consumer(s) still read it`);
  for (const service of services) {
    const { database, databaseOwner, broker } = logins[service] ?? {};
    const roles = database ? `, database roles ${database.username} (owner ${databaseOwner?.username})` : '';
    console.log(`${service}: broker user ${broker?.username}${roles}`);
  }
} catch (error) {
  console.error(`pnpm provision failed: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
}
