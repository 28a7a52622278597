import knexModule, { type Knex } from 'knex';
import pg from 'pg';
import type { Logger } from '../logger.js';

// knex ships CommonJS; under NodeNext its default export arrives as the module object.
const createKnex = knexModule as unknown as typeof knexModule.knex;

export type { Knex };

export interface Migration {
  name: string;
  up(knex: Knex): Promise<void>;
  down(knex: Knex): Promise<void>;
}

export interface DatabaseOptions {
  url: string;
  migrations: Migration[];
  logger: Logger;
  poolMax?: number;
}

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
export async function ensureDatabase(url: string, logger: Logger): Promise<void> {
  const target = new URL(url);
  const name = decodeURIComponent(target.pathname.replace(/^\//, ''));
  if (!/^[a-z_][a-z0-9_]{0,62}$/.test(name))
    throw new Error(`Unsupported database name in DATABASE_URL: ${name}`);
  const probe = new pg.Client({ connectionString: url });
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
  const client = new pg.Client({ connectionString: admin.toString() });
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

/** Opens the pool and brings the schema up to date. knex's migration lock keeps concurrent starts safe. */
export async function openDatabase(options: DatabaseOptions): Promise<Knex> {
  await ensureDatabase(options.url, options.logger);
  const knex = createKnex({
    client: 'pg',
    connection: options.url,
    // tarn looks for idle connections to close every reapIntervalMillis (1 s by default) for as long as the pool
    // holds one, which an idle service's polls keep alive: 10 s wakes it a tenth as often, and a connection idle
    // for 30 s is then closed within 40 s instead of 31.
    pool: { min: 0, max: options.poolMax ?? 10, idleTimeoutMillis: 30_000, reapIntervalMillis: 10_000 },
    acquireConnectionTimeout: 10_000,
  });
  const migrations = options.migrations;
  await knex.migrate.latest({
    migrationSource: {
      getMigrations: async () => migrations,
      getMigrationName: (migration: Migration) => migration.name,
      getMigration: async (migration: Migration) => migration,
    },
  });
  return knex;
}

export async function isDatabaseUp(knex: Knex): Promise<boolean> {
  try {
    await knex.raw('SELECT 1');
    return true;
  } catch {
    return false;
  }
}
