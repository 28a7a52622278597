import { spawn } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import amqp from 'amqplib';
import {
  BUS_PARTICIPANTS,
  createEvent,
  deadLetterQueueName,
  QUEUES,
  type Deployment,
} from '@payments/contracts';
import {
  brokerPermissionsOf,
  declareBrokerTopology,
  dropDatabasesAndRoles,
  INFRA_FILES,
  openBrokerAdmin,
  planLogins,
  provisionDatabases,
  provisionLogins,
  provisioningDependencies,
  removeLogins,
  waitForDependencies,
  withCredentials,
  withPgClient,
} from '@payments/infra';
import { createAmqpBus, createLogger } from '@payments/service-kit';
import {
  createTestBroker,
  findInfrastructure,
  startTcpProxy,
  viaProxy,
  type TcpProxy,
  type TestBroker,
} from '../src/index.js';

const ROOT = fileURLToPath(new URL('../../..', import.meta.url));

describe('provisioning', () => {
  describe('the committed infra files', () => {
    for (const file of [
      'infra/rabbitmq/definitions.json',
      'infra/rabbitmq/definitions-with-sandbox.json',
    ] as const) {
      it(`${file} is what the topology in contracts generates (pnpm infra:files)`, async () => {
        const committed = JSON.parse(await readFile(`${ROOT}${file}`, 'utf8'));
        expect(committed).to.deep.equal(JSON.parse(INFRA_FILES[file]()));
      });
    }

    it('holds the sandbox, its queue and its user only in the definitions for a deployment with a sandbox', () => {
      const names = (file: keyof typeof INFRA_FILES) => {
        const definitions = JSON.parse(INFRA_FILES[file]()) as {
          users: { name: string }[];
          queues: { name: string }[];
          bindings: { destination: string }[];
        };
        return [
          ...definitions.users.map((user) => user.name),
          ...definitions.queues.map((queue) => queue.name),
          ...definitions.bindings.map((binding) => binding.destination),
        ];
      };
      expect(
        names('infra/rabbitmq/definitions.json').filter((name) => name.includes('sandbox')),
      ).to.deep.equal([]);
      expect(names('infra/rabbitmq/definitions-with-sandbox.json')).to.include.members([
        'provider-sandbox',
        'provider-sandbox.events',
        'provider-sandbox.events.dlq',
      ]);
    });

    it('infra/postgres/init.sql is what the provisioning code generates (pnpm infra:files)', async () => {
      const committed = await readFile(`${ROOT}infra/postgres/init.sql`, 'utf8');
      expect(committed).to.equal(INFRA_FILES['infra/postgres/init.sql']());
    });
  });

  describe('broker permissions', () => {
    const publishing = (key: string) =>
      BUS_PARTICIPANTS.filter((participant) =>
        new RegExp(brokerPermissionsOf(participant).topic.write).test(key),
      );

    it('lets webhook-ingest alone publish payment.processed and identity alone token.revoked', () => {
      expect(publishing('payment.processed')).to.deep.equal(['webhook-ingest']);
      expect(publishing('token.revoked')).to.deep.equal(['identity']);
      expect(publishing('user.deleted')).to.deep.equal(['identity']);
      expect(publishing('deposit.requested')).to.deep.equal(['ledger']);
      expect(publishing('#')).to.deep.equal([]);
    });

    it('lets the services whose admins act on others announce it to the trail, and no other', () => {
      expect(publishing('admin.action.taken')).to.deep.equal(['identity', 'currency', 'webhook-delivery']);
    });

    it('gives services that publish nothing no write on the events exchange', () => {
      for (const participant of ['gateway', 'provider-sandbox'] as const) {
        expect(new RegExp(brokerPermissionsOf(participant).write).test('payments.events')).to.equal(false);
      }
    });

    it("lets a consumer alone read its queue's dead letters and write to its replay exchange", () => {
      const allowed = (right: 'read' | 'write', resource: string) =>
        BUS_PARTICIPANTS.filter((participant) =>
          new RegExp(brokerPermissionsOf(participant)[right]).test(resource),
        );
      for (const queue of ['ledger', 'currency', 'webhook-delivery', 'provider-sandbox'] as const) {
        expect(allowed('read', `${queue}.events.dlq`), queue).to.deep.equal([queue]);
        expect(allowed('write', `${queue}.events.replay`), queue).to.deep.equal([queue]);
      }
      // The default exchange reaches every queue by name: nobody may publish there.
      expect(allowed('write', 'amq.default')).to.deep.equal([]);
      expect(allowed('write', 'payments.events.dlx')).to.deep.equal([]);
    });

    it('scopes every name to the namespace', () => {
      const ledger = brokerPermissionsOf('ledger', 't-1234.');
      expect(ledger.topic.exchange).to.equal('t-1234.payments.events');
      expect(new RegExp(ledger.read).test('t-1234.ledger.events')).to.equal(true);
      expect(new RegExp(ledger.read).test('ledger.events')).to.equal(false);
      expect(new RegExp(ledger.read).test('t-1234Xledger.events')).to.equal(false);
      expect(new RegExp(ledger.read).test('t-1234.currency.events')).to.equal(false);
    });
  });

  it('says what to enable when it has no way to create broker users', async () => {
    const failure = await openBrokerAdmin({ amqpUrl: 'amqp://guest:guest@broker.invalid:5672' }).catch(
      (error: Error) => error,
    );
    expect(failure).to.be.instanceOf(Error);
    expect((failure as Error).message).to.match(/rabbitmq-plugins enable rabbitmq_management/);
  });

  it("declares the topology through the first of a cluster's nodes that answers", async function () {
    this.timeout(30_000);
    const broker = await createTestBroker();
    // Port 1 on loopback: a node that refuses, listed first as a lost node would be.
    const cluster = `amqp://guest:guest@127.0.0.1:1,${broker.url}`;
    const connection = await amqp.connect(broker.url);
    try {
      await declareBrokerTopology(cluster, broker.namespace, { sandbox: false });
      const channel = await connection.createChannel();
      const queue = broker.namespace + QUEUES.ledger.name;
      expect((await channel.checkQueue(queue)).queue).to.equal(queue);
    } finally {
      await connection.close();
      await broker.cleanup();
    }
  });

  describe('broker users', () => {
    const namespace = `t-${randomBytes(4).toString('hex')}.`;
    const password = randomBytes(12).toString('hex');
    const users = (['ledger', 'identity'] as const).map((participant) => ({
      participant,
      username: `${namespace}${participant}`,
      password,
    }));
    const logsIn = async (amqpUrl: string, username: string) => {
      const url = new URL(amqpUrl);
      url.username = encodeURIComponent(username);
      url.password = password;
      const connection = await amqp.connect(url.toString()).catch(() => null);
      await connection?.close();
      return connection !== null;
    };

    it('removes every user it made in one go, a user already gone being no error', async function () {
      this.timeout(60_000);
      const { amqpUrl, amqpManagementUrl } = await findInfrastructure();
      const admin = await openBrokerAdmin({ amqpUrl, managementUrl: amqpManagementUrl });
      await admin.putUsers(users, namespace);
      try {
        for (const { username } of users) expect(await logsIn(amqpUrl, username), username).to.equal(true);
        await admin.deleteUsers([...users.map((user) => user.username), `${namespace}never-made`]);
        for (const { username } of users) expect(await logsIn(amqpUrl, username), username).to.equal(false);
      } finally {
        await admin.deleteUsers(users.map((user) => user.username));
      }
    });
  });

  describe("the provider sandbox's queue", function () {
    this.timeout(60_000);
    const logger = createLogger('provisioning-test', 'silent');
    const withSandbox: Deployment = { sandbox: true };
    const withoutSandbox: Deployment = { sandbox: false };
    let broker: TestBroker;
    let sandboxQueue: string;

    /** A queue's message count, or null when the broker has no such queue. */
    const messagesIn = async (queue: string): Promise<number | null> => {
      const connection = await amqp.connect(broker.url);
      try {
        const channel = await connection.createChannel();
        channel.on('error', () => undefined);
        return await channel.checkQueue(queue).then(
          (found) => found.messageCount,
          () => null,
        );
      } finally {
        await connection.close().catch(() => undefined);
      }
    };
    const withdrawalRequested = () =>
      createEvent(
        'WithdrawalRequested',
        {
          transaction_id: randomUUID(),
          account_id: randomUUID(),
          user_id: randomUUID(),
          amount: 500,
          currency: 'USD',
        },
        { id: randomUUID(), correlationId: randomUUID() },
      );

    beforeEach(async () => {
      broker = await createTestBroker();
      sandboxQueue = broker.namespace + QUEUES['provider-sandbox'].name;
    });
    afterEach(() => broker.cleanup());

    it('is not declared without a sandbox, and one an earlier deployment left is removed with its requests', async () => {
      await declareBrokerTopology(broker.url, broker.namespace, withSandbox);
      // What a deployment with a sandbox left behind: requests nobody answered, and a dead letter.
      const connection = await amqp.connect(broker.url);
      try {
        const channel = await connection.createConfirmChannel();
        for (let i = 0; i < 3; i += 1)
          channel.sendToQueue(sandboxQueue, Buffer.from(JSON.stringify(withdrawalRequested())));
        channel.sendToQueue(deadLetterQueueName(sandboxQueue), Buffer.from('{}'));
        await channel.waitForConfirms();
      } finally {
        await connection.close();
      }
      expect(await messagesIn(sandboxQueue)).to.equal(3);

      const changes = await declareBrokerTopology(broker.url, broker.namespace, withoutSandbox);

      expect(changes.removed).to.deep.equal([
        { queue: sandboxQueue, messages: 3 },
        { queue: deadLetterQueueName(sandboxQueue), messages: 1 },
      ]);
      expect(await messagesIn(sandboxQueue)).to.equal(null);
      expect(await messagesIn(deadLetterQueueName(sandboxQueue))).to.equal(null);
      expect(await messagesIn(broker.namespace + QUEUES.ledger.name)).to.equal(0);
      // Idempotent: nothing left to remove the next time.
      expect(
        (await declareBrokerTopology(broker.url, broker.namespace, withoutSandbox)).removed,
      ).to.deep.equal([]);
    });

    it('keeps a leftover queue that a sandbox still reads', async () => {
      await declareBrokerTopology(broker.url, broker.namespace, withSandbox);
      const connection = await amqp.connect(broker.url);
      try {
        const channel = await connection.createChannel();
        await channel.consume(sandboxQueue, () => undefined);
        const changes = await declareBrokerTopology(broker.url, broker.namespace, withoutSandbox);
        expect(changes).to.deep.equal({ removed: [], kept: [{ queue: sandboxQueue, consumers: 1 }] });
        expect(await messagesIn(sandboxQueue)).to.equal(0);
      } finally {
        await connection.close();
      }
    });

    /** The system's broker users for a deployment, provisioned; the ledger's bus logs in as the ledger. */
    const provisionBroker = async (deployment: Deployment) => {
      const { amqpManagementUrl } = await findInfrastructure();
      const target = {
        postgresUrl: '',
        amqpUrl: broker.url,
        managementUrl: amqpManagementUrl,
        namespace: broker.namespace,
      };
      const logins = planLogins(target, { database: false, broker: true, deployment });
      await provisionLogins(target, logins, deployment);
      const ledger = createAmqpBus({
        url: withCredentials(broker.url, logins.ledger?.broker),
        namespace: broker.namespace,
        logger,
        connectTimeoutMs: 10_000,
      });
      await ledger.start();
      return { target, logins, ledger };
    };

    it('with a sandbox: holds the WithdrawalRequested the ledger publishes, as the ledger logs in', async () => {
      const { target, logins, ledger } = await provisionBroker(withSandbox);
      try {
        expect(ledger.isConnected(), 'the ledger found its topology').to.equal(true);
        expect(logins['provider-sandbox']?.broker).to.not.equal(undefined);
        await ledger.publish(withdrawalRequested());
        expect(await messagesIn(sandboxQueue)).to.equal(1);
      } finally {
        await ledger.close();
        await removeLogins(target, logins);
      }
    });

    it('without a sandbox: the ledger starts and publishes a WithdrawalRequested that nothing holds, and the sandbox has no login', async () => {
      // A leftover from an earlier deployment with a sandbox: its queue and its user.
      const earlier = await provisionBroker(withSandbox);
      await earlier.ledger.close();
      const sandboxLogin = earlier.logins['provider-sandbox']?.broker;
      const { target, logins, ledger } = await provisionBroker(withoutSandbox);
      try {
        expect(ledger.isConnected(), 'the ledger found its topology').to.equal(true);
        expect(logins['provider-sandbox']).to.equal(undefined);
        await ledger.publish(withdrawalRequested());
        expect(await messagesIn(sandboxQueue)).to.equal(null);
        const sandboxConnects = await amqp.connect(withCredentials(broker.url, sandboxLogin)).then(
          async (connection) => {
            await connection.close();
            return true;
          },
          () => false,
        );
        expect(sandboxConnects, 'the leftover sandbox user was removed').to.equal(false);
      } finally {
        await ledger.close();
        await removeLogins(target, earlier.logins);
      }
    });
  });

  describe('database roles', () => {
    let serverUrl: string;
    const name = `payments_provisioning_${randomBytes(4).toString('hex')}`;
    const on = (database: string, credentials?: { user: string; password: string }) => {
      const url = new URL(serverUrl);
      url.pathname = `/${database}`;
      if (credentials) {
        url.username = credentials.user;
        url.password = credentials.password;
      }
      return url.toString();
    };
    const query = (url: string, sql: string) => withPgClient(url, (client) => client.query(sql));

    before(async () => {
      serverUrl = (await findInfrastructure()).postgresUrl;
    });
    after(() => dropDatabasesAndRoles(serverUrl, [name]));

    it('hands a database an earlier version created as the superuser to its new role, objects and all', async () => {
      await query(serverUrl, `CREATE DATABASE "${name}"`);
      await query(
        on(name),
        `CREATE TABLE things (id serial PRIMARY KEY, n int GENERATED ALWAYS AS IDENTITY);
         CREATE SEQUENCE counter;
         CREATE VIEW thing_ids AS SELECT id FROM things;
         CREATE FUNCTION refuse() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE 'no'; END $$;
         CREATE TRIGGER things_refuse BEFORE DELETE ON things FOR EACH ROW EXECUTE FUNCTION refuse();`,
      );
      const credentials = { user: name, password: randomBytes(12).toString('hex') };
      await provisionDatabases(serverUrl, [{ database: name, password: credentials.password }]);
      // Twice: it runs on every `pnpm start`.
      await provisionDatabases(serverUrl, [{ database: name, password: credentials.password }]);

      const { rows } = await query(
        on(name),
        `SELECT relname, pg_get_userbyid(relowner) AS owner FROM pg_class
         WHERE relnamespace = 'public'::regnamespace AND relkind IN ('r', 'S', 'v') ORDER BY relname`,
      );
      expect(
        rows.every((row) => row.owner === name),
        JSON.stringify(rows),
      ).to.equal(true);
      const mine = on(name, credentials);
      await query(mine, 'INSERT INTO things DEFAULT VALUES');
      await query(mine, 'ALTER TABLE things ADD COLUMN note text');
      await query(
        mine,
        'CREATE OR REPLACE FUNCTION refuse() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RETURN OLD; END $$',
      );
      expect((await query(mine, 'SELECT count(*)::int AS n FROM thing_ids')).rows[0].n).to.equal(1);
      const role = await query(
        serverUrl,
        `SELECT rolsuper, rolcreatedb, rolcreaterole, rolcanlogin FROM pg_roles WHERE rolname = '${name}'`,
      );
      expect(role.rows[0]).to.deep.equal({
        rolsuper: false,
        rolcreatedb: false,
        rolcreaterole: false,
        rolcanlogin: true,
      });
      const acl = await query(serverUrl, `SELECT datacl::text FROM pg_database WHERE datname = '${name}'`);
      expect(acl.rows[0].datacl).not.to.match(/(^|[{,])=/);
    });
  });
});

describe('provisioning: waiting for what it needs', function () {
  this.timeout(60_000);
  let postgresUrl: string;
  let proxy: TcpProxy;
  /** The PostgreSQL server, reached through a proxy the test cuts and restores. */
  let throughProxy: string;

  beforeEach(async () => {
    ({ postgresUrl } = await findInfrastructure());
    const target = new URL(postgresUrl);
    proxy = await startTcpProxy({ host: target.hostname, port: Number(target.port || 5432) });
    throughProxy = viaProxy(postgresUrl, proxy);
  });
  afterEach(() => proxy.close());

  const postgresOnly = () =>
    provisioningDependencies({ postgresUrl: throughProxy, amqpUrl: 'amqp://unused' })[0]!;

  it('waits, bounded, for a database that comes up after it, and says what it waited for', async () => {
    proxy.cut();
    const lines: string[] = [];
    setTimeout(() => proxy.restore(), 1_200);
    await waitForDependencies([postgresOnly()], {
      timeoutMs: 20_000,
      intervalMs: 200,
      log: (line) => lines.push(line),
    });
    expect(lines[0]).to.match(new RegExp(`^waiting for PostgreSQL at 127\\.0\\.0\\.1:${proxy.port} \\(`));
    expect(lines[1]).to.match(
      new RegExp(`^PostgreSQL at 127\\.0\\.0\\.1:${proxy.port} answers, after [0-9.]+ s$`),
    );
  });

  it('gives up once the time is up, naming what did not answer', async () => {
    proxy.cut();
    const started = Date.now();
    const error = await waitForDependencies([postgresOnly()], { timeoutMs: 1_000, intervalMs: 200 }).catch(
      (failure: unknown) => failure as Error,
    );
    expect(error).to.be.instanceOf(Error);
    expect((error as Error).message).to.match(
      new RegExp(`^PostgreSQL at 127\\.0\\.0\\.1:${proxy.port} did not answer within 1 s \\(last: `),
    );
    expect((error as Error).message).not.to.include('postgres@');
    expect(Date.now() - started).to.be.lessThan(5_000);
  });

  it('`pnpm provision` waits before it provisions anything, and exits 1 naming what never came', async () => {
    proxy.cut();
    const passwords = Object.fromEntries(
      ['IDENTITY', 'LEDGER', 'CURRENCY', 'WEBHOOK_INGEST', 'WEBHOOK_DELIVERY'].flatMap((service) => [
        [`${service}_DATABASE_PASSWORD`, 'unused'],
        [`${service}_DATABASE_OWNER_PASSWORD`, 'unused'],
      ]),
    );
    for (const service of ['IDENTITY', 'LEDGER', 'CURRENCY', 'WEBHOOK_INGEST', 'WEBHOOK_DELIVERY', 'GATEWAY'])
      passwords[`${service}_AMQP_PASSWORD`] = 'unused';
    // Not spawnSync: the proxy the child connects to answers from this process's event loop.
    const child = spawn(
      process.execPath,
      ['--conditions=development', '--import', 'tsx', 'packages/infra/src/bin/provision.ts'],
      {
        cwd: ROOT,
        env: {
          ...process.env,
          ...passwords,
          DATABASE_URL: throughProxy,
          AMQP_URL: 'amqp://guest:guest@127.0.0.1:5672',
          PROVISION_WAIT_SECONDS: '1',
        },
      },
    );
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    const status = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    const outcome = { status, stderr };
    expect(outcome.status).to.equal(1);
    expect(outcome.stderr).to.match(/pnpm provision: waiting for PostgreSQL at 127\.0\.0\.1:\d+ \(/);
    expect(outcome.stderr).to.match(
      /pnpm provision failed: PostgreSQL at 127\.0\.0\.1:\d+ did not answer within 1 s/,
    );
  });
});
