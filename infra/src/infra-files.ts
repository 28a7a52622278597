import { brokerDefinitions, defaultBrokerUsers } from './broker-permissions.js';
import { databaseInitSql } from './database-roles.js';
import { passwordVariablePrefix } from './provisioning.js';
import { DATABASES, SERVICE_NAMES } from './topology.js';

/** infra/rabbitmq/definitions.json: the topology and every service's user and rights, without passwords. */
export function renderBrokerDefinitions(): string {
  return `${JSON.stringify(brokerDefinitions(defaultBrokerUsers()), null, 2)}\n`;
}

/** infra/postgres/init.sql: every service's role and database. */
export function renderDatabaseInitSql(): string {
  return databaseInitSql(
    SERVICE_NAMES.flatMap((service) => {
      const database = DATABASES[service];
      return database
        ? [{ database, passwordVariable: `${passwordVariablePrefix(service)}_DATABASE_PASSWORD` }]
        : [];
    }),
  );
}

export const INFRA_FILES = {
  'infra/rabbitmq/definitions.json': renderBrokerDefinitions,
  'infra/postgres/init.sql': renderDatabaseInitSql,
} as const;
