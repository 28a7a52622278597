import { randomUUID } from 'node:crypto';
import amqp from 'amqplib';
import { expect } from 'chai';
import pg from 'pg';
import { privileges as currencyPrivileges } from '@payments/currency';
import { privileges as identityPrivileges } from '@payments/identity';
import { SERVICE_NAMES as EVERY_SERVICE, withPgClient, type ServiceName } from '@payments/infra';
import { privileges as ledgerPrivileges } from '@payments/ledger';
import type { RuntimePrivileges } from '@payments/service-kit';
import { privileges as deliveryPrivileges } from '@payments/webhook-delivery';
import { privileges as ingestPrivileges } from '@payments/webhook-ingest';
import { eventually, findInfrastructure, useSystem } from '@payments/testkit';
import type { PaymentsClient } from '@payments/client';
import { rawApi, signUp, nowSeconds, providerSignature, signedProviderEvent } from '@payments/test-support';
import { sleep } from './support/concurrency.js';

/** Long enough for a message that got through to be consumed and credited. */
const SETTLE_MS = 1000;
const DATABASE_SERVICES = ['identity', 'ledger', 'currency', 'webhook-ingest'] as const;
/** What each service's runtime role is declared to do (each service's data/privileges.ts). */
const DECLARED: Record<string, RuntimePrivileges> = {
  identity: identityPrivileges,
  ledger: ledgerPrivileges,
  currency: currencyPrivileges,
  'webhook-ingest': ingestPrivileges,
  'webhook-delivery': deliveryPrivileges,
};

/** The SQLSTATE a statement fails with, or 'done' when it succeeds. */
const outcomeOf = (client: pg.Client, sql: string) =>
  client.query(sql).then(
    () => 'done',
    (error: { code?: string }) => error.code,
  );

const envelope = (type: string, data: Record<string, unknown>) =>
  JSON.stringify({
    id: randomUUID(),
    type,
    version: 1,
    occurred_at: new Date().toISOString(),
    correlation_id: `attack-${randomUUID()}`,
    data,
  });

/**
 * Publishes onto the events exchange as the user of `amqpUrl`, with a publisher confirm. Resolves with the
 * reason the broker closed the channel, or null when it took the message.
 */
async function publishAs(amqpUrl: string, exchange: string, routingKey: string, body: string) {
  const connection = await amqp.connect(amqpUrl);
  connection.on('error', () => undefined);
  try {
    const channel = await connection.createConfirmChannel();
    let refusal: string | null = null;
    channel.on('error', (error: Error) => (refusal = error.message));
    channel.publish(exchange, routingKey, Buffer.from(body), { persistent: true });
    try {
      await channel.waitForConfirms();
      await channel.close();
      return null;
    } catch (error) {
      return refusal ?? (error as Error).message;
    }
  } finally {
    await connection.close().catch(() => undefined);
  }
}

/** Runs one channel operation as the user of `amqpUrl`; resolves with the broker's refusal, or null. */
async function tryAs(amqpUrl: string, work: (channel: amqp.Channel) => Promise<unknown>) {
  const connection = await amqp.connect(amqpUrl);
  connection.on('error', () => undefined);
  try {
    const channel = await connection.createChannel();
    channel.on('error', () => undefined);
    await work(channel);
    return null;
  } catch (error) {
    return (error as Error).message;
  } finally {
    await connection.close().catch(() => undefined);
  }
}

describe('least privilege: every service logs in to RabbitMQ and PostgreSQL as itself', function () {
  this.timeout(90_000);
  let exchange: string;
  let owner: { client: PaymentsClient<'1.1'>; accountId: string };

  const system = useSystem(
    {
      serviceEnv: {
        // The test plays the payment provider, so nothing else confirms a deposit.
        'provider-sandbox': { SANDBOX_ENABLED: 'false' },
        'webhook-ingest': { UNSIGNED_WEBHOOK_ENABLED: 'true' },
      },
    },
    { booksBalance: true },
  );
  const api = rawApi(system);

  before(async () => {
    exchange = `${system.environment('ledger').AMQP_NAMESPACE}payments.events`;
    const { client } = await signUp(system.gatewayUrl);
    const account = await client.accounts.open({ currency: 'USD' });
    owner = { client, accountId: account.id };
  });

  const amqpUrlOf = (service: ServiceName) => system.environment(service).AMQP_URL as string;

  const pendingDeposit = async (amount: number) => {
    const accepted = await owner.client.money.deposit(owner.accountId, { amount, currency: 'USD' });
    expect(accepted.status).to.equal('pending');
    return accepted.id;
  };

  const transaction = (id: string) => owner.client.transactions.get(id);
  const balance = () => owner.client.balances.get(owner.accountId);
  const settled = (id: string) =>
    eventually(
      () => transaction(id),
      (found) => found.status !== 'pending',
      { timeoutMs: 15_000 },
    );

  /** A confirmation as webhook-ingest would publish it, complete with the right amount and currency. */
  const confirmation = (id: string, data: Record<string, unknown> = {}) =>
    envelope('PaymentProcessed', {
      transaction_id: id,
      payment_id: id,
      status: 'completed',
      source: 'provider',
      movement: 'payment',
      ...data,
    });

  it('runs a deposit end to end with each service on its own broker user and database role', async () => {
    for (const service of EVERY_SERVICE) {
      const env = system.environment(service);
      expect(decodeURIComponent(new URL(env.AMQP_URL as string).username)).to.equal(
        `${env.AMQP_NAMESPACE}${service}`,
      );
      if (env.DATABASE_URL) {
        const url = new URL(env.DATABASE_URL);
        expect(url.username).to.equal(`${url.pathname.slice(1)}_runtime`);
      }
    }
    const id = await pendingDeposit(12.34);
    const event = signedProviderEvent('payment_intent.succeeded', id, 1234, system.webhookSecret);
    const delivered = await api.request('POST', '/webhook/provider', {
      raw: event.body,
      headers: event.headers,
    });
    expect(delivered.status, delivered.text).to.equal(200);
    expect((await settled(id)).status).to.equal('completed');
    expect((await balance()).balance).to.equal(12.34);

    // The database sessions are the services' own runtime roles, not the superuser's nor the owners'.
    const admin = new pg.Client({ connectionString: (await findInfrastructure()).postgresUrl });
    await admin.connect();
    try {
      for (const service of DATABASE_SERVICES) {
        const database = new URL(system.environment(service).DATABASE_URL as string).pathname.slice(1);
        const { rows } = await admin.query<{ usename: string }>(
          'SELECT DISTINCT usename FROM pg_stat_activity WHERE datname = $1',
          [database],
        );
        expect(rows.map((row) => row.usename)).to.deep.equal([`${database}_runtime`]);
      }
    } finally {
      await admin.end();
    }
  });

  it('refuses PaymentProcessed from every broker user but webhook-ingest: nothing is credited', async () => {
    const before = await balance();
    const id = await pendingDeposit(50);
    for (const service of EVERY_SERVICE.filter((name) => name !== 'webhook-ingest')) {
      const refusal = await publishAs(
        amqpUrlOf(service),
        exchange,
        'payment.processed',
        confirmation(id, { amount: 5000, currency: 'USD' }),
      );
      expect(refusal, `${service} published a PaymentProcessed`).to.match(/ACCESS_REFUSED/);
    }
    await sleep(SETTLE_MS);
    expect((await transaction(id)).status).to.equal('pending');
    expect(await balance()).to.deep.equal(before);
  });

  it('refuses TokenRevoked from every broker user but identity: a forged logout changes nothing', async () => {
    const victim = await signUp(system.gatewayUrl);
    for (const service of EVERY_SERVICE.filter((name) => name !== 'identity')) {
      const refusal = await publishAs(
        amqpUrlOf(service),
        exchange,
        'token.revoked',
        envelope('TokenRevoked', {
          user_id: victim.userId,
          issued_before: nowSeconds() + 60,
          expires_at: nowSeconds() + 3600,
        }),
      );
      expect(refusal, `${service} published a TokenRevoked`).to.match(/ACCESS_REFUSED/);
    }
    await sleep(SETTLE_MS);
    expect((await api.get('/accounts', victim.token)).status).to.equal(200);
  });

  it("lets no service read other services' events, nor declare, purge or delete the shared queues", async () => {
    const namespace = system.environment('ledger').AMQP_NAMESPACE as string;
    const eavesdrop = (routingKey: string) => async (channel: amqp.Channel) => {
      const { queue } = await channel.assertQueue('', { exclusive: true });
      await channel.bindQueue(queue, exchange, routingKey);
    };
    expect(await tryAs(amqpUrlOf('gateway'), eavesdrop('token.revoked'))).to.equal(null);
    expect(await tryAs(amqpUrlOf('gateway'), eavesdrop('payment.processed'))).to.match(/ACCESS_REFUSED/);
    expect(await tryAs(amqpUrlOf('ledger'), eavesdrop('#'))).to.match(/ACCESS_REFUSED/);
    expect(
      await tryAs(amqpUrlOf('gateway'), (channel) =>
        channel.consume(`${namespace}ledger.events`, () => undefined),
      ),
    ).to.match(/ACCESS_REFUSED/);
    expect(
      await tryAs(amqpUrlOf('ledger'), (channel) => channel.purgeQueue(`${namespace}currency.events`)),
    ).to.match(/ACCESS_REFUSED/);
    expect(
      await tryAs(amqpUrlOf('ledger'), (channel) => channel.deleteQueue(`${namespace}ledger.events`)),
    ).to.match(/ACCESS_REFUSED/);
    expect(await tryAs(amqpUrlOf('webhook-ingest'), (channel) => channel.deleteExchange(exchange))).to.match(
      /ACCESS_REFUSED/,
    );
  });

  it("lets a consumer read its own dead letters and replay onto its own queue alone, not another's", async () => {
    const namespace = system.environment('ledger').AMQP_NAMESPACE as string;
    const getFrom = (queue: string) => (channel: amqp.Channel) => channel.get(`${namespace}${queue}`);
    const before = await balance();
    const id = await pendingDeposit(80);
    expect(await tryAs(amqpUrlOf('ledger'), getFrom('ledger.events.dlq'))).to.equal(null);
    for (const service of ['ledger', 'webhook-delivery', 'gateway'] as const) {
      expect(await tryAs(amqpUrlOf(service), getFrom('currency.events.dlq')), service).to.match(
        /ACCESS_REFUSED/,
      );
    }
    // Another consumer's replay exchange would put a forged confirmation onto the ledger's queue.
    for (const service of EVERY_SERVICE.filter((name) => name !== 'ledger')) {
      const refusal = await publishAs(
        amqpUrlOf(service),
        `${namespace}ledger.events.replay`,
        '',
        confirmation(id, { amount: 8000, currency: 'USD' }),
      );
      expect(refusal, `${service} replayed onto ledger.events`).to.match(/ACCESS_REFUSED/);
    }
    await sleep(SETTLE_MS);
    expect((await transaction(id)).status).to.equal('pending');
    expect(await balance()).to.deep.equal(before);
  });

  describe('a PaymentProcessed that webhook-ingest may publish (or a compromised webhook-ingest)', () => {
    const cases: [string, Record<string, unknown>, RegExp][] = [
      ['without amount and currency', {}, /did not say which amount and currency/],
      ['without a currency', { amount: 7000 }, /did not say which amount and currency/],
      ['for a larger amount', { amount: 700_000, currency: 'USD' }, /700000 minor units/],
      ['in another currency', { amount: 7000, currency: 'EUR' }, /EUR/],
    ];
    for (const [what, data, reason] of cases) {
      it(`fails the pending deposit ${what} and credits nothing`, async () => {
        const before = await balance();
        const id = await pendingDeposit(70);
        expect(
          await publishAs(amqpUrlOf('webhook-ingest'), exchange, 'payment.processed', confirmation(id, data)),
        ).to.equal(null);
        const failed = await settled(id);
        expect(failed.status).to.equal('failed');
        expect(failed.failure_reason).to.match(reason);
        expect(await balance()).to.deep.equal(before);
      });
    }
  });

  it('still completes /webhook/payment and an amount-less /webhook/payment-status for exactly their amount', async () => {
    const before = (await balance()).balance;
    const unsigned = await pendingDeposit(3.5);
    const response = await api.post('/webhook/payment', { payment_id: unsigned, status: 'completed' });
    expect(response.status, response.text).to.equal(200);
    expect((await settled(unsigned)).status).to.equal('completed');

    const signed = await pendingDeposit(1.25);
    const body = JSON.stringify({ payment_id: signed, status: 'completed' });
    const status = await api.request('POST', '/webhook/payment-status', {
      raw: body,
      headers: {
        'content-type': 'application/json',
        'x-webhook-signature': providerSignature(body, system.webhookSecret),
      },
    });
    expect(status.status, status.text).to.equal(200);
    expect((await settled(signed)).status).to.equal('completed');
    expect((await balance()).balance).to.equal(before + 4.75);
  });

  it("gives each service's database role its own database only: no other, no superuser, no CREATEDB", async () => {
    for (const service of DATABASE_SERVICES) {
      const own = new URL(system.environment(service).DATABASE_URL as string);
      const client = new pg.Client({ connectionString: own.toString() });
      await client.connect();
      try {
        const { rows } = await client.query<{
          rolsuper: boolean;
          rolcreatedb: boolean;
          rolcreaterole: boolean;
        }>('SELECT rolsuper, rolcreatedb, rolcreaterole FROM pg_roles WHERE rolname = current_user');
        expect(rows[0]).to.deep.equal({ rolsuper: false, rolcreatedb: false, rolcreaterole: false });
        const created = await client
          .query(`CREATE DATABASE "payments_stolen_${randomUUID().slice(0, 8)}"`)
          .then(
            () => 'created',
            (error: { code?: string }) => error.code,
          );
        expect(created).to.equal('42501');
      } finally {
        await client.end();
      }
      for (const other of DATABASE_SERVICES.filter((name) => name !== service)) {
        const foreign = new URL(own);
        foreign.pathname = new URL(system.environment(other).DATABASE_URL as string).pathname;
        const intruder = new pg.Client({ connectionString: foreign.toString() });
        const outcome = await intruder.connect().then(
          () => 'connected',
          (error: { code?: string }) => error.code,
        );
        await intruder.end().catch(() => undefined);
        expect(outcome, `${service} reached ${other}'s database`).to.equal('42501');
      }
    }
  });

  it('has each service migrate as the owner of its database and connect as a runtime role that owns nothing', async () => {
    for (const [service, declared] of Object.entries(DECLARED)) {
      const env = system.environment(service as ServiceName);
      const runtime = new URL(env.DATABASE_URL as string);
      const owner = new URL(env.MIGRATION_DATABASE_URL as string);
      expect(decodeURIComponent(runtime.username), service).to.equal(
        `${decodeURIComponent(owner.username)}_runtime`,
      );
      await withPgClient(runtime.toString(), async (client) => {
        const { rows: owned } = await client.query<{ name: string }>(
          `SELECT c.relname AS name FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
           WHERE n.nspname = 'public' AND c.relowner = (SELECT oid FROM pg_roles WHERE rolname = current_user)`,
        );
        expect(owned, `${service}'s runtime role owns`).to.deep.equal([]);
        // Exactly the declared rights, table by table; a table the declaration forgets is a failure here.
        const { rows: tables } = await client.query<{ name: string }>(
          `SELECT tablename AS name FROM pg_tables WHERE schemaname = 'public' AND tablename NOT LIKE 'knex\\_%'`,
        );
        expect(tables.map((t) => t.name).sort(), `${service}'s tables`).to.deep.equal(
          Object.keys(declared).sort(),
        );
        const { rows: grants } = await client.query<{ table_name: string; privilege_type: string }>(
          `SELECT table_name, privilege_type FROM information_schema.role_table_grants
           WHERE grantee = current_user AND table_schema = 'public' AND table_name NOT LIKE 'knex\\_%'`,
        );
        const granted: Record<string, string[]> = {};
        for (const grant of grants) (granted[grant.table_name] ??= []).push(grant.privilege_type);
        const expected = Object.fromEntries(
          Object.entries(declared).map(([table, rights]) => [table, [...rights].sort()]),
        );
        for (const table of Object.keys(granted)) granted[table]?.sort();
        expect(granted, `${service}'s runtime grants`).to.deep.equal(expected);
      });
    }
  });

  it("refuses the ledger's runtime connection every way of rewriting the books: triggers, entries, truncate, drop", async () => {
    await withPgClient(system.environment('ledger').DATABASE_URL as string, async (client) => {
      const { rows } = await client.query<{ id: string; amount: string }>(
        'SELECT id, amount FROM entries LIMIT 1',
      );
      expect(rows, 'the books hold entries to attack').to.have.length(1);
      const entry = rows[0] as { id: string; amount: string };
      const attacks = {
        'disable the append-only trigger': 'ALTER TABLE entries DISABLE TRIGGER entries_append_only',
        'disable every trigger': 'ALTER TABLE entries DISABLE TRIGGER ALL',
        'skip triggers for the session': 'SET session_replication_role = replica',
        'replace the trigger function':
          'CREATE OR REPLACE FUNCTION entries_refuse_change() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RETURN NEW; END $$',
        'drop the balance check': 'ALTER TABLE accounts DROP CONSTRAINT accounts_user_balances',
        'update an entry': `UPDATE entries SET amount = amount + 100 WHERE id = '${entry.id}'`,
        'delete an entry': `DELETE FROM entries WHERE id = '${entry.id}'`,
        'truncate the journal': 'TRUNCATE entries',
        'truncate the trail of admin actions': 'TRUNCATE admin_actions',
        'rewrite the trail': "UPDATE admin_actions SET reason = 'nothing happened'",
        'drop the journal': 'DROP TABLE entries',
        'create a table': 'CREATE TABLE stolen (id int)',
      };
      for (const [attack, sql] of Object.entries(attacks)) {
        expect(await outcomeOf(client, sql), attack).to.equal('42501');
      }
      // Granting itself more grants nothing (PostgreSQL only warns).
      await client.query('GRANT UPDATE, DELETE, TRUNCATE ON entries TO PUBLIC');
      const { rows: rights } = await client.query<{ may: boolean }>(
        "SELECT has_table_privilege('entries', 'UPDATE') OR has_table_privilege('entries', 'DELETE') OR " +
          "has_table_privilege('entries', 'TRUNCATE') AS may",
      );
      expect(rights[0]?.may).to.equal(false);
      const { rows: after } = await client.query<{ amount: string }>(
        'SELECT amount FROM entries WHERE id = $1',
        [entry.id],
      );
      expect(after[0]?.amount).to.equal(entry.amount);
    });
  });
});
