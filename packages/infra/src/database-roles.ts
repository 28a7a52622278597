import { withPgClient } from './pg-client.js';
import { runtimeRoleOf } from './topology.js';

/**
 * A service's own PostgreSQL roles: the owner, which owns its database (its migrations run as it), and the runtime
 * role the service connects as, which owns nothing (the owner grants it row privileges, table by table).
 */
export interface DatabaseLogin {
  /** The database, and the role that owns it (same name). */
  database: string;
  /** Absent: the role exists but cannot log in with a password until one is set. */
  password?: string;
  /** The runtime role; absent, the service connects as the owner (one role). */
  runtime?: { username: string; password?: string };
}

/** Attributes of both roles: a login that may create no database or role and bypasses nothing. */
const ROLE_ATTRIBUTES = 'LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOREPLICATION NOBYPASSRLS';

const onDatabase = (serverUrl: string, database: string) => {
  const url = new URL(serverUrl);
  url.pathname = `/${database}`;
  return url.toString();
};

/**
 * Hands every table, view, sequence and function of the public schema to the owner, for a database that an
 * earlier version created as the superuser. A sequence that belongs to a table moves with its table.
 */
const ADOPT_OBJECTS = `
DO $$
DECLARE
  owner text := current_setting('payments.owner');
  item record;
BEGIN
  FOR item IN
    SELECT c.oid, c.relkind FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
    WHERE n.nspname = 'public' AND c.relkind IN ('r', 'p', 'v', 'm', 'S')
      AND pg_get_userbyid(c.relowner) <> owner
      AND NOT EXISTS (SELECT FROM pg_depend d WHERE d.objid = c.oid AND d.deptype IN ('a', 'i'))
  LOOP
    EXECUTE format('ALTER %s %s OWNER TO %I',
      CASE item.relkind WHEN 'S' THEN 'SEQUENCE' WHEN 'v' THEN 'VIEW' WHEN 'm' THEN 'MATERIALIZED VIEW' ELSE 'TABLE' END,
      item.oid::regclass, owner);
  END LOOP;
  FOR item IN
    SELECT p.oid FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
    WHERE n.nspname = 'public' AND pg_get_userbyid(p.proowner) <> owner
  LOOP
    EXECUTE format('ALTER ROUTINE %s OWNER TO %I', item.oid::regprocedure, owner);
  END LOOP;
END $$`;

/**
 * Creates (or brings back in line) each service's role: LOGIN, no superuser, may create no database or role,
 * with the given password, owning its database, which no other role may connect to. Needs a superuser;
 * idempotent, so `pnpm start` runs it every time.
 */
export async function provisionDatabases(serverUrl: string, logins: DatabaseLogin[]): Promise<void> {
  await withPgClient(serverUrl, async (client) => {
    const ensureRole = async (name: string, password: string | undefined, extra = '') => {
      const role = client.escapeIdentifier(name);
      const exists = await client.query('SELECT 1 FROM pg_roles WHERE rolname = $1', [name]);
      if (!exists.rowCount) await client.query(`CREATE ROLE ${role}`);
      await client.query(
        `ALTER ROLE ${role} WITH ${ROLE_ATTRIBUTES}${extra} ` +
          `PASSWORD ${password === undefined ? 'NULL' : client.escapeLiteral(password)}`,
      );
    };
    for (const { database, password, runtime } of logins) {
      const role = client.escapeIdentifier(database);
      await ensureRole(database, password);
      const present = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [database]);
      if (!present.rowCount) await client.query(`CREATE DATABASE ${role} OWNER ${role}`);
      else await client.query(`ALTER DATABASE ${role} OWNER TO ${role}`);
      await client.query(`REVOKE ALL ON DATABASE ${role} FROM PUBLIC`);
      if (runtime) {
        // NOINHERIT: were it ever made a member of a role, it would still have only what is granted to it.
        await ensureRole(runtime.username, runtime.password, ' NOINHERIT');
        const name = client.escapeIdentifier(runtime.username);
        // Connect, and nothing more: its row privileges come from the owner, after the migrations.
        await client.query(`GRANT CONNECT ON DATABASE ${role} TO ${name}`);
      }
    }
  });
  for (const { database } of logins) {
    await withPgClient(onDatabase(serverUrl, database), async (client) => {
      // Before PostgreSQL 15 every role may create in the public schema; no role but the owner may here.
      await client.query('REVOKE CREATE ON SCHEMA public FROM PUBLIC');
      await client.query(`SELECT set_config('payments.owner', $1, false)`, [database]);
      await client.query(ADOPT_OBJECTS);
    });
  }
}

/** Whether the URL's role may create the services' roles and databases (the provisioner needs a superuser). */
export async function isSuperuser(serverUrl: string): Promise<boolean> {
  return withPgClient(serverUrl, async (client) => {
    const { rows } = await client.query<{ rolsuper: boolean }>(
      'SELECT rolsuper FROM pg_roles WHERE rolname = current_user',
    );
    return rows[0]?.rolsuper === true;
  });
}

/** Drops each database and then its roles (tests). */
export async function dropDatabasesAndRoles(serverUrl: string, databases: string[]): Promise<void> {
  await withPgClient(serverUrl, async (client) => {
    for (const database of databases) {
      const name = client.escapeIdentifier(database);
      await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await client.query(`DROP ROLE IF EXISTS ${client.escapeIdentifier(runtimeRoleOf(database))}`);
      await client.query(`DROP ROLE IF EXISTS ${name}`);
    }
  });
}

/**
 * The same provisioning as psql script (infra/postgres/init.sql), for the first start of an empty PostgreSQL
 * container or by hand. A role's password comes from its variable when set (psql 15+'s `\getenv`); without it
 * the role cannot log in until `pnpm provision` sets one.
 */
export function databaseInitSql(
  databases: { database: string; passwordVariable: string; runtimePasswordVariable: string }[],
): string {
  const lines = [
    '-- Generated by `pnpm infra:files` from packages/infra/src/database-roles.ts; edit that, not this file.',
    '-- Each service gets two roles: payments_<service> owns its database (its migrations run as it), and',
    '-- payments_<service>_runtime, which the service connects as, owns nothing (its migrations grant it row',
    '-- privileges, table by table). Both LOGIN, no superuser, no CREATEDB, no CREATEROLE; no other role may',
    '-- connect to that database. Runs once on the first start of an empty PostgreSQL container',
    '-- (docker-entrypoint-initdb.d), or by hand as a superuser with psql 15 or newer:',
    '--   <SERVICE>_DATABASE_OWNER_PASSWORD=... <SERVICE>_DATABASE_PASSWORD=... \\',
    '--     psql -v ON_ERROR_STOP=1 -U postgres -f infra/postgres/init.sql',
    '-- A role whose password variable is unset cannot log in until `pnpm provision` sets its password.',
    '',
  ];
  const role = (name: string, variable: string, passwordVariable: string, extra = '') => [
    `\\set ${variable} ''`,
    `\\getenv ${variable} ${passwordVariable}`,
    `SELECT format('CREATE ROLE %I', '${name}')`,
    `WHERE NOT EXISTS (SELECT FROM pg_roles WHERE rolname = '${name}')\\gexec`,
    `ALTER ROLE ${name} WITH ${ROLE_ATTRIBUTES}${extra};`,
    `SELECT format('ALTER ROLE %I PASSWORD %L', '${name}', :'${variable}')`,
    `WHERE :'${variable}' <> ''\\gexec`,
  ];
  for (const { database, passwordVariable, runtimePasswordVariable } of databases) {
    const runtime = runtimeRoleOf(database);
    lines.push(
      ...role(database, `${database}_password`, passwordVariable),
      `SELECT format('CREATE DATABASE %I OWNER %I', '${database}', '${database}')`,
      `WHERE NOT EXISTS (SELECT FROM pg_database WHERE datname = '${database}')\\gexec`,
      `REVOKE ALL ON DATABASE ${database} FROM PUBLIC;`,
      ...role(runtime, `${runtime}_password`, runtimePasswordVariable, ' NOINHERIT'),
      `GRANT CONNECT ON DATABASE ${database} TO ${runtime};`,
      '',
    );
  }
  return lines.join('\n');
}
