import { randomUUID } from 'node:crypto';
import { createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { expect } from 'chai';
import pg from 'pg';
import Stripe from 'stripe';
import type { EventEnvelope } from '@payments/contracts';
import {
  BusUnavailableError,
  createAmqpBus,
  createLogger,
  loadConfig,
  serviceAuthorization,
  signWebhookPayload,
  type AmqpBus,
  type Consumer,
  type RunningService,
} from '@payments/service-kit';
import {
  createTestBroker,
  createTestDatabase,
  closedPort,
  eventually,
  startTcpProxy,
  viaProxy,
  type TestBroker,
  type TestDatabase,
} from '@payments/testkit';
import { startWebhookIngest, WebhookIngestConfigSchema } from '../src/index.js';
import { envelopeIdOf } from '../src/domain/webhook-event.js';

// As long as production asks (32 bytes), so the production tests run on them too.
const SECRET = 'whsec_component_current_0123456789';
const NEXT_SECRET = 'whsec_component_next_0123456789abc';
const SERVICE_TOKEN = 'webhook-ingest-component-test-service-token';
const silent = createLogger('webhook-ingest-test', 'silent');

type PaymentProcessed = EventEnvelope<'PaymentProcessed'>;
type PaymentAdjusted = EventEnvelope<'PaymentAdjusted'>;

interface Reply {
  status: number;
  text: string;
  json: unknown;
}

describe('webhook-ingest (real Postgres and RabbitMQ)', function () {
  this.timeout(30_000);

  let database: TestDatabase;
  let broker: TestBroker;
  let service: RunningService;
  let observer: AmqpBus;
  let consumer: Consumer;
  let sql: pg.Client;
  const received: PaymentProcessed[] = [];
  const adjusted: PaymentAdjusted[] = [];
  /** Stands in for the ledger's `GET /internal/payments/:id`: 404 for ids it does not hold, 500 while down. */
  let ledger: Server;
  const ledgerPayments = new Map<string, { type: string; amount: number; currency: string }>();
  const ledgerLookups: string[] = [];
  let ledgerDown = false;

  const configFor = (env: Record<string, string> = {}) =>
    loadConfig(WebhookIngestConfigSchema, {
      PORT: '0',
      NODE_ENV: 'test',
      LOG_LEVEL: 'silent',
      // As deployed: migrated as the owner, run as a role that owns nothing (what production insists on).
      DATABASE_URL: database.roles?.runtimeUrl as string,
      MIGRATION_DATABASE_URL: database.roles?.ownerUrl as string,
      AMQP_URL: broker.url,
      AMQP_NAMESPACE: broker.namespace,
      WEBHOOK_SECRETS: `${SECRET},${NEXT_SECRET}`,
      SERVICE_TOKEN,
      // The tests mark the end of what they published with an unsigned webhook.
      UNSIGNED_WEBHOOK_ENABLED: 'true',
      LEDGER_URL: `http://127.0.0.1:${(ledger.address() as AddressInfo).port}`,
      // Only the test about republishing republishes, so no test sees another's leftovers published under it.
      WEBHOOK_REPUBLISH_AFTER_SECONDS: '3600',
      ...env,
    });

  const post = async (
    target: RunningService,
    path: string,
    body: string | object,
    headers: Record<string, string> = {},
  ): Promise<Reply> => {
    const response = await fetch(`${target.url}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: typeof body === 'string' ? body : JSON.stringify(body),
    });
    const text = await response.text();
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      json = null;
    }
    return { status: response.status, text, json };
  };

  const signedPost = (path: string, body: object, secret = SECRET, target = service) => {
    const raw = JSON.stringify(body);
    const header = path === '/webhook/provider' ? 'Provider-Signature' : 'X-Webhook-Signature';
    return post(target, path, raw, { [header]: signWebhookPayload(raw, secret) });
  };

  const providerEvent = (type: string, object: Record<string, unknown> = {}) => ({
    id: `evt_${randomUUID()}`,
    object: 'event',
    type,
    data: {
      object: {
        id: `pi_${randomUUID()}`,
        object: 'payment_intent',
        amount: 10050,
        currency: 'usd',
        status: 'succeeded',
        metadata: { transaction_id: randomUUID() },
        ...object,
      },
    },
  });

  /**
   * What the service published from `since` on, up to a marker event published after everything the test did:
   * events from one publisher arrive in order, so anything published before the marker is already here.
   */
  const publishedSince = async (since: number, target = service): Promise<PaymentProcessed[]> => {
    const marker = `marker-${randomUUID()}`;
    expect(
      (await post(target, '/webhook/payment', { payment_id: marker, status: 'completed' })).status,
    ).to.equal(200);
    await eventually(async () => received.some((e) => e.data.payment_id === marker), Boolean);
    return received.slice(since).filter((e) => e.data.payment_id !== marker);
  };

  const storedEvent = async (eventId: string) => {
    const { rows } = await sql.query<{ outcome: string; published_at: Date | null; source: string }>(
      'SELECT outcome, published_at, source FROM webhook_events WHERE event_id = $1',
      [eventId],
    );
    return rows[0];
  };

  before(async () => {
    ledger = createServer((req, res) => {
      // The real ledger's /internal paths need the service credential.
      if (req.headers.authorization !== `Bearer ${SERVICE_TOKEN}`) {
        res.writeHead(401, { 'content-type': 'application/json' }).end('{}');
        return;
      }
      const id = decodeURIComponent(/^\/internal\/payments\/([^/]+)$/.exec(req.url ?? '')?.[1] ?? '');
      ledgerLookups.push(id);
      const payment = ledgerPayments.get(id);
      res.statusCode = ledgerDown ? 500 : payment ? 200 : 404;
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify(payment ? { transaction_id: id, status: 'pending', ...payment } : {}));
    });
    await new Promise<void>((resolve) => ledger.listen(0, '127.0.0.1', resolve));
    [database, broker] = await Promise.all([
      createTestDatabase('webhook_ingest', { roles: true }),
      createTestBroker(),
    ]);
    service = await startWebhookIngest(configFor());
    observer = createAmqpBus({ url: broker.url, namespace: broker.namespace, logger: silent });
    await observer.start();
    consumer = await observer.consume('ledger', {
      PaymentProcessed: async (event) => {
        received.push(event);
      },
      PaymentAdjusted: async (event) => {
        adjusted.push(event);
      },
    });
    sql = new pg.Client({ connectionString: database.url });
    await sql.connect();
  });

  after(async () => {
    await consumer?.stop();
    await observer?.close();
    await service?.stop();
    await sql?.end();
    await Promise.all([database?.drop(), broker?.cleanup()]);
    await new Promise((resolve) => ledger?.close(resolve));
  });

  describe('webhook calls with a Content-Length or a chunked body', () => {
    /** The same call sent with a Content-Length and chunked. */
    const both = async (path: string, raw: string, headers: Record<string, string>) => {
      const send = (chunked: boolean) =>
        new Promise<{ status: number; headers: Record<string, unknown>; text: string }>((resolve, reject) => {
          const url = new URL(`${service.url}${path}`);
          const request = httpRequest(
            {
              host: url.hostname,
              port: url.port,
              path,
              method: 'POST',
              headers: chunked
                ? { ...headers, 'transfer-encoding': 'chunked' }
                : { ...headers, 'content-length': Buffer.byteLength(raw) },
            },
            (response) => {
              let text = '';
              response.setEncoding('utf8');
              response.on('data', (chunk: string) => (text += chunk));
              response.on('end', () =>
                resolve({ status: response.statusCode ?? 0, headers: response.headers, text }),
              );
            },
          );
          request.on('error', reject);
          request.end(raw);
        });
      return [await send(false), await send(true)];
    };
    const comparable = (reply: { status: number; headers: Record<string, unknown>; text: string }) => ({
      status: reply.status,
      text: reply.text,
      'content-type': reply.headers['content-type'],
      'content-length': reply.headers['content-length'],
      'x-request-id': reply.headers['x-request-id'],
    });
    const durationCount = async (route: string, status: number) => {
      const response = await fetch(`${service.url}/metrics`, {
        headers: serviceAuthorization(SERVICE_TOKEN),
      });
      const line = (await response.text())
        .split('\n')
        .find(
          (l) =>
            l.startsWith('http_request_duration_seconds_count{') &&
            l.includes(`route="${route}"`) &&
            l.includes(`status="${status}"`) &&
            l.includes('method="POST"'),
        );
      return line ? Number(line.split(' ').at(-1)) : 0;
    };

    it('answers both alike, with the request id, and counts each request', async () => {
      const raw = JSON.stringify(providerEvent('payment_intent.succeeded'));
      const headers = { 'content-type': 'application/json', 'x-request-id': 'req-webhook-1' };
      const before = await durationCount('/webhook/provider', 400);
      const unsigned = await both('/webhook/provider', raw, headers);
      expect(comparable(unsigned[0]!)).to.deep.equal(comparable(unsigned[1]!));
      expect(comparable(unsigned[0]!)).to.include({
        status: 400,
        'content-type': 'application/json; charset=utf-8',
        'x-request-id': 'req-webhook-1',
      });
      expect(JSON.parse(unsigned[0]!.text)).to.deep.equal({
        error: 'invalid signature: the Provider-Signature header is missing',
      });
      expect(await durationCount('/webhook/provider', 400)).to.equal(before + 2);

      const invalid = await both('/webhook/payment', '{"payment_id": ', headers);
      expect(comparable(invalid[0]!)).to.deep.equal(comparable(invalid[1]!));
      expect(invalid[0]!.text).to.equal('{"error":"invalid payload"}');

      const signed = { ...headers, 'Provider-Signature': signWebhookPayload(raw, SECRET) };
      const accepted = await both('/webhook/provider', raw, signed);
      expect(comparable(accepted[0]!)).to.deep.equal(comparable(accepted[1]!));
      expect(comparable(accepted[0]!)).to.include({ status: 200, text: '', 'content-length': '0' });

      // A request id that is not one is replaced, either way.
      const odd = await both('/webhook/payment', '[]', { ...headers, 'x-request-id': 'no spaces allowed' });
      expect(odd.map((reply) => reply.headers['x-request-id'])).to.satisfy((ids: unknown[]) =>
        ids.every((id) => typeof id === 'string' && id !== 'no spaces allowed'),
      );
    });
  });

  describe('POST /webhook/payment', () => {
    it('answers 200 with an empty body and publishes one PaymentProcessed for a completed payment', async () => {
      const since = received.length;
      const transactionId = randomUUID();
      const response = await fetch(`${service.url}/webhook/payment`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-request-id': 'req-webhook-1' },
        body: JSON.stringify({ payment_id: transactionId, status: 'completed' }),
      });
      expect(response.status).to.equal(200);
      expect(await response.text()).to.equal('');

      const events = await publishedSince(since);
      expect(events).to.have.length(1);
      expect(events[0]?.id).to.equal(envelopeIdOf(`payment:${transactionId}:completed`));
      expect(events[0]?.correlation_id).to.equal('req-webhook-1');
      expect(events[0]?.data).to.deep.equal({
        transaction_id: transactionId,
        payment_id: transactionId,
        status: 'completed',
        source: 'payment',
      });
      expect(await storedEvent(`payment:${transactionId}:completed`)).to.include({
        outcome: 'completed',
        source: 'payment',
      });
    });

    it('publishes a failed payment with a failure reason', async () => {
      const since = received.length;
      const transactionId = randomUUID();
      expect(
        (await post(service, '/webhook/payment', { payment_id: transactionId, status: 'failed' })).status,
      ).to.equal(200);
      const events = await publishedSince(since);
      expect(events.map((e) => e.data)).to.deep.equal([
        {
          transaction_id: transactionId,
          payment_id: transactionId,
          status: 'failed',
          source: 'payment',
          failure_reason: 'the payment provider reported the payment as failed',
        },
      ]);
    });

    it('records a pending status and publishes nothing', async () => {
      const since = received.length;
      const transactionId = randomUUID();
      const reply = await post(service, '/webhook/payment', { payment_id: transactionId, status: 'pending' });
      expect(reply).to.include({ status: 200, text: '' });
      expect(await publishedSince(since)).to.deep.equal([]);
      expect(await storedEvent(`payment:${transactionId}:pending`)).to.include({
        outcome: 'ignored',
        published_at: null,
      });
    });

    const invalid: [string, string][] = [
      ['an unknown status', JSON.stringify({ payment_id: 'tx', status: 'done' })],
      ['a missing payment_id', JSON.stringify({ status: 'completed' })],
      ['a missing status', JSON.stringify({ payment_id: 'tx' })],
      ['malformed JSON', '{"payment_id": "tx", "status": '],
      ['an empty body', ''],
      ['a JSON array', '[]'],
    ];
    for (const [what, body] of invalid) {
      it(`answers 400 { error: "invalid payload" } for ${what}`, async () => {
        const since = received.length;
        const reply = await post(service, '/webhook/payment', body);
        expect(reply.status).to.equal(400);
        expect(reply.json).to.deep.equal({ error: 'invalid payload' });
        expect(await publishedSince(since)).to.deep.equal([]);
      });
    }

    it('answers 413 { error } for a body over 64 kB', async () => {
      const reply = await post(service, '/webhook/payment', {
        payment_id: 'x'.repeat(70_000),
        status: 'completed',
      });
      expect(reply.status).to.equal(413);
      expect(reply.json).to.have.keys('error');
    });
  });

  describe('completions that do not say what was paid', () => {
    const knownDeposit = (amount = 4200, currency = 'USD') => {
      const transactionId = randomUUID();
      ledgerPayments.set(transactionId, { type: 'deposit', amount, currency });
      return transactionId;
    };

    it('publishes /webhook/payment with the amount and currency the ledger holds for the payment', async () => {
      const since = received.length;
      const transactionId = knownDeposit(4200, 'JPY');
      const reply = await post(service, '/webhook/payment', {
        payment_id: transactionId,
        status: 'completed',
      });
      expect(reply).to.include({ status: 200, text: '' });
      expect((await publishedSince(since)).map((e) => e.data)).to.deep.equal([
        {
          transaction_id: transactionId,
          payment_id: transactionId,
          status: 'completed',
          source: 'payment',
          amount: 4200,
          currency: 'JPY',
        },
      ]);
      expect(ledgerLookups).to.include(transactionId);
    });

    it('completes a /webhook/payment-status from the ledger only where the provider was silent', async () => {
      const since = received.length;
      const silent = knownDeposit(700, 'EUR');
      const partial = knownDeposit(700, 'EUR');
      expect(
        (await signedPost('/webhook/payment-status', { payment_id: silent, status: 'completed' })).status,
      ).to.equal(200);
      // What the provider said stays: 900 against the ledger's 700 still fails the payment at the ledger.
      expect(
        (
          await signedPost('/webhook/payment-status', {
            payment_id: partial,
            status: 'completed',
            amount: 900,
          })
        ).status,
      ).to.equal(200);
      const published = await publishedSince(since);
      expect(published.map((e) => [e.data.transaction_id, e.data.amount, e.data.currency])).to.deep.equal([
        [silent, 700, 'EUR'],
        [partial, 900, 'EUR'],
      ]);
    });

    it('asks the ledger nothing for a failure or a provider event, which say enough', async () => {
      const since = received.length;
      const failed = knownDeposit();
      const event = providerEvent('payment_intent.succeeded');
      const lookups = ledgerLookups.length;
      expect(
        (await post(service, '/webhook/payment', { payment_id: failed, status: 'failed' })).status,
      ).to.equal(200);
      expect((await signedPost('/webhook/provider', event)).status).to.equal(200);
      expect(ledgerLookups.length).to.equal(lookups);
      expect(await publishedSince(since)).to.have.length(2);
    });

    it('publishes a payment the ledger does not know as before, without terms (the ledger ignores it)', async () => {
      const since = received.length;
      const unknown = randomUUID();
      expect(
        (await post(service, '/webhook/payment', { payment_id: unknown, status: 'completed' })).status,
      ).to.equal(200);
      expect((await publishedSince(since)).map((e) => e.data)).to.deep.equal([
        { transaction_id: unknown, payment_id: unknown, status: 'completed', source: 'payment' },
      ]);
    });

    it('answers 500 and records nothing while the ledger cannot say, then publishes on the retry', async () => {
      const since = received.length;
      const transactionId = knownDeposit(1234, 'USD');
      ledgerDown = true;
      try {
        const refused = await post(service, '/webhook/payment', {
          payment_id: transactionId,
          status: 'completed',
        });
        expect(refused.status).to.equal(500);
        expect(refused.json).to.deep.equal({ error: 'internal error' });
        expect(await storedEvent(`payment:${transactionId}:completed`)).to.equal(undefined);
      } finally {
        ledgerDown = false;
      }
      expect(
        (await post(service, '/webhook/payment', { payment_id: transactionId, status: 'completed' })).status,
      ).to.equal(200);
      expect((await publishedSince(since)).map((e) => [e.data.amount, e.data.currency])).to.deep.equal([
        [1234, 'USD'],
      ]);
    });
  });

  describe('POST /webhook/payment-status', () => {
    it('publishes the signed status with the amount and currency the provider reported', async () => {
      const since = received.length;
      const transactionId = randomUUID();
      const reply = await signedPost('/webhook/payment-status', {
        payment_id: 'pay_77',
        status: 'completed',
        amount: 2500,
        currency: 'eur',
        metadata: { transaction_id: transactionId, note: 'ignored' },
      });
      expect(reply).to.include({ status: 200, text: '' });
      const events = await publishedSince(since);
      expect(events.map((e) => e.data)).to.deep.equal([
        {
          transaction_id: transactionId,
          payment_id: 'pay_77',
          status: 'completed',
          source: 'payment-status',
          amount: 2500,
          currency: 'EUR',
        },
      ]);
    });

    it('answers 400 { error: "invalid payload" } for an unknown status, even when signed', async () => {
      const reply = await signedPost('/webhook/payment-status', { payment_id: 'pay_1', status: 'settled' });
      expect(reply.status).to.equal(400);
      expect(reply.json).to.deep.equal({ error: 'invalid payload' });
    });
  });

  describe('POST /webhook/provider', () => {
    const cases = [
      ['payment_intent.succeeded', 'completed', 'payment', {}],
      [
        'payment_intent.payment_failed',
        'attempt_failed',
        'payment',
        { status: 'requires_payment_method', last_payment_error: { message: 'Your card was declined.' } },
      ],
      [
        'payment_intent.canceled',
        'canceled',
        'payment',
        { status: 'canceled', cancellation_reason: 'requested_by_customer' },
      ],
      ['payout.paid', 'completed', 'payout', { object: 'payout', status: 'paid' }],
      [
        'payout.failed',
        'failed',
        'payout',
        { object: 'payout', status: 'failed', failure_message: 'No account' },
      ],
    ] as const;
    for (const [type, status, movement, object] of cases) {
      it(`publishes ${type} as ${status} (${movement})`, async () => {
        const since = received.length;
        const event = providerEvent(type, { amount: 1999, currency: 'gbp', ...object });
        const reply = await signedPost('/webhook/provider', event);
        expect(reply).to.include({ status: 200, text: '' });

        const events = await publishedSince(since);
        expect(events).to.have.length(1);
        expect(events[0]?.id).to.equal(envelopeIdOf(event.id));
        expect(events[0]?.data).to.deep.include({
          transaction_id: event.data.object.metadata.transaction_id,
          payment_id: event.data.object.id,
          status,
          source: 'provider',
          movement,
          amount: 1999,
          currency: 'GBP',
          provider_event_id: event.id,
          provider_event_type: type,
        });
        expect(Boolean(events[0]?.data.failure_reason)).to.equal(status !== 'completed');
      });
    }

    it('passes on the mode and the connected account the event names, for the ledger to compare', async () => {
      const since = received.length;
      const live = { ...providerEvent('payout.paid', { object: 'payout', status: 'paid' }), livemode: true };
      const connected = { ...providerEvent('payout.paid', { object: 'payout' }), account: 'acct_payee' };
      const platform = { ...providerEvent('payment_intent.succeeded'), livemode: false, account: null };
      for (const body of [live, connected, platform])
        expect(await signedPost('/webhook/provider', body)).to.include({ status: 200 });
      const events = await publishedSince(since);
      expect(events.map((e) => [e.data.livemode, e.data.account])).to.deep.equal([
        [true, undefined],
        [undefined, 'acct_payee'],
        [false, undefined],
      ]);
    });

    it("falls back to the object's id when the metadata names no transaction", async () => {
      const since = received.length;
      const event = providerEvent('payment_intent.succeeded', { metadata: {} });
      expect((await signedPost('/webhook/provider', event)).status).to.equal(200);
      const events = await publishedSince(since);
      expect(events.map((e) => e.data.transaction_id)).to.deep.equal([event.data.object.id]);
    });

    it('acknowledges and records other event types without publishing', async () => {
      const since = received.length;
      const event = {
        id: `evt_${randomUUID()}`,
        type: 'transfer.created',
        data: { object: { id: 'tr_1' } },
      };
      expect(await signedPost('/webhook/provider', event)).to.include({ status: 200, text: '' });
      expect(await publishedSince(since)).to.deep.equal([]);
      expect(await storedEvent(event.id)).to.include({ outcome: 'ignored', source: 'provider' });
    });

    it('answers 400 { error: "invalid provider event" } for a signed but invalid event', async () => {
      for (const body of [
        { type: 'payment_intent.succeeded', data: { object: {} } },
        providerEvent('payment_intent.succeeded', { amount: '10.50' }),
      ]) {
        const reply = await signedPost('/webhook/provider', body);
        expect(reply.status).to.equal(400);
        expect(reply.json).to.deep.equal({ error: 'invalid provider event' });
      }
    });
  });

  describe('POST /webhook/provider: refunds and disputes', () => {
    const depositId = () => randomUUID();
    const charge = (transactionId: string, amountRefunded: number, refundIds: string[] = []) => ({
      id: `ch_${randomUUID()}`,
      object: 'charge',
      amount: 10000,
      amount_refunded: amountRefunded,
      currency: 'usd',
      payment_intent: `pi_${randomUUID()}`,
      metadata: { transaction_id: transactionId },
      refunds: { object: 'list', data: refundIds.map((id) => ({ id, object: 'refund' })), has_more: false },
    });
    const dispute = (transactionId: string | undefined, status: string, id = `dp_${randomUUID()}`) => ({
      id,
      object: 'dispute',
      amount: 6000,
      currency: 'eur',
      status,
      charge: 'ch_disputed',
      payment_intent: 'pi_disputed',
      metadata: transactionId ? { transaction_id: transactionId } : {},
    });
    const event = (type: string, object: object) => ({
      id: `evt_${randomUUID()}`,
      object: 'event',
      type,
      data: { object },
    });

    /** The adjustments published since `since`, up to a marker (one publisher: its events arrive in order). */
    const adjustedSince = async (since: number) => {
      await publishedSince(received.length);
      return adjusted.slice(since);
    };

    it('publishes charge.refunded as a refund of the cumulative refunded total, naming the newest refund and its payment', async () => {
      const since = adjusted.length;
      const transactionId = depositId();
      const refunded = charge(transactionId, 3000, ['re_1']);
      const first = event('charge.refunded', refunded);
      const second = event('charge.refunded', {
        ...refunded,
        amount_refunded: 5000,
        refunds: {
          ...refunded.refunds,
          data: [
            { id: 're_2', object: 'refund' },
            { id: 're_1', object: 'refund' },
          ],
        },
      });
      expect(await signedPost('/webhook/provider', first)).to.include({ status: 200, text: '' });
      expect(await signedPost('/webhook/provider', second)).to.include({ status: 200, text: '' });
      const events = await adjustedSince(since);
      expect(events.map((e) => e.id)).to.deep.equal([envelopeIdOf(first.id), envelopeIdOf(second.id)]);
      expect(events.map((e) => e.data)).to.deep.equal([
        {
          transaction_id: transactionId,
          adjustment: 'refund',
          amount: 3000,
          currency: 'USD',
          reference: 're_1',
          payment_reference: refunded.payment_intent,
          provider_event_id: first.id,
          provider_event_type: 'charge.refunded',
        },
        {
          transaction_id: transactionId,
          adjustment: 'refund',
          amount: 5000,
          currency: 'USD',
          reference: 're_2',
          payment_reference: refunded.payment_intent,
          provider_event_id: second.id,
          provider_event_type: 'charge.refunded',
        },
      ]);
      expect(await storedEvent(first.id)).to.include({ outcome: 'refund', source: 'provider' });
      expect((await storedEvent(first.id))?.published_at).to.be.an.instanceOf(Date);
    });

    it('names the deposit by the payment intent when the charge has no metadata, and the charge without a refunds list', async () => {
      const since = adjusted.length;
      const object = { ...charge('unused', 10000), metadata: {}, refunds: undefined };
      expect((await signedPost('/webhook/provider', event('charge.refunded', object))).status).to.equal(200);
      const [published] = await adjustedSince(since);
      expect(published?.data).to.include({
        transaction_id: object.payment_intent,
        payment_reference: object.payment_intent,
        reference: object.id,
      });
    });

    it('publishes a dispute opened, lost and won; a close with another status is recorded and changes nothing', async () => {
      const since = adjusted.length;
      const transactionId = depositId();
      const opened = event('charge.dispute.created', dispute(transactionId, 'needs_response', 'dp_a'));
      const lost = event('charge.dispute.closed', dispute(transactionId, 'lost', 'dp_a'));
      const won = event('charge.dispute.closed', dispute(undefined, 'won', 'dp_b'));
      const inquiry = event('charge.dispute.closed', dispute(transactionId, 'warning_closed', 'dp_c'));
      const odd = event('charge.dispute.closed', dispute(transactionId, 'under_review', 'dp_d'));
      for (const body of [opened, lost, won, inquiry, odd]) {
        expect(await signedPost('/webhook/provider', body)).to.include({ status: 200, text: '' });
      }
      const events = await adjustedSince(since);
      expect(events.map((e) => [e.data.transaction_id, e.data.adjustment, e.data.reference])).to.deep.equal([
        [transactionId, 'dispute_opened', 'dp_a'],
        [transactionId, 'dispute_lost', 'dp_a'],
        ['pi_disputed', 'dispute_won', 'dp_b'],
        [transactionId, 'dispute_won', 'dp_c'],
      ]);
      expect(events[0]?.data).to.include({ amount: 6000, currency: 'EUR', payment_reference: 'pi_disputed' });
      expect(await storedEvent(odd.id)).to.include({ outcome: 'ignored' });
    });

    it('publishes a refund delivered 10 times at once once', async () => {
      const since = adjusted.length;
      const body = event('charge.refunded', charge(depositId(), 10000, ['re_x']));
      const replies = await Promise.all(
        Array.from({ length: 10 }, () => signedPost('/webhook/provider', body)),
      );
      expect(replies.map((r) => r.status)).to.deep.equal(Array(10).fill(200));
      expect((await adjustedSince(since)).map((e) => e.id)).to.deep.equal([envelopeIdOf(body.id)]);
    });

    it('answers 400 for a refund or dispute that does not say its amounts, and for a bad signature', async () => {
      const broken = { ...charge(depositId(), 100), amount_refunded: undefined };
      for (const body of [
        event('charge.refunded', broken),
        event('charge.dispute.created', { ...dispute(depositId(), 'needs_response'), amount: '60.00' }),
      ]) {
        const reply = await signedPost('/webhook/provider', body);
        expect(reply.status).to.equal(400);
        expect(reply.json).to.deep.equal({ error: 'invalid provider event' });
      }
      const forged = await signedPost(
        '/webhook/provider',
        event('charge.refunded', charge(depositId(), 100)),
        'whsec_forged',
      );
      expect(forged.status).to.equal(400);
    });
  });

  describe('signatures', () => {
    const now = () => Math.floor(Date.now() / 1000);
    const failures: [string, (raw: string) => Record<string, string>, (raw: string) => string][] = [
      ['no signature header', () => ({}), (raw) => raw],
      ['a malformed header', () => ({ sig: 'not-a-signature' }), (raw) => raw],
      [
        'a signature made with the wrong secret',
        (raw) => ({ sig: signWebhookPayload(raw, 'whsec_wrong') }),
        (raw) => raw,
      ],
      [
        'the development secret when real secrets are configured',
        (raw) => ({ sig: signWebhookPayload(raw, 'whsec_development_only_do_not_use_in_production') }),
        (raw) => raw,
      ],
      [
        'a body changed after signing',
        (raw) => ({ sig: signWebhookPayload(raw, SECRET) }),
        (raw) => raw.replace('"amount":10050', '"amount":99999'),
      ],
      [
        'a timestamp 301 s old',
        (raw) => ({ sig: signWebhookPayload(raw, SECRET, now() - 301) }),
        (raw) => raw,
      ],
      [
        'a timestamp 301 s in the future',
        (raw) => ({ sig: signWebhookPayload(raw, SECRET, now() + 301) }),
        (raw) => raw,
      ],
      [
        'only a v0 signature',
        (raw) => ({ sig: signWebhookPayload(raw, SECRET).replace('v1=', 'v0=') }),
        (raw) => raw,
      ],
    ];
    const endpoints = [
      ['/webhook/provider', 'Provider-Signature', () => providerEvent('payment_intent.succeeded')],
      ['/webhook/provider', 'Stripe-Signature', () => providerEvent('payment_intent.succeeded')],
      [
        '/webhook/payment-status',
        'X-Webhook-Signature',
        () => ({ payment_id: randomUUID(), status: 'completed', amount: 10050 }),
      ],
    ] as const;
    for (const [path, header, makeBody] of endpoints) {
      for (const [what, sign, send] of failures) {
        it(`${path} answers 400 { error } and publishes nothing for ${what} in ${header}`, async () => {
          const since = received.length;
          const raw = JSON.stringify(makeBody());
          const { sig } = sign(raw);
          const reply = await post(service, path, send(raw), sig === undefined ? {} : { [header]: sig });
          expect(reply.status).to.equal(400);
          expect(reply.json).to.have.keys('error');
          expect((reply.json as { error: string }).error).to.match(/^invalid signature/);
          expect(await publishedSince(since)).to.deep.equal([]);
        });
      }
    }

    it('accepts the second configured secret (rotation)', async () => {
      const since = received.length;
      const event = providerEvent('payment_intent.succeeded');
      expect((await signedPost('/webhook/provider', event, NEXT_SECRET)).status).to.equal(200);
      expect((await publishedSince(since)).map((e) => e.id)).to.deep.equal([envelopeIdOf(event.id)]);
    });

    it("accepts a header made by the stripe package's generateTestHeaderString", async () => {
      const since = received.length;
      const event = providerEvent('payment_intent.succeeded');
      const payload = JSON.stringify(event);
      const header = Stripe.webhooks.generateTestHeaderString({ payload, secret: SECRET });
      expect(
        (await post(service, '/webhook/provider', payload, { 'Provider-Signature': header })).status,
      ).to.equal(200);
      expect((await publishedSince(since)).map((e) => e.id)).to.deep.equal([envelopeIdOf(event.id)]);
    });

    it('takes the signature from Stripe-Signature too, as Stripe and `stripe listen` send it', async () => {
      const since = received.length;
      const event = providerEvent('payment_intent.succeeded');
      const payload = JSON.stringify(event);
      const header = Stripe.webhooks.generateTestHeaderString({ payload, secret: SECRET });
      expect(
        (await post(service, '/webhook/provider', payload, { 'Stripe-Signature': header })).status,
      ).to.equal(200);
      expect((await publishedSince(since)).map((e) => e.id)).to.deep.equal([envelopeIdOf(event.id)]);
    });
  });

  describe('delivery', () => {
    it('publishes an event delivered 10 times concurrently once, and not again when redelivered later', async () => {
      const since = received.length;
      const event = providerEvent('payment_intent.succeeded');
      const replies = await Promise.all(
        Array.from({ length: 10 }, () => signedPost('/webhook/provider', event)),
      );
      expect(replies.map((r) => `${r.status}:${r.text}`)).to.deep.equal(Array(10).fill('200:'));
      const events = await publishedSince(since);
      expect(events.map((e) => e.id)).to.deep.equal([envelopeIdOf(event.id)]);

      const later = received.length;
      expect(await signedPost('/webhook/provider', event)).to.include({ status: 200, text: '' });
      expect(await publishedSince(later)).to.deep.equal([]);

      const metrics = await (
        await fetch(`${service.url}/metrics`, { headers: serviceAuthorization(SERVICE_TOKEN) })
      ).text();
      expect(metrics).to.match(
        /webhook_events_duplicate_total\{[^}]*source="provider",type="payment_intent.succeeded"[^}]*\} (\d+)/,
      );
      const duplicates =
        /webhook_events_duplicate_total\{[^}]*source="provider",type="payment_intent.succeeded"[^}]*\} (\d+)/.exec(
          metrics,
        );
      expect(Number(duplicates?.[1])).to.be.at.least(10);
    });

    it('answers 500 while the broker is unreachable, keeps the event, and publishes it on the retry', async () => {
      const unreachable = await closedPort();
      const cutOff = await startWebhookIngest(
        configFor({ AMQP_URL: `amqp://guest:guest@127.0.0.1:${unreachable}` }),
      );
      const since = received.length;
      const event = providerEvent('payout.paid', { object: 'payout', status: 'paid' });
      try {
        const reply = await signedPost('/webhook/provider', event, SECRET, cutOff);
        expect(reply.status).to.equal(500);
        expect(reply.json).to.deep.equal({ error: 'internal error' });
      } finally {
        await cutOff.stop();
      }
      expect(await storedEvent(event.id)).to.include({ outcome: 'completed', published_at: null });

      expect(await signedPost('/webhook/provider', event)).to.include({ status: 200, text: '' });
      const events = await publishedSince(since);
      expect(events.map((e) => e.id)).to.deep.equal([envelopeIdOf(event.id)]);
      expect((await storedEvent(event.id))?.published_at).to.be.instanceOf(Date);
    });

    it('answers 500 while the database is unavailable, and succeeds on the retry once it is back', async () => {
      const target = new URL(database.url);
      const proxy = await startTcpProxy({ host: target.hostname, port: Number(target.port || 5432) });
      const proxied = await startWebhookIngest(
        configFor({ DATABASE_URL: viaProxy(database.roles?.runtimeUrl as string, proxy) }),
      );
      const since = received.length;
      const event = providerEvent('payment_intent.succeeded');
      try {
        expect(
          (await signedPost('/webhook/provider', providerEvent('payout.paid'), SECRET, proxied)).status,
        ).to.equal(200);
        proxy.cut();
        const reply = await signedPost('/webhook/provider', event, SECRET, proxied);
        expect(reply.status).to.equal(500);
        expect(reply.json).to.deep.equal({ error: 'internal error' });
        expect(await storedEvent(event.id)).to.equal(undefined);

        proxy.restore();
        expect(await signedPost('/webhook/provider', event, SECRET, proxied)).to.include({
          status: 200,
          text: '',
        });
        const events = await publishedSince(since, proxied);
        expect(events.map((e) => e.data.provider_event_type)).to.deep.equal([
          'payout.paid',
          'payment_intent.succeeded',
        ]);
        expect(events[1]?.id).to.equal(envelopeIdOf(event.id));
      } finally {
        await proxied.stop();
        await proxy.close();
      }
    });
  });

  describe('group commit and republishing', () => {
    /** A service whose PaymentProcessed publishes pass through `intercept` first, which may hold or refuse them. */
    const startIntercepted = async (intercept: (event: PaymentProcessed) => Promise<void> | void) => {
      const bus = createAmqpBus({ url: broker.url, namespace: broker.namespace, logger: silent });
      await bus.start();
      const started = await startWebhookIngest(configFor(), {
        bus: {
          ...bus,
          async publish(event) {
            if (event.type === 'PaymentProcessed') await intercept(event as PaymentProcessed);
            return bus.publish(event);
          },
        },
      });
      return {
        service: started,
        async stop() {
          await started.stop();
          await bus.close();
        },
      };
    };

    /** A publish that waits for the test's word, as if the broker were slow to confirm. */
    const heldPublish = (transactionId: string) => {
      let release: () => void = () => undefined;
      const held = new Promise<void>((resolve) => (release = resolve));
      return {
        release,
        intercept: (event: PaymentProcessed) =>
          event.data.transaction_id === transactionId ? held : undefined,
      };
    };

    const publishedIdsOf = (event: { id: string }, since: number) =>
      received
        .slice(since)
        .filter((e) => e.data.provider_event_id === event.id)
        .map((e) => e.id);

    it('answers 200 only once the broker has confirmed, to a redelivery arriving meanwhile too', async () => {
      const event = providerEvent('payment_intent.succeeded');
      const hold = heldPublish(event.data.object.metadata.transaction_id);
      const slow = await startIntercepted(hold.intercept);
      const since = received.length;
      try {
        const answered: number[] = [];
        const deliver = () =>
          signedPost('/webhook/provider', event, SECRET, slow.service).then((reply) => {
            answered.push(reply.status);
            return reply;
          });
        const first = deliver();
        await eventually(() => storedEvent(event.id), Boolean);
        const redelivery = deliver();
        await sleep(300);
        expect(answered).to.deep.equal([]);
        expect(await storedEvent(event.id)).to.include({ published_at: null });

        hold.release();
        expect((await first).status).to.equal(200);
        expect((await redelivery).status).to.equal(200);
        await publishedSince(since, slow.service);
        expect(publishedIdsOf(event, since)).to.deep.equal([envelopeIdOf(event.id)]);
        expect((await storedEvent(event.id))?.published_at).to.be.instanceOf(Date);
      } finally {
        hold.release();
        await slow.stop();
      }
    });

    it('publishes again an event another process recorded and is still publishing: one envelope id', async () => {
      const event = providerEvent('payment_intent.succeeded');
      const hold = heldPublish(event.data.object.metadata.transaction_id);
      const slow = await startIntercepted(hold.intercept);
      const since = received.length;
      try {
        let firstAnswered = false;
        const first = signedPost('/webhook/provider', event, SECRET, slow.service).then((reply) => {
          firstAnswered = true;
          return reply;
        });
        await eventually(() => storedEvent(event.id), Boolean);
        expect(await signedPost('/webhook/provider', event)).to.include({ status: 200, text: '' });
        expect(firstAnswered).to.equal(false);

        hold.release();
        expect((await first).status).to.equal(200);
        await publishedSince(since, slow.service);
        await publishedSince(since);
        expect(publishedIdsOf(event, since)).to.deep.equal([envelopeIdOf(event.id), envelopeIdOf(event.id)]);
      } finally {
        hold.release();
        await slow.stop();
      }
    });

    it('records and publishes 150 different events sent at once', async () => {
      const since = received.length;
      const batch = Array.from({ length: 150 }, () => providerEvent('payment_intent.succeeded'));
      const replies = await Promise.all(batch.map((event) => signedPost('/webhook/provider', event)));
      expect(replies.map((r) => r.status)).to.deep.equal(Array(150).fill(200));

      const published = (await publishedSince(since)).map((e) => e.id).sort();
      expect(published).to.deep.equal(batch.map((event) => envelopeIdOf(event.id)).sort());
      const { rows } = await sql.query<{ n: number }>(
        'SELECT count(*)::int AS n FROM webhook_events WHERE event_id = ANY($1) AND published_at IS NOT NULL',
        [batch.map((event) => event.id)],
      );
      expect(rows[0]?.n).to.equal(150);
    });

    it('answers each webhook of a batch on its own outcome: a publish the broker refuses fails only its own', async () => {
      const batch = Array.from({ length: 20 }, () => providerEvent('payment_intent.succeeded'));
      const refusedEvent = batch[7];
      if (!refusedEvent) throw new Error('no event to refuse');
      const refusing = await startIntercepted((event) => {
        if (event.data.provider_event_id === refusedEvent.id) throw new BusUnavailableError('refused');
      });
      const since = received.length;
      try {
        const replies = await Promise.all(
          batch.map((event) => signedPost('/webhook/provider', event, SECRET, refusing.service)),
        );
        expect(replies.map((r) => r.status)).to.deep.equal(
          batch.map((e) => (e === refusedEvent ? 500 : 200)),
        );

        const published = (await publishedSince(since, refusing.service)).map((e) => e.id).sort();
        const others = batch.filter((event) => event !== refusedEvent);
        expect(published).to.deep.equal(others.map((event) => envelopeIdOf(event.id)).sort());
        expect(await storedEvent(refusedEvent.id)).to.include({ outcome: 'completed', published_at: null });
      } finally {
        await refusing.stop();
      }
    });

    /**
     * A webhook-ingest whose broker connection runs through a proxy: the proxy is cut, a payout webhook is
     * answered 500 (recorded, not published), `meanwhile` brings the broker back, and then the event must be
     * published exactly once with no retry from the provider.
     */
    const publishedAfterBrokerOutage = async (
      republish: { afterSeconds: number; intervalMs: number },
      meanwhile: (outage: {
        restore: () => void;
        ready: () => Promise<number>;
        expectUnpublished: () => Promise<void>;
      }) => Promise<void>,
    ) => {
      const target = new URL(broker.url);
      const proxy = await startTcpProxy({ host: target.hostname, port: Number(target.port || 5672) });
      const republishing = await startWebhookIngest(
        configFor({
          AMQP_URL: viaProxy(broker.url, proxy),
          WEBHOOK_REPUBLISH_AFTER_SECONDS: String(republish.afterSeconds),
          WEBHOOK_REPUBLISH_INTERVAL_MS: String(republish.intervalMs),
        }),
      );
      const event = providerEvent('payout.paid', { object: 'payout', status: 'paid' });
      const since = received.length;
      const ready = async () => (await fetch(`${republishing.url}/ready`)).status;
      try {
        proxy.cut();
        expect(await eventually(ready, (status) => status === 503)).to.equal(503);
        const reply = await signedPost('/webhook/provider', event, SECRET, republishing);
        expect(reply.status).to.equal(500);
        const expectUnpublished = async () => {
          expect(await storedEvent(event.id)).to.include({ outcome: 'completed', published_at: null });
        };
        await expectUnpublished();
        await meanwhile({ restore: () => proxy.restore(), ready, expectUnpublished });

        const stored = await eventually(
          () => storedEvent(event.id),
          (row) => row?.published_at instanceof Date,
          { timeoutMs: 15_000 },
        );
        expect(stored?.published_at).to.be.instanceOf(Date);
        await eventually(
          async () => publishedIdsOf(event, since),
          (ids) => ids.length > 0,
        );
        expect(publishedIdsOf(event, since)).to.deep.equal([envelopeIdOf(event.id)]);
      } finally {
        await republishing.stop();
        await proxy.close();
      }
    };

    it('publishes an event left unpublished while the broker was down, with no retry from the provider', () =>
      publishedAfterBrokerOutage(
        { afterSeconds: 1, intervalMs: 100 },
        async ({ restore, expectUnpublished }) => {
          // Past the threshold, still unpublished: the republisher keeps failing while the broker is away.
          await sleep(1500);
          await expectUnpublished();
          restore();
        },
      ));

    it('asks for a pass when an event it left unpublished comes due, though its next poll is a minute away', () =>
      publishedAfterBrokerOutage(
        { afterSeconds: 5, intervalMs: 60_000 },
        async ({ restore, ready, expectUnpublished }) => {
          // Back well before the event is due (5 s); the republisher's next poll is a minute away.
          restore();
          expect(await eventually(ready, (status) => status === 200, { timeoutMs: 10_000 })).to.equal(200);
          await expectUnpublished();
        },
      ));
  });

  describe('production', () => {
    it('refuses to start without WEBHOOK_SECRETS', async () => {
      let failure: unknown;
      await startWebhookIngest(configFor({ NODE_ENV: 'production', WEBHOOK_SECRETS: '' })).catch(
        (error: unknown) => {
          failure = error;
        },
      );
      expect(failure).to.be.instanceOf(Error);
      expect((failure as Error).message).to.match(/WEBHOOK_SECRETS is required/);
    });

    it('refuses to start with the unsigned endpoint on', async () => {
      let failure: unknown;
      await startWebhookIngest(configFor({ NODE_ENV: 'production' })).catch((error: unknown) => {
        failure = error;
      });
      expect((failure as Error).message).to.match(/UNSIGNED_WEBHOOK_ENABLED=true is refused/);
    });

    it('refuses to start with a WEBHOOK_SECRETS entry under 32 bytes, naming the variable', async () => {
      const failure = await startWebhookIngest(
        configFor({
          NODE_ENV: 'production',
          UNSIGNED_WEBHOOK_ENABLED: 'false',
          WEBHOOK_SECRETS: `${SECRET},whsec_only_24_bytes_long`,
        }),
      ).then(
        async (started) => {
          await started.stop();
          return null;
        },
        (error: Error) => error.message,
      );
      expect(failure).to.equal(
        'Invalid configuration: WEBHOOK_SECRETS has 1 secret(s) under 32 bytes, refused when NODE_ENV=production',
      );
    });

    describe("a stand-in's confirmations where Stripe confirms (PROVIDER=stripe)", () => {
      const production = { NODE_ENV: 'production', UNSIGNED_WEBHOOK_ENABLED: 'false', PROVIDER: 'stripe' };
      const statusWebhook = () => ({
        payment_id: randomUUID(),
        status: 'completed',
        amount: 1000,
        currency: 'USD',
      });

      it('answers 404 { error: "not found" } on /webhook/payment-status, signed with the secret Stripe signs with, and records nothing', async () => {
        const stripe = await startWebhookIngest(configFor(production));
        const since = received.length;
        try {
          const body = statusWebhook();
          const reply = await signedPost('/webhook/payment-status', body, SECRET, stripe);
          expect(reply.status).to.equal(404);
          expect(reply.json).to.deep.equal({ error: 'not found' });
          expect(await storedEvent(`payment-status:${body.payment_id}:completed`)).to.equal(undefined);
          const unsigned = await post(stripe, '/webhook/payment', {
            payment_id: body.payment_id,
            status: 'completed',
          });
          expect(unsigned.status).to.equal(404);
          // The provider's own events still confirm.
          const event = providerEvent('payment_intent.succeeded');
          expect((await signedPost('/webhook/provider', event, SECRET, stripe)).status).to.equal(200);
          expect((await publishedSince(since)).map((e) => e.id)).to.deep.equal([envelopeIdOf(event.id)]);
        } finally {
          await stripe.stop();
        }
      });

      it('takes them when STAND_IN_CONFIRMATIONS=true, and everywhere else by default', async () => {
        for (const env of [
          { ...production, STAND_IN_CONFIRMATIONS: 'true' },
          { ...production, PROVIDER: 'none' },
          { PROVIDER: 'stripe' },
        ]) {
          const started = await startWebhookIngest(configFor(env));
          try {
            const body = statusWebhook();
            const reply = await signedPost('/webhook/payment-status', body, SECRET, started);
            expect(reply.status, JSON.stringify(env)).to.equal(200);
            expect(await storedEvent(`payment-status:${body.payment_id}:completed`)).to.include({
              source: 'payment-status',
            });
          } finally {
            await started.stop();
          }
        }
      });
    });

    it('answers 404 { error: "not found" } on the unsigned endpoint', async () => {
      const production = await startWebhookIngest(
        configFor({ NODE_ENV: 'production', UNSIGNED_WEBHOOK_ENABLED: 'false' }),
      );
      try {
        const reply = await post(production, '/webhook/payment', {
          payment_id: randomUUID(),
          status: 'completed',
        });
        expect(reply.status).to.equal(404);
        expect(reply.json).to.deep.equal({ error: 'not found' });
        const event = providerEvent('payment_intent.succeeded');
        expect((await signedPost('/webhook/provider', event, SECRET, production)).status).to.equal(200);
      } finally {
        await production.stop();
      }
    });
  });

  describe('what is kept of a webhook, and for how long', () => {
    const storedPayload = async (eventId: string) => {
      const { rows } = await sql.query<{ payload: unknown }>(
        'SELECT payload FROM webhook_events WHERE event_id = $1',
        [eventId],
      );
      return rows[0]?.payload;
    };

    it("keeps a PaymentIntent's event without its client secret or card, and publishes it from what it kept", async () => {
      const clientSecret = `pi_${randomUUID()}_secret_${randomUUID()}`;
      const event = providerEvent('payment_intent.succeeded', {
        amount: 4321,
        currency: 'eur',
        client_secret: clientSecret,
        payment_method: { id: 'pm_1', object: 'payment_method', card: { last4: '4242', exp_year: 2030 } },
      });
      // The broker unreachable: the call is answered 500 and the event kept unpublished, for the republisher.
      const unreachable = await closedPort();
      const cutOff = await startWebhookIngest(
        configFor({ AMQP_URL: `amqp://guest:guest@127.0.0.1:${unreachable}` }),
      );
      try {
        expect((await signedPost('/webhook/provider', event, SECRET, cutOff)).status).to.equal(500);
      } finally {
        await cutOff.stop();
      }
      const kept = (await storedPayload(event.id)) as typeof event;
      expect(JSON.stringify(kept)).not.to.contain(clientSecret).and.not.to.contain('4242');
      expect(kept).to.deep.include({ id: event.id, type: 'payment_intent.succeeded' });
      expect(kept.data.object).to.deep.equal({
        ...event.data.object,
        client_secret: '[redacted]',
        payment_method: '[redacted]',
      });

      const since = received.length;
      const republishing = await startWebhookIngest(
        configFor({ WEBHOOK_REPUBLISH_AFTER_SECONDS: '1', WEBHOOK_REPUBLISH_INTERVAL_MS: '100' }),
      );
      try {
        const published = await eventually(
          async () => received.slice(since).filter((e) => e.data.provider_event_id === event.id),
          (found) => found.length > 0,
          { timeoutMs: 15_000 },
        );
        expect(published.map((e) => e.id)).to.deep.equal([envelopeIdOf(event.id)]);
        expect(published[0]?.data).to.deep.include({
          transaction_id: event.data.object.metadata.transaction_id,
          payment_id: event.data.object.id,
          status: 'completed',
          amount: 4321,
          currency: 'EUR',
        });
      } finally {
        await republishing.stop();
      }
    });

    it('recognises an event delivered again inside the retention after a prune ran, and forgets one older than it', async () => {
      const recent = providerEvent('payment_intent.succeeded');
      const old = providerEvent('payment_intent.succeeded');
      const since = received.length;
      for (const event of [recent, old])
        expect((await signedPost('/webhook/provider', event)).status).to.equal(200);
      expect(await publishedSince(since)).to.have.length(2);
      const receivedDaysAgo = (eventId: string, days: number) =>
        sql.query(
          'UPDATE webhook_events SET received_at = now() - make_interval(days => $2) WHERE event_id = $1',
          [eventId, days],
        );
      // The retention is 35 days by default.
      await receivedDaysAgo(recent.id, 34);
      await receivedDaysAgo(old.id, 36);

      // A process prunes as it starts, then hourly.
      const pruning = await startWebhookIngest(configFor());
      try {
        await eventually(
          () => storedEvent(old.id),
          (row) => row === undefined,
        );
        expect(await storedEvent(recent.id)).to.include({ source: 'provider' });

        const later = received.length;
        expect(await signedPost('/webhook/provider', recent, SECRET, pruning)).to.include({ status: 200 });
        expect(await publishedSince(later, pruning)).to.deep.equal([]);
        const last = received.length;
        expect(await signedPost('/webhook/provider', old, SECRET, pruning)).to.include({ status: 200 });
        expect((await publishedSince(last, pruning)).map((e) => e.id)).to.deep.equal([envelopeIdOf(old.id)]);
      } finally {
        await pruning.stop();
      }
    });
  });
});
