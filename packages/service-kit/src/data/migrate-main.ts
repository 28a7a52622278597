import { Type } from '@sinclair/typebox';
import { CommonConfig, DatabaseConfig, loadConfig } from '../config.js';
import { createLogger } from '../logger.js';
import { migrateDatabase, type Migration, type RuntimePrivileges } from './database.js';

/**
 * A service's `migrate` entry point (`node dist/migrate.js`): as the owner role (MIGRATION_DATABASE_URL), brings
 * the schema up to date and grants the runtime role (DATABASE_URL's) its privileges, then exits. Deployments run it
 * before the service (an init container, a one-shot), so the running service never holds the owner's credential.
 */
export function runMigrations(
  service: string,
  database: string,
  schema: { migrations: Migration[]; privileges: RuntimePrivileges },
): void {
  const config = loadConfig(
    Type.Object({ LOG_LEVEL: CommonConfig.LOG_LEVEL, ...DatabaseConfig(database, service) }),
  );
  const logger = createLogger(`${service}-migrate`, config.LOG_LEVEL);
  if (!config.MIGRATION_DATABASE_URL) {
    logger.fatal('MIGRATION_DATABASE_URL is required: the owner role the migrations run as');
    process.exit(2);
  }
  migrateDatabase({
    migrationUrl: config.MIGRATION_DATABASE_URL,
    url: config.DATABASE_URL,
    applicationName: config.DATABASE_APPLICATION_NAME,
    ...schema,
    logger,
  }).then(
    () => {
      logger.info('the schema is up to date and the runtime role has its privileges');
      process.exit(0);
    },
    (error: unknown) => {
      logger.fatal({ err: error }, 'migrating failed');
      process.exit(1);
    },
  );
}
