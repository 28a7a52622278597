import { randomBytes } from 'node:crypto';
import { absentQueues, QUEUES, type Deployment } from '@payments/contracts';
import { declareBrokerTopology, openBrokerAdmin, type TopologyChanges } from './broker-admin.js';
import { brokerUsername } from './broker-permissions.js';
import { dropDatabasesAndRoles, provisionDatabases } from './database-roles.js';
import {
  DATABASES,
  deployedServices,
  SERVICE_NAMES,
  type ServiceName,
  runtimeRoleOf,
  type SystemLogins,
} from './topology.js';

/** What the provisioner works with: administrative access to both servers. */
export interface ProvisionTarget {
  /** A superuser's URL on the PostgreSQL server. */
  postgresUrl: string;
  /** An administrative RabbitMQ user's AMQP URL. */
  amqpUrl: string;
  /** The RabbitMQ management API, when it is not on the AMQP host at port 15672. */
  managementUrl?: string;
  namespace?: string;
  databaseSuffix?: string;
}

export const newPassword = () => randomBytes(18).toString('base64url');

/** `webhook-ingest` → `WEBHOOK_INGEST`: the prefix of the service's password variables. */
export const passwordVariablePrefix = (service: ServiceName) => service.toUpperCase().replace(/-/g, '_');

/**
 * A login for each service the deployment runs (the sandbox only where it is deployed): a database role named like
 * its database (for the services that have one) and a broker user named like the service, under the run's suffix
 * and namespace; passwords from `passwordOf`, or new.
 */
export function planLogins(
  target: Pick<ProvisionTarget, 'namespace' | 'databaseSuffix'>,
  include: { database: boolean; broker: boolean; deployment: Deployment },
  passwordOf: (service: ServiceName, kind: 'database' | 'databaseOwner' | 'broker') => string = () =>
    newPassword(),
): SystemLogins {
  const logins: SystemLogins = {};
  for (const service of deployedServices(include.deployment)) {
    const database = DATABASES[service];
    logins[service] = {
      ...(include.database && database
        ? {
            database: {
              username: runtimeRoleOf(database + (target.databaseSuffix ?? '')),
              password: passwordOf(service, 'database'),
            },
            databaseOwner: {
              username: database + (target.databaseSuffix ?? ''),
              password: passwordOf(service, 'databaseOwner'),
            },
          }
        : {}),
      ...(include.broker
        ? {
            broker: {
              username: brokerUsername(service, target.namespace),
              password: passwordOf(service, 'broker'),
            },
          }
        : {}),
    };
  }
  return logins;
}

const databaseLogins = (logins: SystemLogins) =>
  SERVICE_NAMES.flatMap((service) => {
    const { databaseOwner: owner, database: runtime } = logins[service] ?? {};
    return owner ? [{ database: owner.username, password: owner.password, runtime }] : [];
  });

const brokerUsers = (logins: SystemLogins) =>
  SERVICE_NAMES.flatMap((service) => {
    const login = logins[service]?.broker;
    return login ? [{ participant: service, username: login.username, password: login.password }] : [];
  });

/**
 * Makes the servers ready for services that log in with their own, least-privileged logins: each database
 * role owning its database; with broker users, the deployment's broker topology declared and each user with
 * exactly its rights. Where the sandbox is not deployed, a queue and user an earlier deployment left it are removed
 * (what the answer says). Idempotent: passwords and rights are set again on every run.
 */
export async function provisionLogins(
  target: ProvisionTarget,
  logins: SystemLogins,
  deployment: Deployment,
): Promise<TopologyChanges | undefined> {
  const databases = databaseLogins(logins);
  if (databases.length > 0) await provisionDatabases(target.postgresUrl, databases);
  const users = brokerUsers(logins);
  // Services that share an administrative broker user declare the topology themselves.
  if (users.length === 0) return undefined;
  const namespace = target.namespace ?? '';
  const changes = await declareBrokerTopology(target.amqpUrl, namespace, deployment);
  const admin = await openBrokerAdmin({ amqpUrl: target.amqpUrl, managementUrl: target.managementUrl });
  // The consumers of the queues removed lose their logins; one still reading a kept queue keeps it for now.
  const removed = absentQueues(deployment).filter(
    (key) => !changes.kept.some(({ queue }) => queue === namespace + QUEUES[key].name),
  );
  if (removed.length > 0) await admin.deleteUsers(removed.map((key) => brokerUsername(key, namespace)));
  await admin.putUsers(users, namespace);
  return changes;
}

/** Removes what provisionLogins made for a test run: broker users, then databases and roles. */
export async function removeLogins(target: ProvisionTarget, logins: SystemLogins): Promise<void> {
  const users = brokerUsers(logins);
  if (users.length > 0) {
    const admin = await openBrokerAdmin({ amqpUrl: target.amqpUrl, managementUrl: target.managementUrl });
    await admin.deleteUsers(users.map((user) => user.username));
  }
  const databases = databaseLogins(logins).map((login) => login.database);
  if (databases.length > 0) await dropDatabasesAndRoles(target.postgresUrl, databases);
}
