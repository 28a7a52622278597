import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { expect } from 'chai';
import pg from 'pg';
import Stripe from 'stripe';
import type { ProcessSystem } from '@payments/infra';
import {
  eventually,
  findInfrastructure,
  startTcpProxy,
  viaProxy,
  type TcpProxy,
  useSystem,
  tapEvents,
  type EventTap,
  expectBooksBalance,
  pnpmCommand,
} from '@payments/testkit';
import { createPaymentsClient, type PaymentsClient } from '@payments/client';
import {
  rawApi,
  signUp,
  type ApiResponse,
  nowSeconds,
  providerEvent,
  providerSignature as signature,
  aPaymentConfirmation,
} from '@payments/test-support';
import { sleep } from './support/concurrency.js';
import { portsOf, startCopy } from './support/system-copies.js';

const run = promisify(execFile);
const ROOT = fileURLToPath(new URL('..', import.meta.url));
const NEXT_SECRET = `whsec_e2e_next_${randomUUID()}`;
/** Long enough for a redelivery or a late duplicate to (wrongly) land before a test checks nothing changed. */
const SETTLE_MS = 750;

interface Owner {
  token: string;
  accountId: string;
  client: PaymentsClient<'1.1'>;
}

function hostAndPort(url: string, fallbackPort: number) {
  const parsed = new URL(url);
  return { host: parsed.hostname, port: Number(parsed.port || fallbackPort) };
}

describe('webhooks and events end to end: signed, never lost, never twice', function () {
  this.timeout(90_000);
  let tap: EventTap;
  let ledgerDb: pg.Client;
  let ledgerBroker: TcpProxy;
  let ingestBroker: TcpProxy;
  let ingestDatabase: TcpProxy;
  let ingest: ProcessSystem;
  let owner: Owner;

  const system = useSystem(
    async () => {
      const { amqpUrl } = await findInfrastructure();
      ledgerBroker = await startTcpProxy(hostAndPort(amqpUrl, 5672));
      // No sandbox: the test plays the payment provider itself.
      return {
        serviceEnv: {
          ledger: { AMQP_URL: viaProxy(amqpUrl, ledgerBroker) },
          'provider-sandbox': { SANDBOX_ENABLED: 'false' },
        },
      };
    },
    {
      booksBalance: true,
      logs: () => [ingest?.logs()],
      beforeStop: async () => {
        await ledgerDb?.end();
        await tap?.close();
        await ingest?.stop();
      },
    },
  );
  const api = rawApi(system);

  before(async () => {
    const { amqpUrl } = await findInfrastructure();
    // webhook-ingest, replaced on its own port by one whose broker and database the tests can cut, with two
    // secrets configured as during a rotation.
    const env = system.environment('webhook-ingest');
    ingestBroker = await startTcpProxy(hostAndPort(env.AMQP_URL as string, 5672));
    ingestDatabase = await startTcpProxy(hostAndPort(env.DATABASE_URL as string, 5432));
    await system.kill('webhook-ingest');
    ingest = await startCopy(system, 'webhook-ingest', {
      port: portsOf(system)['webhook-ingest'],
      env: {
        AMQP_URL: viaProxy(env.AMQP_URL as string, ingestBroker),
        DATABASE_URL: viaProxy(env.DATABASE_URL as string, ingestDatabase),
        WEBHOOK_SECRETS: `${system.webhookSecret},${NEXT_SECRET}`,
      },
    });
    tap = await tapEvents(amqpUrl, env.AMQP_NAMESPACE as string);
    ledgerDb = new pg.Client({ connectionString: system.environment('ledger').DATABASE_URL });
    await ledgerDb.connect();
    const { token, client } = await signUp(system.gatewayUrl);
    const account = await client.accounts.open({ currency: 'USD' });
    owner = { token, client, accountId: account.id };
  });

  after(async () => {
    for (const proxy of [ledgerBroker, ingestBroker, ingestDatabase]) await proxy?.close();
  });

  const balance = () => owner.client.balances.get(owner.accountId);

  const transaction = (id: string) => owner.client.transactions.get(id);

  const settled = (id: string) =>
    eventually(
      () => transaction(id),
      (found) => found.status !== 'pending',
      { timeoutMs: 15_000 },
    );

  /** A deposit or withdrawal accepted (pending); resolves with its transaction id. */
  const request = async (
    operation: 'deposit' | 'withdraw',
    amount: number,
    headers?: Record<string, string>,
  ) => {
    const accepted = await owner.client.money[operation](
      owner.accountId,
      { amount, currency: 'USD' },
      headers && { headers },
    );
    expect(accepted.status).to.equal('pending');
    return accepted.id;
  };

  const postProvider = (body: string, header?: string, headers: Record<string, string> = {}) =>
    api.request('POST', '/webhook/provider', {
      raw: body,
      headers: {
        'content-type': 'application/json',
        ...(header === undefined ? {} : { 'provider-signature': header }),
        ...headers,
      },
    });

  /** Sends a provider event signed with the current secret, as the provider would. */
  const deliver = (event: object, headers?: Record<string, string>) => {
    const body = JSON.stringify(event);
    return postProvider(body, signature(body, system.webhookSecret), headers);
  };

  const expect200 = (response: ApiResponse) => {
    expect(response.status, response.text).to.equal(200);
    expect(response.text).to.equal('');
  };

  /** Deposits and confirms through the provider webhook; resolves once the balance shows it. */
  const funded = async (amount: number) => {
    const id = await request('deposit', amount);
    expect200(await deliver(providerEvent('payment_intent.succeeded', id, Math.round(amount * 100))));
    expect((await settled(id)).status).to.equal('completed');
  };

  const published = (type: string, transactionId: string) =>
    tap.events.filter((e) => e.type === type && e.data.transaction_id === transactionId);
  /** Distinct envelopes: after an outage the republisher and the provider's retry may both publish one event. */
  const distinctPublished = (type: string, transactionId: string) =>
    new Set(published(type, transactionId).map((e) => e.id));

  describe('signatures', () => {
    const signedWith = (event: object, secret: string): [string, string] => {
      const body = JSON.stringify(event);
      return [body, signature(body, secret)];
    };

    it('answers 400 to every bad signature and credits nothing', async () => {
      const before = await balance();
      const id = await request('deposit', 20);
      const event = providerEvent('payment_intent.succeeded', id, 2000);
      const body = JSON.stringify(event);
      const tampered = JSON.stringify({
        ...event,
        data: { object: { ...event.data.object, amount: 200_000 } },
      });
      const mac = signature(body, system.webhookSecret).split(',')[1]?.slice(3);
      // Each header is made as its request goes out: made up front, "301 s in the future" (whole seconds, rounded
      // down) was only 300 s ahead by the time a busy machine checked it, and was rightly let through.
      const attempts: [string, string, () => string | undefined][] = [
        ['missing', body, () => undefined],
        ['malformed', body, () => 'definitely not a signature'],
        ['malformed timestamp', body, () => `t=yesterday,v1=${mac}`],
        ['wrong secret', body, () => signature(body, 'whsec_someone_else')],
        ['tampered body', tampered, () => signature(body, system.webhookSecret)],
        ['301 s old', body, () => signature(body, system.webhookSecret, nowSeconds() - 301)],
        [
          '301 s in the future',
          body,
          () => signature(body, system.webhookSecret, Math.ceil(Date.now() / 1000) + 301),
        ],
        ['v0 only', body, () => signature(body, system.webhookSecret, nowSeconds(), 'v0')],
      ];
      for (const [what, sent, header] of attempts) {
        const response = await postProvider(sent, header());
        expect(response.status, `${what}: ${response.text}`).to.equal(400);
        expect(response.body, what)
          .to.have.property('error')
          .that.matches(/signature/);
      }
      const statusBody = JSON.stringify({
        payment_id: id,
        status: 'completed',
        amount: 2000,
        currency: 'USD',
      });
      for (const header of [undefined, signature(statusBody, 'whsec_someone_else')]) {
        const response = await api.request('POST', '/webhook/payment-status', {
          raw: statusBody,
          headers: {
            'content-type': 'application/json',
            ...(header ? { 'x-webhook-signature': header } : {}),
          },
        });
        expect(response.status, response.text).to.equal(400);
      }

      await sleep(SETTLE_MS);
      expect(published('PaymentProcessed', id)).to.deep.equal([]);
      expect((await transaction(id)).status).to.equal('pending');
      expect(await balance()).to.deep.equal(before);
      // The very same event, correctly signed, goes through: the refusals were about the signatures.
      expect200(await postProvider(body, signature(body, system.webhookSecret)));
      expect((await settled(id)).status).to.equal('completed');
      expect((await balance()).balance).to.equal(before.balance + 20);
    });

    it("accepts a header made by the stripe package's generateTestHeaderString", async () => {
      const id = await request('deposit', 5);
      const payload = JSON.stringify(providerEvent('payment_intent.succeeded', id, 500));
      const header = Stripe.webhooks.generateTestHeaderString({ payload, secret: system.webhookSecret });
      expect200(await postProvider(payload, header));
      expect((await settled(id)).status).to.equal('completed');
    });

    it('accepts either secret while two are configured, alone or side by side in one header', async () => {
      const first = await request('deposit', 1);
      expect200(
        await postProvider(...signedWith(providerEvent('payment_intent.succeeded', first, 100), NEXT_SECRET)),
      );
      const second = await request('deposit', 2);
      const body = JSON.stringify(providerEvent('payment_intent.succeeded', second, 200));
      const t = nowSeconds();
      const both = `${signature(body, 'whsec_retired_long_ago', t)},${signature(body, NEXT_SECRET, t).split(',')[1]}`;
      expect200(await postProvider(body, both));
      expect((await settled(first)).status).to.equal('completed');
      expect((await settled(second)).status).to.equal('completed');
    });
  });

  describe('provider event types', () => {
    it('keeps a deposit pending after a failed attempt, showing why, and credits it once when a retry succeeds', async () => {
      const before = (await balance()).balance;
      const deposit = await request('deposit', 11);
      const declined = (message: string) =>
        providerEvent('payment_intent.payment_failed', deposit, 1100, 'usd', {
          status: 'requires_payment_method',
          last_payment_error: { message },
        });
      expect200(await deliver(declined('Your card was declined.')));
      const noted = await eventually(
        () => transaction(deposit),
        (found) => found.failure_reason === 'Your card was declined.',
        { timeoutMs: 15_000 },
      );
      expect(noted).to.include({ status: 'pending' });
      expect200(await deliver(declined('Your card has insufficient funds.')));
      await eventually(
        () => transaction(deposit),
        (found) => found.failure_reason === 'Your card has insufficient funds.',
        { timeoutMs: 15_000 },
      );
      const success = providerEvent('payment_intent.succeeded', deposit, 1100);
      expect200(await deliver(success));
      expect200(await deliver(success));
      expect(await settled(deposit)).to.include({ status: 'completed' });
      // An attempt reported after the payment succeeded changes nothing.
      expect200(await deliver(declined('A late decline.')));
      await sleep(500);
      expect(await transaction(deposit)).to.include({ status: 'completed' });
      expect((await balance()).balance).to.equal(before + 11);
    });

    it('cancels a deposit on payment_intent.canceled, crediting nothing', async () => {
      const before = (await balance()).balance;
      const deposit = await request('deposit', 12);
      expect200(
        await deliver(
          providerEvent('payment_intent.canceled', deposit, 1200, 'usd', {
            status: 'canceled',
            cancellation_reason: 'abandoned',
          }),
        ),
      );
      expect(await settled(deposit)).to.include({
        status: 'canceled',
        failure_reason: 'canceled at the provider (abandoned)',
      });
      expect((await balance()).balance).to.equal(before);
    });

    const reversalsOf = async (originalId: string) =>
      (await owner.client.transactions.listPage({ type: 'reversal', limit: 100 })).data.filter(
        (t) => t.original_transaction_id === originalId,
      );

    it('credits back a paid payout the provider returns, once, through a reversal linked to the withdrawal', async () => {
      await funded(100);
      const start = await balance();
      const withdrawal = await request('withdraw', 30);
      expect200(await deliver(providerEvent('payout.paid', withdrawal, 3000)));
      expect(await settled(withdrawal)).to.include({ status: 'completed' });
      const returned = (id = `evt_${randomUUID()}`) => ({
        ...providerEvent('payout.failed', withdrawal, 3000, 'usd', {
          failure_message: 'The bank returned it.',
        }),
        id,
      });
      const first = returned();
      // The same event twice, another event reporting the same return, all at once.
      const answers = await Promise.all([
        deliver(first),
        deliver(first),
        deliver(returned()),
        deliver(returned()),
      ]);
      for (const answer of answers) expect200(answer);
      const [reversal] = await eventually(
        () => reversalsOf(withdrawal),
        (found) => found.length > 0 && found.every((t) => t.status === 'completed'),
        { timeoutMs: 15_000 },
      );
      expect(reversal).to.include({
        type: 'reversal',
        status: 'completed',
        reversal_reason: 'payout_returned',
        amount: 30,
        currency: 'USD',
      });
      await sleep(500);
      expect(await reversalsOf(withdrawal)).to.have.length(1);
      expect(await transaction(withdrawal)).to.include({ status: 'completed' });
      expect(await balance()).to.include({ balance: start.balance, available_balance: start.balance });
      await expectBooksBalance(system.urls.ledger);
    });

    it('credits a payment the provider captured after its deposit was canceled, once, linked to the deposit', async () => {
      const before = (await balance()).balance;
      const deposit = await request('deposit', 14);
      expect200(
        await deliver(providerEvent('payment_intent.canceled', deposit, 1400, 'usd', { status: 'canceled' })),
      );
      expect(await settled(deposit)).to.include({ status: 'canceled' });
      const captured = () => providerEvent('payment_intent.succeeded', deposit, 1400);
      const answers = await Promise.all([deliver(captured()), deliver(captured())]);
      for (const answer of answers) expect200(answer);
      const [credit] = await eventually(
        () => reversalsOf(deposit),
        (found) => found.length > 0,
        { timeoutMs: 15_000 },
      );
      expect(credit).to.include({ status: 'completed', reversal_reason: 'late_payment', amount: 14 });
      await sleep(500);
      expect(await reversalsOf(deposit)).to.have.length(1);
      expect(await transaction(deposit)).to.include({ status: 'canceled' });
      expect((await balance()).balance).to.equal(before + 14);
      await expectBooksBalance(system.urls.ledger);
    });

    it('completes a deposit on payment_intent.succeeded', async () => {
      const before = (await balance()).balance;
      const succeeded = await request('deposit', 10);
      expect200(await deliver(providerEvent('payment_intent.succeeded', succeeded, 1000)));
      expect(await settled(succeeded)).to.include({ status: 'completed' });
      expect((await balance()).balance).to.equal(before + 10);
    });

    it('completes a withdrawal on payout.paid and fails one on payout.failed, releasing its hold', async () => {
      await funded(100);
      const start = await balance();
      const paid = await request('withdraw', 30);
      const refused = await request('withdraw', 40);
      expect(await balance()).to.include({ balance: start.balance, available_balance: start.balance - 70 });
      expect200(await deliver(providerEvent('payout.paid', paid, 3000)));
      expect200(
        await deliver(
          providerEvent('payout.failed', refused, 4000, 'usd', { failure_message: 'Account closed.' }),
        ),
      );
      expect(await settled(paid)).to.include({ status: 'completed' });
      expect(await settled(refused)).to.include({ status: 'failed', failure_reason: 'Account closed.' });
      expect(await balance()).to.include({
        balance: start.balance - 30,
        available_balance: start.balance - 30,
      });
    });

    it('fails the transaction when the provider reports another amount or currency, crediting nothing', async () => {
      const before = (await balance()).balance;
      const wrongAmount = await request('deposit', 50);
      const wrongCurrency = await request('deposit', 60);
      expect200(await deliver(providerEvent('payment_intent.succeeded', wrongAmount, 5001)));
      expect200(await deliver(providerEvent('payment_intent.succeeded', wrongCurrency, 6000, 'eur')));
      const amountOutcome = await settled(wrongAmount);
      expect(amountOutcome.status).to.equal('failed');
      expect(amountOutcome.failure_reason).to.match(/5001/);
      const currencyOutcome = await settled(wrongCurrency);
      expect(currencyOutcome.status).to.equal('failed');
      expect(currencyOutcome.failure_reason).to.match(/EUR/);
      expect((await balance()).balance).to.equal(before);
    });

    it('answers 200 to an event type it does not handle, and changes nothing', async () => {
      const id = await request('deposit', 3);
      expect200(await deliver(providerEvent('payment_intent.created', id, 300)));
      await sleep(SETTLE_MS);
      expect((await transaction(id)).status).to.equal('pending');
      expect(published('PaymentProcessed', id)).to.deep.equal([]);
      expect200(await deliver(providerEvent('payment_intent.succeeded', id, 300)));
      expect((await settled(id)).status).to.equal('completed');
    });

    it('takes effect once when the same provider event arrives ten times at once', async () => {
      const before = (await balance()).balance;
      const id = await request('deposit', 25);
      const body = JSON.stringify(providerEvent('payment_intent.succeeded', id, 2500));
      const header = signature(body, system.webhookSecret);
      const answers = await Promise.all(Array.from({ length: 10 }, () => postProvider(body, header)));
      expect(answers.map((a) => a.status)).to.deep.equal(Array(10).fill(200));
      expect((await settled(id)).status).to.equal('completed');
      await sleep(SETTLE_MS);
      expect((await balance()).balance).to.equal(before + 25);
      expect(published('PaymentProcessed', id)).to.have.length(1);
      expect(published('TransactionCompleted', id)).to.have.length(1);
    });
  });

  describe('failures', () => {
    /** A process's readiness as anyone asks it (no credential); undefined when nothing answers. */
    const ready = (url: string) =>
      createPaymentsClient({ baseUrl: url })
        .rawRequest('GET', '/ready', { versioned: false, auth: false, timeoutMs: 2000 })
        .then(
          (answer) => answer.status,
          () => undefined,
        );

    /** A provider retries until it gets a 200; so does this, briefly. */
    const retryUntilAccepted = (event: object) =>
      eventually(
        () => deliver(event),
        (response) => response.status === 200,
        { timeoutMs: 15_000, intervalMs: 250 },
      );

    it('answers 500 while RabbitMQ is unreachable, and the provider’s retry credits once when it is back', async () => {
      const before = (await balance()).balance;
      const id = await request('deposit', 30);
      const event = providerEvent('payment_intent.succeeded', id, 3000);
      ingestBroker.cut();
      try {
        const refused = await deliver(event);
        expect(refused.status, refused.text).to.equal(500);
        expect(refused.body).to.deep.equal({ error: 'internal error' });
        expect(
          await eventually(
            () => ready(ingest.urls['webhook-ingest']),
            (s) => s === 503,
          ),
        ).to.equal(503);
        await sleep(SETTLE_MS);
        expect((await transaction(id)).status).to.equal('pending');
      } finally {
        ingestBroker.restore();
      }
      expect200(await retryUntilAccepted(event));
      expect((await settled(id)).status).to.equal('completed');
      expect200(await deliver(event));
      await sleep(SETTLE_MS);
      expect((await balance()).balance).to.equal(before + 30);
      expect(distinctPublished('PaymentProcessed', id).size).to.equal(1);
      expect(published('TransactionCompleted', id)).to.have.length(1);
    });

    it('answers 500 while its database is unreachable, and the retry credits once when it is back', async () => {
      const before = (await balance()).balance;
      const id = await request('deposit', 31);
      const event = providerEvent('payment_intent.succeeded', id, 3100);
      ingestDatabase.cut();
      try {
        const refused = await deliver(event);
        expect(refused.status, refused.text).to.equal(500);
        expect(refused.body).to.deep.equal({ error: 'internal error' });
        await sleep(SETTLE_MS);
        expect((await transaction(id)).status).to.equal('pending');
      } finally {
        ingestDatabase.restore();
      }
      expect200(await retryUntilAccepted(event));
      expect((await settled(id)).status).to.equal('completed');
      expect200(await deliver(event));
      await sleep(SETTLE_MS);
      expect((await balance()).balance).to.equal(before + 31);
      expect(distinctPublished('PaymentProcessed', id).size).to.equal(1);
      expect(published('TransactionCompleted', id)).to.have.length(1);
    });

    it('publishes the outbox rows the ledger wrote while RabbitMQ was unreachable once it is back', async () => {
      ledgerBroker.cut();
      let ids: string[] = [];
      try {
        await eventually(
          async () => {
            const metrics = await fetch(new URL('/metrics', system.urls.ledger), {
              headers: { authorization: `Bearer ${system.serviceToken}` },
            });
            return /^event_bus_connected(?:\{[^}]*\})? 0$/m.test(await metrics.text());
          },
          Boolean,
          { what: 'the ledger to see the broker gone' },
        );
        // Ready and accepting all the same: the DepositRequested events wait in the ledger's outbox.
        expect(await ready(system.urls.ledger)).to.equal(200);
        ids = [await request('deposit', 1), await request('deposit', 2), await request('deposit', 3)];
        await sleep(SETTLE_MS);
        expect(ids.flatMap((id) => published('DepositRequested', id))).to.deep.equal([]);
        const waiting = await ledgerDb.query(
          `SELECT count(*)::int AS n FROM outbox WHERE published_at IS NULL AND event->'data'->>'transaction_id' = ANY($1)`,
          [ids],
        );
        expect(waiting.rows[0].n).to.equal(3);
      } finally {
        ledgerBroker.restore();
      }
      const delivered = await eventually(
        async () => ids.map((id) => published('DepositRequested', id).length),
        (counts) => counts.every((n) => n > 0),
        { timeoutMs: 20_000, intervalMs: 250 },
      );
      expect(delivered).to.deep.equal([1, 1, 1]);
      const left = await ledgerDb.query(
        `SELECT count(*)::int AS n FROM outbox WHERE published_at IS NULL AND event->'data'->>'transaction_id' = ANY($1)`,
        [ids],
      );
      expect(left.rows[0].n).to.equal(0);
      for (const id of ids)
        expect200(await deliver(providerEvent('payment_intent.succeeded', id, 100 * (ids.indexOf(id) + 1))));
      for (const id of ids) expect((await settled(id)).status).to.equal('completed');
    });

    it('changes nothing on redelivery when the ledger dies after its commit and before its ack', async () => {
      const before = (await balance()).balance;
      const id = await request('deposit', 40);
      await system.kill('ledger', 'SIGKILL');
      // A ledger on the same port and queue that kills itself right after committing this confirmation.
      const crashing = await startCopy(system, 'ledger', {
        port: portsOf(system).ledger,
        entry: { script: './crashing-ledger.ts', args: [id] },
      });
      try {
        expect200(await deliver(providerEvent('payment_intent.succeeded', id, 4000)));
        await eventually(
          () => ready(system.urls.ledger),
          (status) => status === undefined,
          { timeoutMs: 15_000 },
        );
        const committed = await ledgerDb.query('SELECT status FROM transactions WHERE id = $1', [id]);
        expect(committed.rows[0]?.status).to.equal('completed');
        // Never acknowledged: the confirmation is back on the queue, waiting for a consumer.
        expect(
          await eventually(
            () => tap.depth('ledger.events'),
            (n) => n === 1,
          ),
        ).to.equal(1);
      } finally {
        await crashing.stop();
        await system.restart('ledger');
      }
      expect(
        await eventually(
          () => tap.depth('ledger.events'),
          (n) => n === 0,
        ),
      ).to.equal(0);
      await eventually(
        async () => published('TransactionCompleted', id),
        (events) => events.length > 0,
      );
      await sleep(SETTLE_MS);
      expect(await balance()).to.include({ balance: before + 40 });
      expect((await transaction(id)).status).to.equal('completed');
    });

    it('dead-letters a poison message while later events flow, and `pnpm dlq` lists and replays', async () => {
      const poison = '{"id": "not-an-event", "type": "PaymentProcessed", ';
      await tap.publishRaw('payment.processed', poison);
      expect(
        await eventually(
          () => tap.depth('ledger.events.dlq'),
          (n) => n === 1,
        ),
      ).to.equal(1);
      await funded(4); // later events still flow

      // A confirmation dead-lettered earlier (say, while a bug was live), waiting for a replay.
      const stranded = await request('deposit', 6);
      const strandedEvent = JSON.stringify(aPaymentConfirmation(stranded, 600));
      await tap.sendToQueue('ledger.events.dlq', strandedEvent);

      const env = {
        ...process.env,
        AMQP_URL: (await findInfrastructure()).amqpUrl,
        AMQP_NAMESPACE: system.environment('ledger').AMQP_NAMESPACE,
      };
      const [pnpm, pnpmArgs] = pnpmCommand();
      const dlq = (...args: string[]) =>
        run(pnpm, [...pnpmArgs, '--silent', 'dlq', ...args], { env, cwd: ROOT });
      const listed = await dlq('list', 'ledger');
      expect(listed.stdout.trim().split('\n')).to.deep.equal([poison, strandedEvent]);
      expect(listed.stderr).to.match(/2 dead letter\(s\) listed/);
      expect(await tap.depth('ledger.events.dlq')).to.equal(2);
      expect((await transaction(stranded)).status).to.equal('pending');

      const replayed = await dlq('replay', 'ledger', '--limit', '10');
      expect(replayed.stderr).to.match(/2 dead letter\(s\) replayed/);
      expect((await settled(stranded)).status).to.equal('completed');
      // The poison goes straight back: replaying it cannot make it valid.
      expect(
        await eventually(
          () => tap.depth('ledger.events.dlq'),
          (n) => n === 1,
        ),
      ).to.equal(1);

      const { text: metrics } = await rawApi(system.urls.ledger).get('/metrics', system.serviceToken);
      const deadLettered = /^events_dead_lettered_total\{[^}]*queue="ledger"[^}]*\} (\d+)/m.exec(metrics);
      expect(Number(deadLettered?.[1])).to.be.at.least(2);
    });
  });

  // Last: the counters cover what every test before sent.
  describe('observability', () => {
    it('ties the deposit request, its events, the webhook and the ledger change together by correlation id', async () => {
      const depositRequestId = `e2e-deposit-${randomUUID()}`;
      const webhookRequestId = `e2e-webhook-${randomUUID()}`;
      const id = await request('deposit', 7, { 'x-request-id': depositRequestId });
      const requested = await eventually(
        async () => published('DepositRequested', id),
        (events) => events.length > 0,
      );
      expect(requested.map((e) => e.correlation_id)).to.deep.equal([depositRequestId]);
      expect200(
        await deliver(providerEvent('payment_intent.succeeded', id, 700), {
          'x-request-id': webhookRequestId,
        }),
      );
      const completed = await eventually(
        async () => published('TransactionCompleted', id),
        (events) => events.length > 0,
      );
      expect(published('PaymentProcessed', id).map((e) => e.correlation_id)).to.deep.equal([
        webhookRequestId,
      ]);
      expect(completed.map((e) => e.correlation_id)).to.deep.equal([webhookRequestId]);
    });

    it('counts received, rejected, published and duplicate webhook events on /metrics', async () => {
      const { text: metrics } = await rawApi(ingest.urls['webhook-ingest']).get(
        '/metrics',
        system.serviceToken,
      );
      for (const name of [
        'webhook_events_received_total',
        'webhook_events_rejected_total',
        'webhook_events_published_total',
        'webhook_events_duplicate_total',
      ]) {
        const sample = new RegExp(`^${name}\\{[^}]*source="provider"[^}]*\\} (\\d+)`, 'm').exec(metrics);
        expect(Number(sample?.[1]), name).to.be.greaterThan(0);
      }
    });
  });
});
