import type { Deployment } from '@payments/contracts';
import { brokerDefinitions, defaultBrokerUsers } from './broker-permissions.js';
import { databaseInitSql } from './database-roles.js';
import { renderPrometheusRuleFromCheckout } from './monitoring-files.js';
import { passwordVariablePrefix } from './provisioning.js';
import { DATABASES, SERVICE_NAMES } from './topology.js';

/**
 * infra/rabbitmq/definitions*.json: a deployment's topology and every user and right it needs, without passwords;
 * without the sandbox (as deployed for real) and with it (development).
 */
export function renderBrokerDefinitions(deployment: Deployment): string {
  return `${JSON.stringify(brokerDefinitions(defaultBrokerUsers('', deployment), '', '/', deployment), null, 2)}\n`;
}

/** infra/postgres/init.sql: every service's role and database. */
export function renderDatabaseInitSql(): string {
  return databaseInitSql(
    SERVICE_NAMES.flatMap((service) => {
      const database = DATABASES[service];
      return database
        ? [
            {
              database,
              passwordVariable: `${passwordVariablePrefix(service)}_DATABASE_OWNER_PASSWORD`,
              runtimePasswordVariable: `${passwordVariablePrefix(service)}_DATABASE_PASSWORD`,
            },
          ]
        : [];
    }),
  );
}

export const INFRA_FILES = {
  'infra/rabbitmq/definitions.json': () => renderBrokerDefinitions({ sandbox: false }),
  'infra/rabbitmq/definitions-with-sandbox.json': () => renderBrokerDefinitions({ sandbox: true }),
  'infra/postgres/init.sql': renderDatabaseInitSql,
  'infra/k8s/prometheus-rules.yaml': renderPrometheusRuleFromCheckout,
} as const;
