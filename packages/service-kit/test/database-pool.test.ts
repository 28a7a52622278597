import { createServer, type Socket } from 'node:net';
import { expect } from 'chai';
import pg from 'pg';
import { Type } from '@sinclair/typebox';
import { createTestDatabase, startTcpProxy, viaProxy, type TestDatabase } from '@payments/testkit';
import {
  CommonConfig,
  createHttpApp,
  createLogger,
  createMetrics,
  DatabaseConfig,
  databaseOptions,
  listen,
  loadConfig,
  openDatabase,
  resolveServiceCredential,
  type HttpServer,
  type Knex,
  type Logger,
  type Migration,
} from '../src/index.js';

const logger = createLogger('database-pool-test', 'silent');
const Schema = Type.Object({ ...CommonConfig, ...DatabaseConfig('payments_pool', 'pool-test') });

/** What the slow migration saw as its connection's application_name. */
let migratedAs: string | undefined;

/** A migration slower than the runtime's statement timeout in these tests. */
const slowMigration: Migration = {
  name: '001_slow',
  async up(knex) {
    const { rows } = await knex.raw<{ rows: { name: string }[] }>(
      "SELECT current_setting('application_name') AS name",
    );
    migratedAs = rows[0]?.name;
    await knex.raw('SELECT pg_sleep(0.5)');
    await knex.raw('CREATE TABLE ticks (id int PRIMARY KEY)');
  },
  async down(knex) {
    await knex.raw('DROP TABLE ticks');
  },
};

describe('service-kit: the database pool is bounded and named', function () {
  this.timeout(30_000);
  let database: TestDatabase;
  const opened: Knex[] = [];

  /** The service's pool as its configuration describes it, from environment variables. */
  const openConfigured = async (
    env: Record<string, string> = {},
    migrations: Migration[] = [],
    log: Logger = logger,
  ) => {
    const config = loadConfig(Schema, { DATABASE_URL: database.url, NODE_ENV: 'test', ...env });
    const knex = await openDatabase(databaseOptions(config, { migrations, logger: log }));
    opened.push(knex);
    return knex;
  };

  /** Connections to the test database whose application_name is `name`, seen from outside the pool. */
  const connectionsNamed = async (name: string) => {
    const client = new pg.Client({ connectionString: database.url });
    await client.connect();
    try {
      const { rows } = await client.query<{ count: string }>(
        'SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND application_name = $1',
        [name],
      );
      return Number(rows[0]?.count);
    } finally {
      await client.end();
    }
  };

  /** Statements of `name`'s connections sleeping in pg_sleep right now. */
  const sleepersNamed = async (name: string) => {
    const client = new pg.Client({ connectionString: database.url });
    await client.connect();
    try {
      const { rows } = await client.query<{ count: string }>(
        "SELECT count(*) FROM pg_stat_activity WHERE application_name = $1 AND wait_event = 'PgSleep'",
        [name],
      );
      return Number(rows[0]?.count);
    } finally {
      await client.end();
    }
  };

  beforeEach(async () => {
    database = await createTestDatabase('pool');
  });
  afterEach(async () => {
    await Promise.all(opened.splice(0).map((knex) => knex.destroy()));
    await database.drop();
  });

  it('names its connections after the service in pg_stat_activity, or as DATABASE_APPLICATION_NAME says', async () => {
    const named = await openConfigured();
    const { rows } = await named.raw<{ rows: { application_name: string }[] }>(
      'SELECT application_name FROM pg_stat_activity WHERE pid = pg_backend_pid()',
    );
    expect(rows[0]?.application_name).to.equal('pool-test');
    expect(await connectionsNamed('pool-test')).to.equal(1);

    const renamed = await openConfigured({ DATABASE_APPLICATION_NAME: 'pool-test-canary' });
    await renamed.raw('SELECT 1');
    expect(await connectionsNamed('pool-test-canary')).to.equal(1);
  });

  it('cancels a statement that runs past DATABASE_STATEMENT_TIMEOUT_MS with SQLSTATE 57014', async () => {
    const knex = await openConfigured({ DATABASE_STATEMENT_TIMEOUT_MS: '200' });
    const started = Date.now();
    const outcome = await knex.raw('SELECT pg_sleep(5)').then(
      () => 'finished',
      (error: { code?: string }) => error.code,
    );
    expect(outcome).to.equal('57014');
    expect(Date.now() - started).to.be.below(2_000);
    // The pool's connection survives the cancel and serves the next statement.
    expect((await knex.raw<{ rows: unknown[] }>('SELECT 1')).rows).to.have.length(1);
  });

  it('runs migrations without the statement timeout, as `<service>-migrate`', async () => {
    const knex = await openConfigured({ DATABASE_STATEMENT_TIMEOUT_MS: '200' }, [slowMigration]);
    const { rows } = await knex.raw<{ rows: { found: string | null }[] }>(
      "SELECT to_regclass('public.ticks')::text AS found",
    );
    expect(rows[0]?.found).to.equal('ticks');
    expect(migratedAs).to.equal('pool-test-migrate');
  });

  it('never holds more than DATABASE_POOL_MAX connections under concurrent load', async () => {
    const knex = await openConfigured({
      DATABASE_POOL_MAX: '3',
      DATABASE_APPLICATION_NAME: 'pool-test-load',
    });
    const observer = new pg.Client({ connectionString: database.url });
    await observer.connect();
    let busiest = 0;
    let running = true;
    const watching = (async () => {
      while (running) {
        const { rows } = await observer.query<{ count: string }>(
          "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'pool-test-load'",
        );
        busiest = Math.max(busiest, Number(rows[0]?.count));
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
    })();
    try {
      await Promise.all(Array.from({ length: 40 }, () => knex.raw('SELECT pg_sleep(0.02)')));
    } finally {
      running = false;
      await watching;
      await observer.end();
    }
    expect(busiest).to.equal(3);
  });

  it('gives up on a server that accepts and never answers after DATABASE_CONNECT_TIMEOUT_MS', async () => {
    // An address lost in a failover: the TCP handshake succeeds, the startup packet is never answered.
    const held = new Set<Socket>();
    const silent = createServer((socket) => held.add(socket));
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const { port } = silent.address() as { port: number };
    const started = Date.now();
    try {
      const outcome = await openConfigured({
        DATABASE_URL: `postgres://postgres@127.0.0.1:${port}/payments_pool`,
        DATABASE_CONNECT_TIMEOUT_MS: '300',
      }).then(
        () => 'opened',
        (error: Error) => error.message,
      );
      expect(outcome).to.match(/timeout/i);
      expect(Date.now() - started).to.be.below(3_000);
    } finally {
      for (const socket of held) socket.destroy();
      await new Promise((resolve) => silent.close(resolve));
    }
  });

  describe('through the HTTP app', () => {
    let http: HttpServer;
    let base: string;
    let held: Promise<unknown> | undefined;
    let logLines: { msg?: string; knex?: string }[];

    beforeEach(async () => {
      logLines = [];
      const knex = await openConfigured(
        {
          DATABASE_STATEMENT_TIMEOUT_MS: '1000',
          DATABASE_POOL_MAX: '1',
          DATABASE_POOL_ACQUIRE_TIMEOUT_MS: '100',
        },
        [],
        createLogger('database-pool-test', 'warn', {
          write: (line: string) => logLines.push(JSON.parse(line)),
        }),
      );
      const app = createHttpApp(
        {
          logger,
          metrics: createMetrics('database-pool-test'),
          serviceCredential: resolveServiceCredential({ NODE_ENV: 'test', SERVICE_TOKEN: 'pool-test-token' }),
        },
        (routes) => {
          routes.get('/slow', async (_req, res) => {
            await knex.raw('SELECT pg_sleep(5) FROM (SELECT 1 AS secret_column) AS secret_table');
            res.json({});
          });
          routes.get('/read', async (_req, res) => {
            await knex.raw('SELECT 1');
            res.json({});
          });
        },
      );
      http = await listen(app, 0, '127.0.0.1');
      base = `http://127.0.0.1:${http.port}`;
    });
    afterEach(async () => {
      await held;
      await http.close();
    });

    it('answers 503 while the database is gone (a failover, a restart), and serves again once it is back', async () => {
      const target = new URL(database.url);
      const proxy = await startTcpProxy({ host: target.hostname, port: Number(target.port || 5432) });
      const config = loadConfig(Schema, {
        DATABASE_URL: viaProxy(database.url, proxy),
        NODE_ENV: 'test',
        DATABASE_CONNECT_TIMEOUT_MS: '500',
      });
      const knex = await openDatabase(databaseOptions(config, { migrations: [], logger }));
      opened.push(knex);
      const app = createHttpApp(
        {
          logger,
          metrics: createMetrics('database-gone-test'),
          serviceCredential: resolveServiceCredential({ NODE_ENV: 'test', SERVICE_TOKEN: 'pool-test-token' }),
        },
        (routes) => {
          routes.get('/read', async (_req, res) => {
            await knex.raw('SELECT 1 AS secret_column');
            res.json({});
          });
          routes.get('/terminated', async (_req, res) => {
            // What a switchover does to the connections of the primary it demotes: 57P01.
            await knex.raw('SELECT pg_terminate_backend(pg_backend_pid())');
            res.json({});
          });
        },
      );
      const server = await listen(app, 0, '127.0.0.1');
      const read = async () => {
        const response = await fetch(`http://127.0.0.1:${server.port}/read`);
        return {
          status: response.status,
          retryAfter: response.headers.get('retry-after'),
          text: await response.text(),
        };
      };
      /** Reads until one answers 200; each before it must be a 503 (a dead connection the pool still held). */
      const readsUntilServed = async () => {
        const answers = [];
        for (let tries = 0; tries < 5; tries += 1) {
          const answer = await read();
          answers.push(answer.status);
          if (answer.status === 200) break;
        }
        return answers;
      };
      try {
        expect((await read()).status).to.equal(200);
        for (const cut of ['a connection in the pool', 'a new connection']) {
          proxy.cut();
          const answer = await read();
          expect(answer.status, cut).to.equal(503);
          expect(answer.retryAfter).to.equal('1');
          expect(JSON.parse(answer.text)).to.include({ code: 'SERVICE_UNAVAILABLE' });
          expect(answer.text).not.to.match(/secret|SELECT|terminated|ECONN|127\.0\.0\.1/i);
          proxy.restore();
        }
        const served = await readsUntilServed();
        expect(served.at(-1)).to.equal(200);
        expect(served.slice(0, -1).every((status) => status === 503)).to.equal(true);
        const terminated = await fetch(`http://127.0.0.1:${server.port}/terminated`);
        expect(terminated.status).to.equal(503);
        const again = await readsUntilServed();
        expect(again.at(-1)).to.equal(200);
        expect(again.slice(0, -1).every((status) => status === 503)).to.equal(true);
      } finally {
        await server.close();
        await proxy.close();
      }
    });

    it('answers a statement cancelled by its timeout 503, without the SQL', async () => {
      const response = await fetch(`${base}/slow`);
      const text = await response.text();
      expect(response.status).to.equal(503);
      expect(response.headers.get('retry-after')).to.equal('1');
      expect(JSON.parse(text)).to.include({ code: 'SERVICE_UNAVAILABLE', status: 503 });
      expect(text).not.to.match(/secret|pg_sleep|SELECT|57014|statement timeout/i);
    });

    it('answers 503 when no connection frees up within DATABASE_POOL_ACQUIRE_TIMEOUT_MS', async () => {
      // The pool's one connection is busy until its own statement is cancelled.
      held = fetch(`${base}/slow`).then((response) => response.text());
      while ((await sleepersNamed('pool-test')) === 0)
        await new Promise((resolve) => setTimeout(resolve, 10));
      const response = await fetch(`${base}/read`);
      const text = await response.text();
      expect(response.status).to.equal(503);
      expect(JSON.parse(text)).to.include({ code: 'SERVICE_UNAVAILABLE' });
      expect(text).not.to.match(/knex|pool|timeout acquiring/i);
      // knex's own warning is a line of the service's JSON log, not coloured text on stdout.
      expect(logLines.find((line) => line.msg === 'database pool')?.knex).to.match(
        /^Acquire connection error/,
      );
    });
  });
});
