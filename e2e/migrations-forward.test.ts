import { existsSync } from 'node:fs';
import { readdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { expect } from 'chai';
import * as prettier from 'prettier';
import { migrations as currencyMigrations, privileges as currencyPrivileges } from '@payments/currency';
import { migrations as identityMigrations, privileges as identityPrivileges } from '@payments/identity';
import { migrations as ledgerMigrations, privileges as ledgerPrivileges } from '@payments/ledger';
import {
  createLogger,
  migrateDatabase,
  openDatabase,
  type Knex,
  type Migration,
  type RuntimePrivileges,
} from '@payments/service-kit';
import { createTestDatabase, type TestDatabase } from '@payments/testkit';
import {
  migrations as deliveryMigrations,
  privileges as deliveryPrivileges,
} from '@payments/webhook-delivery';
import { migrations as ingestMigrations, privileges as ingestPrivileges } from '@payments/webhook-ingest';

// A migration that ran somewhere is history: knex knows it by name only, so a database made by an earlier version
// keeps what that version's SQL made. Each service's record holds, migration by migration, the statements its up
// and down ran when recorded (the first entries from the migrations as they stood at 0222b75, before they were one
// file each); the tests make a database from the record, migrate it forward with today's code, and pin the SQL.

const ROOT = path.resolve(import.meta.dirname, '..');
const RECORDS = path.join(ROOT, 'e2e/recorded-migrations');
/** Set to record migrations missing from a record (appended; a recorded entry is never rewritten). */
const RECORD_NEW = process.env.RECORD_NEW_MIGRATIONS === '1';

const SERVICES: Record<string, { migrations: Migration[]; privileges: RuntimePrivileges }> = {
  identity: { migrations: identityMigrations, privileges: identityPrivileges },
  ledger: { migrations: ledgerMigrations, privileges: ledgerPrivileges },
  currency: { migrations: currencyMigrations, privileges: currencyPrivileges },
  'webhook-ingest': { migrations: ingestMigrations, privileges: ingestPrivileges },
  'webhook-delivery': { migrations: deliveryMigrations, privileges: deliveryPrivileges },
};

/** One statement a migration ran: its SQL, with its bindings when it had any. */
type Statement = string | { sql: string; bindings: Knex.RawBinding[] };

interface RecordedMigration {
  name: string;
  up: Statement[];
  down: Statement[];
}

const logger = createLogger('migrations-forward-test', 'silent');

/** Where the migrations live: the service's own, and service-kit's shared inbox and outbox. */
const folderOf = (service: string) => path.join(ROOT, 'services', service, 'src/data/migrations');
const SHARED = path.join(ROOT, 'packages/service-kit/src/data/migrations');
/** A migration's file is named as knex records it: three digits, an underscore, words. */
const MIGRATION_FILE = /^(\d{3}_[a-z0-9_]+)\.ts$/;

/** The names of the migrations each file of `folder` exports, by its file's name. */
async function migrationFiles(folder: string): Promise<Map<string, string[]>> {
  const files = new Map<string, string[]>();
  for (const file of await readdir(folder)) {
    const name = MIGRATION_FILE.exec(file)?.[1];
    if (!name) continue;
    // Compared by name: mocha may have loaded the service's copy of the module as CommonJS, this one is ESM.
    const exported = (await import(pathToFileURL(path.join(folder, file)).href)) as Record<string, unknown>;
    files.set(
      name,
      Object.values(exported).flatMap((value) =>
        typeof value === 'object' && value !== null && 'up' in value && 'name' in value
          ? [String(value.name)]
          : [],
      ),
    );
  }
  return files;
}

const recordPath = (service: string) => path.join(RECORDS, `${service}.json`);

async function readRecord(service: string): Promise<RecordedMigration[]> {
  if (!existsSync(recordPath(service))) return [];
  return JSON.parse(await readFile(recordPath(service), 'utf8')) as RecordedMigration[];
}

/** Knex reads the migrations from this list, in its order, as service-kit's openDatabase gives them. */
const sourceOf = (migrations: Migration[]) => ({
  migrationSource: {
    getMigrations: async () => migrations,
    getMigrationName: (migration: Migration) => migration.name,
    getMigration: async (migration: Migration) => migration,
  },
});

/**
 * Runs every migration up, then every one down again, on a scratch database, and returns what each ran. Ends on a
 * database whose schema is empty again but for knex's own tables, or throws.
 */
async function recordMigrations(migrations: Migration[]): Promise<RecordedMigration[]> {
  const database = await createTestDatabase('migrations_record');
  // No migrations: the pool only, on an empty database.
  const knex = await openDatabase({ url: database.url, migrations: [], logger });
  try {
    const recorded = migrations.map((migration) => ({
      name: migration.name,
      up: [] as Statement[],
      down: [] as Statement[],
    }));
    let sink: Statement[] | null = null;
    knex.on('query', (query: { sql: string; bindings?: Knex.RawBinding[] }) => {
      sink?.push(query.bindings?.length ? { sql: query.sql, bindings: query.bindings } : query.sql);
    });
    const capturing = (into: Statement[], run: () => Promise<void>) => async () => {
      sink = into;
      try {
        await run();
      } finally {
        sink = null;
      }
    };
    const wrapped = migrations.map((migration, i): Migration => {
      const entry = recorded[i] as RecordedMigration;
      return {
        name: migration.name,
        up: (trx) => capturing(entry.up, () => migration.up(trx))(),
        down: (trx) => capturing(entry.down, () => migration.down(trx))(),
      };
    });
    await knex.migrate.latest(sourceOf(wrapped));
    await knex.migrate.rollback(sourceOf(wrapped), true);
    const left = (await describeSchema(knex)).filter((line) => !/knex_migrations/.test(line));
    if (left.length > 0) throw new Error(`the migrations' downs leave behind:\n${left.join('\n')}`);
    return recorded;
  } finally {
    await knex.destroy();
    await database.drop();
  }
}

/** Migrations that run exactly the recorded statements: what the version that recorded them ran. */
const replayOf = (recorded: RecordedMigration[]): Migration[] =>
  recorded.map((entry) => {
    const run = (statements: Statement[]) => async (knex: Knex) => {
      for (const statement of statements) {
        if (typeof statement === 'string') await knex.raw(statement);
        // Recorded as sent, with pg's $1, $2, …: knex.raw numbers its ? placeholders the same way again.
        else await knex.raw(statement.sql.replace(/\$\d+/g, '?'), statement.bindings);
      }
    };
    return { name: entry.name, up: run(entry.up), down: run(entry.down) };
  });

/**
 * The schema as lines of text, sorted: columns, constraints, indexes, triggers, functions and sequences in the
 * public schema, the runtime role's grants (by `runtimeRole`), and each table's row count (what migrations seed).
 */
async function describeSchema(knex: Knex, runtimeRole?: string): Promise<string[]> {
  const { rows } = await knex.raw<{ rows: { line: string }[] }>(
    `SELECT concat_ws(' | ', 'column', table_name, ordinal_position, column_name, data_type,
              character_maximum_length, numeric_precision, is_nullable, column_default) AS line
     FROM information_schema.columns WHERE table_schema = 'public'
     UNION ALL
     SELECT concat_ws(' | ', 'constraint', c.conrelid::regclass, c.conname, pg_get_constraintdef(c.oid))
     FROM pg_constraint c WHERE c.connamespace = 'public'::regnamespace
     UNION ALL
     SELECT concat_ws(' | ', 'index', tablename, indexname, indexdef) FROM pg_indexes WHERE schemaname = 'public'
     UNION ALL
     SELECT concat_ws(' | ', 'trigger', t.tgrelid::regclass, t.tgname, pg_get_triggerdef(t.oid))
     FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid
     WHERE NOT t.tgisinternal AND c.relnamespace = 'public'::regnamespace
     UNION ALL
     SELECT concat_ws(' | ', 'function', p.oid::regprocedure, pg_get_functiondef(p.oid))
     FROM pg_proc p WHERE p.pronamespace = 'public'::regnamespace
     UNION ALL
     SELECT concat_ws(' | ', 'sequence', sequence_name, data_type, start_value, increment)
     FROM information_schema.sequences WHERE sequence_schema = 'public'
     UNION ALL
     SELECT concat_ws(' | ', 'grant', table_name, privilege_type)
     FROM information_schema.role_table_grants WHERE table_schema = 'public' AND grantee = ?
     ORDER BY line`,
    [runtimeRole ?? ''],
  );
  const tables = await knex('information_schema.tables')
    .where({ table_schema: 'public', table_type: 'BASE TABLE' })
    .pluck<string[]>('table_name');
  const counts = await Promise.all(
    tables.map(async (table) => {
      const [found] = await knex(table).count<{ count: string }[]>({ count: '*' });
      return `rows | ${table} | ${found?.count}`;
    }),
  );
  return [...rows.map((row) => row.line), ...counts].sort();
}

interface RanMigration {
  id: number;
  name: string;
  batch: number;
  migration_time: Date;
}

const ranMigrations = (knex: Knex): Promise<RanMigration[]> =>
  knex('knex_migrations').select('id', 'name', 'batch', 'migration_time').orderBy('id');

/** Migrates a database provisioned as deployed: as its owner role, then granting its runtime role. */
async function migrateAsDeployed(
  database: TestDatabase,
  migrations: Migration[],
  privileges: RuntimePrivileges,
): Promise<void> {
  const roles = database.roles as NonNullable<TestDatabase['roles']>;
  await migrateDatabase({
    migrationUrl: roles.ownerUrl,
    url: roles.runtimeUrl,
    migrations,
    privileges,
    logger,
  });
}

const runtimeRoleOf = (database: TestDatabase) =>
  decodeURIComponent(new URL((database.roles as NonNullable<TestDatabase['roles']>).runtimeUrl).username);

async function withPool<T>(database: TestDatabase, work: (knex: Knex) => Promise<T>): Promise<T> {
  // As the superuser, with no migrations: the database has knex's table already, so nothing runs.
  const knex = await openDatabase({ url: database.url, migrations: [], logger });
  try {
    return await work(knex);
  } finally {
    await knex.destroy();
  }
}

describe('migrations: a database made by an earlier version migrates forward unchanged', function () {
  this.timeout(120_000);

  for (const [service, { migrations, privileges }] of Object.entries(SERVICES)) {
    describe(service, () => {
      let recorded: RecordedMigration[];
      let current: RecordedMigration[];

      before(async () => {
        recorded = await readRecord(service);
        current = await recordMigrations(migrations);
        const missing = current.filter((entry) => !recorded.some((known) => known.name === entry.name));
        if (RECORD_NEW && missing.length > 0) {
          recorded = [...recorded, ...missing];
          const file = recordPath(service);
          const options = { ...(await prettier.resolveConfig(file)), filepath: file };
          await writeFile(file, await prettier.format(JSON.stringify(recorded), options));
        }
      });

      it('keeps each migration in a file named as knex records it, and lists every file', async () => {
        const own = await migrationFiles(folderOf(service));
        const files = new Map([...(await migrationFiles(SHARED)), ...own]);
        for (const [file, exported] of files)
          expect(exported, `${file}.ts exports one migration, named as the file`).to.deep.equal([file]);
        const listed = migrations.map((migration) => migration.name);
        expect(
          listed.filter((name) => !files.has(name)),
          'migrations with no file of their name',
        ).to.deep.equal([]);
        expect(
          [...own.keys()].filter((name) => !listed.includes(name)),
          'files not in the list',
        ).to.deep.equal([]);
      });

      it('runs every recorded migration, under its recorded name, in its recorded order, first', () => {
        // As lines of text, so that a failure shows which name differs.
        const names = migrations.map((migration) => migration.name).slice(0, recorded.length);
        expect(names.join('\n')).to.equal(recorded.map((entry) => entry.name).join('\n'));
      });

      it('runs exactly the SQL each recorded migration ran, up and down', () => {
        for (const [i, entry] of recorded.entries()) {
          expect(
            current[i],
            `${entry.name}: changed after it ran; add a new migration instead`,
          ).to.deep.equal(entry);
        }
      });

      it('has every migration recorded (RECORD_NEW_MIGRATIONS=1 appends a new one)', () => {
        const unrecorded = current.filter((entry) => !recorded.some((known) => known.name === entry.name));
        expect(unrecorded.map((entry) => entry.name)).to.deep.equal([]);
      });

      it("runs nothing again on a database the record made, and leaves it as a fresh migration's", async () => {
        const earlier = await createTestDatabase(`forward_${service}`, { roles: true });
        const fresh = await createTestDatabase(`fresh_${service}`, { roles: true });
        try {
          await migrateAsDeployed(earlier, replayOf(recorded), privileges);
          const before = await withPool(earlier, ranMigrations);
          await migrateAsDeployed(earlier, migrations, privileges);
          const after = await withPool(earlier, ranMigrations);
          expect(after.slice(0, before.length), 'the migrations that had run').to.deep.equal(before);
          expect(after.slice(before.length).map((row) => row.name)).to.deep.equal(
            migrations.slice(recorded.length).map((migration) => migration.name),
          );
          // The service opens on it as its runtime role: nothing is pending.
          const roles = earlier.roles as NonNullable<TestDatabase['roles']>;
          const runtime = await openDatabase({ url: roles.runtimeUrl, migrations, privileges, logger });
          await runtime.destroy();

          await migrateAsDeployed(fresh, migrations, privileges);
          const forward = await withPool(earlier, (knex) => describeSchema(knex, runtimeRoleOf(earlier)));
          const anew = await withPool(fresh, (knex) => describeSchema(knex, runtimeRoleOf(fresh)));
          expect(forward).to.have.length.above(recorded.length);
          expect({
            onlyMigratedForward: forward.filter((line) => !anew.includes(line)),
            onlyMigratedAnew: anew.filter((line) => !forward.includes(line)),
          }).to.deep.equal({ onlyMigratedForward: [], onlyMigratedAnew: [] });
          expect(forward).to.deep.equal(anew);
        } finally {
          await earlier.drop();
          await fresh.drop();
        }
      });
    });
  }
});
