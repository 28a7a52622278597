import { randomBytes } from 'node:crypto';
import {
  dropDatabasesAndRoles,
  provisionDatabases,
  runtimeRoleOf,
  withCredentials,
  withPgClient,
} from '@payments/infra';
import { findInfrastructure } from './infrastructure.js';

export interface TestDatabase {
  /** The superuser's URL of the database: for the test's own reads and faults. */
  url: string;
  name: string;
  /** With `roles`: the service's runtime role (DATABASE_URL) and owner role (MIGRATION_DATABASE_URL), as deployed. */
  roles?: { runtimeUrl: string; ownerUrl: string };
  drop(): Promise<void>;
}

/**
 * A fresh, uniquely named database URL for one test run; the service creates and migrates it on start. With
 * `roles`, the database is provisioned as a deployment's is: an owner role and a runtime role that owns nothing.
 */
export async function createTestDatabase(
  prefix = 'test',
  options: { roles?: boolean } = {},
): Promise<TestDatabase> {
  const { postgresUrl } = await findInfrastructure();
  const name = `payments_${prefix.replace(/[^a-z0-9_]/g, '_')}_${randomBytes(4).toString('hex')}`;
  const url = new URL(postgresUrl);
  url.pathname = `/${name}`;
  if (!options.roles) return { url: url.toString(), name, drop: () => dropDatabase(postgresUrl, name) };
  const owner = { username: name, password: randomBytes(12).toString('base64url') };
  const runtime = { username: runtimeRoleOf(name), password: randomBytes(12).toString('base64url') };
  await provisionDatabases(postgresUrl, [{ database: name, password: owner.password, runtime }]);
  return {
    url: url.toString(),
    name,
    roles: {
      runtimeUrl: withCredentials(url.toString(), runtime),
      ownerUrl: withCredentials(url.toString(), owner),
    },
    drop: () => dropDatabasesAndRoles(postgresUrl, [name]),
  };
}

async function dropDatabase(serverUrl: string, name: string): Promise<void> {
  await withPgClient(serverUrl, (client) => client.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`));
}
