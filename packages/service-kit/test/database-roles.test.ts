import { expect } from 'chai';
import { createTestDatabase, type TestDatabase } from '@payments/testkit';
import {
  createLogger,
  migrateDatabase,
  openDatabase,
  type Knex,
  type Migration,
  type RuntimePrivileges,
} from '../src/index.js';

const logger = createLogger('database-roles-test', 'silent');

const migrations: Migration[] = [
  {
    name: '001_books',
    async up(knex) {
      await knex.raw('CREATE TABLE journal (id bigserial PRIMARY KEY, amount bigint NOT NULL)');
      await knex.raw('CREATE TABLE balances (id int PRIMARY KEY, amount bigint NOT NULL)');
      await knex.raw('CREATE TABLE secrets (id int PRIMARY KEY)');
    },
    async down(knex) {
      await knex.raw('DROP TABLE journal, balances, secrets');
    },
  },
];
const privileges: RuntimePrivileges = {
  journal: ['SELECT', 'INSERT'],
  balances: ['SELECT', 'INSERT', 'UPDATE'],
};

/** The SQLSTATE a statement fails with, or 'done'. */
const outcomeOf = (knex: Knex, sql: string) =>
  knex.raw(sql).then(
    () => 'done',
    (error: { code?: string }) => error.code,
  );

describe('service-kit: migrations as the owner, the service as a runtime role', function () {
  this.timeout(30_000);
  let database: TestDatabase;
  let roles: { runtimeUrl: string; ownerUrl: string };
  const opened: Knex[] = [];
  /** The owner's migrations and grants, as `node dist/migrate.js` runs them. */
  const migrate = () =>
    migrateDatabase({ migrationUrl: roles.ownerUrl, url: roles.runtimeUrl, migrations, privileges, logger });
  const open = async (options: Partial<Parameters<typeof openDatabase>[0]> = {}) => {
    const knex = await openDatabase({ url: roles.runtimeUrl, migrations, privileges, logger, ...options });
    opened.push(knex);
    return knex;
  };

  beforeEach(async () => {
    database = await createTestDatabase('roles', { roles: true });
    roles = database.roles as typeof roles;
  });
  afterEach(async () => {
    await Promise.all(opened.splice(0).map((knex) => knex.destroy()));
    await database.drop();
  });

  it('refuses to open a schema behind its migrations that the runtime role may not migrate, and says how', async () => {
    const refused = await open().catch((error: Error) => error.message);
    expect(refused).to.match(/behind its migrations.*MIGRATION_DATABASE_URL/);
  });

  it('migrates as the owner, then gives the runtime role exactly its declared rows and nothing else', async () => {
    // Several processes starting at once: one run at a time per database (an advisory lock) keeps them apart.
    await Promise.all([1, 2, 3].map(migrate));
    const knex = await open({ leastPrivilege: true });
    expect(await outcomeOf(knex, 'INSERT INTO journal (amount) VALUES (5)')).to.equal('done');
    expect(await outcomeOf(knex, 'INSERT INTO balances VALUES (1, 5)')).to.equal('done');
    expect(await outcomeOf(knex, 'UPDATE balances SET amount = 6')).to.equal('done');
    for (const sql of [
      'UPDATE journal SET amount = 6',
      'DELETE FROM journal',
      'DELETE FROM balances',
      'SELECT * FROM secrets',
      'TRUNCATE journal',
      'ALTER TABLE journal ADD COLUMN note text',
      'DROP TABLE journal',
      'CREATE TABLE more (id int)',
      'DELETE FROM knex_migrations',
    ])
      expect(await outcomeOf(knex, sql), sql).to.equal('42501');
  });

  it('takes back a right the declaration no longer gives, at the next migration run', async () => {
    await migrate();
    const narrower = { ...privileges, balances: ['SELECT'] } as const;
    const knex = await open({ migrationUrl: roles.ownerUrl, privileges: narrower });
    expect(await outcomeOf(knex, 'INSERT INTO balances VALUES (2, 1)')).to.equal('42501');
    expect(await outcomeOf(knex, 'SELECT * FROM balances')).to.equal('done');
  });

  it('refuses in production a connection that may change the schema: the owner, or a superuser', async () => {
    await migrate();
    for (const url of [roles.ownerUrl, database.url]) {
      const refused = await open({ url, leastPrivilege: true }).then(
        () => 'opened',
        (error: Error) => error.message,
      );
      expect(refused).to.match(/may change the schema/);
    }
  });
});
