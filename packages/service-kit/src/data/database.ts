import knexModule, { type Knex } from 'knex';
import pg from 'pg';
import type { Logger } from '../logger.js';
import { isTracing } from '../tracing.js';
import { traceQueries } from './query-tracing.js';

// knex ships CommonJS; under NodeNext its default export arrives as the module object.
const createKnex = knexModule as unknown as typeof knexModule.knex;

export type { Knex };

export interface Migration {
  name: string;
  up(knex: Knex): Promise<void>;
  down(knex: Knex): Promise<void>;
}

/** One step of a migration: SQL sent as written, or a function for what the SQL is made by (a shared trigger). */
export type MigrationStep = string | ((knex: Knex) => Promise<void>);

/**
 * A migration's `up` that takes its steps in order, each SQL statement sent to the database as written: a
 * migration reads as its SQL, as an `up.sql` would.
 */
export function sqlSteps(...steps: MigrationStep[]): (knex: Knex) => Promise<void> {
  return async (knex) => {
    for (const step of steps) {
      if (typeof step === 'string') await knex.raw(step);
      else await step(knex);
    }
  };
}

/** What a service's runtime role may do to the rows of one of its tables. */
export type RowPrivilege = 'SELECT' | 'INSERT' | 'UPDATE' | 'DELETE';

/**
 * The runtime role's rights, table by table: only the DML the service's code runs (a `SELECT … FOR UPDATE` needs
 * UPDATE too). A table left out is out of its reach. The role owns nothing, so it can alter, disable triggers on,
 * truncate or drop nothing.
 */
export type RuntimePrivileges = Readonly<Record<string, readonly RowPrivilege[]>>;

export interface DatabaseOptions {
  /** The runtime role's URL: the service's pool. */
  url: string;
  /**
   * The owner role's URL: migrations and the runtime role's grants run as it first. Unset: the schema must be
   * current already (migrated apart), or the runtime role is the owner and migrates it itself (one role).
   */
  migrationUrl?: string;
  migrations: Migration[];
  /** What the runtime role may do; granted by the owner after migrating, when the two roles differ. */
  privileges?: RuntimePrivileges;
  logger: Logger;
  /** The runtime pool's bounds; what is left out keeps DEFAULT_POOL's value. */
  pool?: Partial<PoolSettings>;
  /** Refuse to run on a connection that may change the schema (a superuser, or an owner of a table): production. */
  leastPrivilege?: boolean;
}

/** How a pool is bounded: DatabaseConfig's DATABASE_POOL_* and timeouts. */
export interface PoolSettings {
  max: number;
  /** How long a query waits for a free connection. */
  acquireTimeoutMs: number;
  /** How long opening one connection may take. */
  connectTimeoutMs: number;
  /** PostgreSQL cancels a statement running longer (SQLSTATE 57014); unset: never, as for migrations. */
  statementTimeoutMs?: number;
  /** What `pg_stat_activity` shows as the connection's `application_name`. */
  applicationName?: string;
}

/** The pool as it was before it was configurable: 10 connections, a query waits 10 s for one. */
export const DEFAULT_POOL: PoolSettings = { max: 10, acquireTimeoutMs: 10_000, connectTimeoutMs: 10_000 };

/** Three times the gateway's upstream timeout: a request given up on frees its connection soon after. */
export const DEFAULT_STATEMENT_TIMEOUT_MS = 30_000;

const DUPLICATE_DATABASE = '42P04';
const UNIQUE_VIOLATION = '23505';
const UNDEFINED_DATABASE = '3D000';
const INSUFFICIENT_PRIVILEGE = '42501';

const codeOf = (error: unknown) => (error as { code?: string }).code;

/**
 * Creates the service's database when it does not exist yet; safe when several processes race to do it.
 * A deployment gives each service a role that owns its database and may create none (the provisioner made it),
 * so an existing database is found by connecting to it, without touching the maintenance database.
 */
export async function ensureDatabase(
  url: string,
  logger: Logger,
  connectTimeoutMs = DEFAULT_POOL.connectTimeoutMs,
): Promise<void> {
  const target = new URL(url);
  const name = decodeURIComponent(target.pathname.replace(/^\//, ''));
  if (!/^[a-z_][a-z0-9_]{0,62}$/.test(name))
    throw new Error(`Unsupported database name in DATABASE_URL: ${name}`);
  const probe = new pg.Client({ connectionString: url, connectionTimeoutMillis: connectTimeoutMs });
  try {
    await probe.connect();
    return;
  } catch (error) {
    if (codeOf(error) !== UNDEFINED_DATABASE) throw error;
  } finally {
    await probe.end().catch(() => undefined);
  }
  const admin = new URL(url);
  admin.pathname = '/postgres';
  const client = new pg.Client({
    connectionString: admin.toString(),
    connectionTimeoutMillis: connectTimeoutMs,
  });
  await client.connect();
  try {
    await client.query(`CREATE DATABASE "${name}"`);
    logger.info({ database: name }, 'created database');
  } catch (error) {
    const code = codeOf(error);
    if (code === INSUFFICIENT_PRIVILEGE) {
      throw new Error(
        `database ${name} does not exist and the role in DATABASE_URL may not create it; ` +
          'provision it first (pnpm provision, infra/postgres/init.sql)',
        { cause: error },
      );
    }
    if (code !== DUPLICATE_DATABASE && code !== UNIQUE_VIOLATION) throw error;
  } finally {
    await client.end();
  }
}

const migrationSource = (migrations: Migration[]) => ({
  migrationSource: {
    getMigrations: async () => migrations,
    getMigrationName: (migration: Migration) => migration.name,
    getMigration: async (migration: Migration) => migration,
  },
});

const openPool = (url: string, settings: PoolSettings, logger: Logger) =>
  createKnex({
    client: 'pg',
    // knex's own messages (a connection that failed, an acquire that timed out) go to the service's log as JSON,
    // not to stdout as coloured text.
    log: {
      warn: (message: string) => logger.warn({ knex: message }, 'database pool'),
      error: (message: string) => logger.error({ knex: message }, 'database pool'),
      deprecate: (message: string) => logger.warn({ knex: message }, 'database pool'),
      debug: () => undefined,
    },
    connection: {
      connectionString: url,
      connectionTimeoutMillis: settings.connectTimeoutMs,
      // Sent in the startup packet, so they hold from the connection's first statement.
      statement_timeout: settings.statementTimeoutMs,
      application_name: settings.applicationName,
    },
    // tarn looks for idle connections to close every reapIntervalMillis (1 s by default) for as long as the pool
    // holds one, which an idle service's polls keep alive: 10 s wakes it a tenth as often, and a connection idle
    // for 30 s is then closed within 40 s instead of 31.
    pool: { min: 0, max: settings.max, idleTimeoutMillis: 30_000, reapIntervalMillis: 10_000 },
    acquireConnectionTimeout: settings.acquireTimeoutMs,
  });

/** Migrations' connections: `<service>-migrate`, within PostgreSQL's 63 characters. */
const migrationName = (applicationName?: string) =>
  applicationName && `${applicationName.slice(0, 55)}-migrate`;

/** The pool migrations run on: one connection, and no statement timeout, since a migration may rewrite a table. */
const openMigrationPool = (url: string, logger: Logger, applicationName?: string) =>
  openPool(url, { ...DEFAULT_POOL, max: 1, applicationName: migrationName(applicationName) }, logger);

/** The role a PostgreSQL URL logs in as; null when it names none (the operating system user). */
const roleOf = (url: string) => {
  const username = new URL(url).username;
  return username ? decodeURIComponent(username) : null;
};

/**
 * Gives the runtime role exactly `privileges` on the tables, and nothing on any other (what an earlier version
 * granted is revoked first), in one transaction, so the running service never sees it without them.
 */
async function grantRuntimePrivileges(owner: Knex, role: string, privileges: RuntimePrivileges) {
  await owner.transaction(async (trx) => {
    await trx.raw('REVOKE ALL ON ALL TABLES IN SCHEMA public FROM ??', [role]);
    await trx.raw('REVOKE ALL ON ALL SEQUENCES IN SCHEMA public FROM ??', [role]);
    await trx.raw('GRANT USAGE ON SCHEMA public TO ??', [role]);
    // Its start reads which migrations ran, to refuse a schema that is behind.
    await trx.raw('GRANT SELECT ON knex_migrations TO ??', [role]);
    for (const [table, rights] of Object.entries(privileges)) {
      if (rights.length === 0) continue;
      await trx.raw(`GRANT ${rights.join(', ')} ON ?? TO ??`, [table, role]);
    }
    // Inserting into a table with a bigserial key draws from its sequence.
    await trx.raw('GRANT USAGE ON ALL SEQUENCES IN SCHEMA public TO ??', [role]);
  });
}

export interface MigrationOptions {
  /** The owner role's URL. */
  migrationUrl: string;
  /** The runtime role's URL (only its role name is used): granted `privileges` after migrating. */
  url: string;
  migrations: Migration[];
  privileges?: RuntimePrivileges;
  logger: Logger;
  /** The service's application_name; its migration connections are named `<it>-migrate`. */
  applicationName?: string;
}

/**
 * As the owner: creates the database if the owner may and it is missing, brings the schema up to date and grants
 * the runtime role its privileges, one run at a time per database (an advisory lock), so concurrent starts are safe.
 */
export async function migrateDatabase(options: MigrationOptions): Promise<void> {
  await ensureDatabase(options.migrationUrl, options.logger);
  // One run at a time per database, from the first statement: knex's own lock lives in a table that two first
  // runs would both try to create.
  const lock = new pg.Client({
    connectionString: options.migrationUrl,
    connectionTimeoutMillis: DEFAULT_POOL.connectTimeoutMs,
    application_name: migrationName(options.applicationName),
  });
  await lock.connect();
  const owner = openMigrationPool(options.migrationUrl, options.logger, options.applicationName);
  try {
    await lock.query('SELECT pg_advisory_lock(hashtextextended($1, 0))', ['payments:migrate']);
    await owner.migrate.latest(migrationSource(options.migrations));
    const runtime = roleOf(options.url);
    if (runtime && runtime !== roleOf(options.migrationUrl))
      await grantRuntimePrivileges(owner, runtime, options.privileges ?? {});
  } finally {
    await owner.destroy();
    // Ending the session releases its lock.
    await lock.end();
  }
}

/** Migrations the database has not run yet; null when it has no migration table at all. */
async function pendingMigrations(knex: Knex, migrations: Migration[]): Promise<string[] | null> {
  const present = await knex.raw<{ rows: { found: string | null }[] }>(
    "SELECT to_regclass('public.knex_migrations')::text AS found",
  );
  if (!present.rows[0]?.found) return null;
  const ran = new Set(
    (await knex('knex_migrations').select('name')).map((row: { name: string }) => row.name),
  );
  return migrations.map((migration) => migration.name).filter((name) => !ran.has(name));
}

/** Refuses a connection that could change the schema: a superuser, or a role that owns a table. */
async function refuseSchemaRights(knex: Knex) {
  const { rows } = await knex.raw<{ rows: { rolsuper: boolean; owned: string }[] }>(
    `SELECT r.rolsuper,
            (SELECT count(*) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
             WHERE n.nspname = 'public' AND pg_has_role(current_user, c.relowner, 'USAGE')) AS owned
     FROM pg_roles r WHERE r.rolname = current_user`,
  );
  const [found] = rows;
  if (found && (found.rolsuper || Number(found.owned) > 0))
    throw new Error(
      'DATABASE_URL logs in as a role that may change the schema (a superuser, or an owner of its tables); ' +
        'in production the service connects as its runtime role and migrates with MIGRATION_DATABASE_URL ' +
        '(docs/security.md, "Database and broker logins")',
    );
}

/**
 * Opens the runtime pool on a schema that is up to date: migrated first as the owner (`migrationUrl`), or found
 * current, or, with one role for both, migrated by it.
 */
export async function openDatabase(options: DatabaseOptions): Promise<Knex> {
  const pool = { ...DEFAULT_POOL, ...options.pool };
  const { applicationName } = pool;
  if (options.migrationUrl)
    await migrateDatabase({ ...options, migrationUrl: options.migrationUrl, applicationName });
  else await ensureDatabase(options.url, options.logger, pool.connectTimeoutMs);
  const knex = openPool(options.url, pool, options.logger);
  if (isTracing()) traceQueries(knex);
  try {
    if (options.leastPrivilege) await refuseSchemaRights(knex);
    const pending = await pendingMigrations(knex, options.migrations);
    if (pending?.length === 0) return knex;
    if (!options.migrationUrl) {
      // One role for both: it migrates (development; in production refuseSchemaRights stopped it above).
      const migrator = openMigrationPool(options.url, options.logger, applicationName);
      await migrator.migrate
        .latest(migrationSource(options.migrations))
        .catch((error: unknown) => {
          if (codeOf(error) !== INSUFFICIENT_PRIVILEGE) throw error;
          throw new Error(
            "the schema is behind its migrations and DATABASE_URL's role may not migrate it: set " +
              "MIGRATION_DATABASE_URL to the owner role's, or run the service's `migrate` first",
            { cause: error },
          );
        })
        .finally(() => migrator.destroy());
      return knex;
    }
    throw new Error(`the schema is behind its migrations (${(pending ?? ['all']).join(', ')})`);
  } catch (error) {
    await knex.destroy();
    throw error;
  }
}

/** The database options a service's configuration gives (see DatabaseConfig). */
export function databaseOptions(
  config: DatabaseServiceSettings,
  rest: Pick<DatabaseOptions, 'migrations' | 'privileges' | 'logger'>,
): DatabaseOptions {
  return {
    url: config.DATABASE_URL,
    migrationUrl: config.MIGRATION_DATABASE_URL,
    leastPrivilege: config.NODE_ENV === 'production',
    pool: poolSettings(config),
    ...rest,
  };
}

/** What `databaseOptions` reads of a service's configuration (DatabaseConfig's variables and NODE_ENV). */
export interface DatabaseServiceSettings extends PoolVariables {
  DATABASE_URL: string;
  MIGRATION_DATABASE_URL?: string;
  NODE_ENV: string;
}

export interface PoolVariables {
  DATABASE_POOL_MAX: number;
  DATABASE_POOL_ACQUIRE_TIMEOUT_MS: number;
  DATABASE_CONNECT_TIMEOUT_MS: number;
  DATABASE_STATEMENT_TIMEOUT_MS: number;
  DATABASE_APPLICATION_NAME: string;
}

/** The pool DatabaseConfig's variables describe. */
export const poolSettings = (config: PoolVariables): PoolSettings => ({
  max: config.DATABASE_POOL_MAX,
  acquireTimeoutMs: config.DATABASE_POOL_ACQUIRE_TIMEOUT_MS,
  connectTimeoutMs: config.DATABASE_CONNECT_TIMEOUT_MS,
  statementTimeoutMs: config.DATABASE_STATEMENT_TIMEOUT_MS,
  applicationName: config.DATABASE_APPLICATION_NAME,
});

export async function isDatabaseUp(knex: Knex): Promise<boolean> {
  try {
    await knex.raw('SELECT 1');
    return true;
  } catch {
    return false;
  }
}
