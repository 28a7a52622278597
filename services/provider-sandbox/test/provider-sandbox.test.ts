import { randomUUID } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import { expect } from 'chai';
import { createEvent } from '@payments/contracts';
import {
  ConfigError,
  createLogger,
  DEVELOPMENT_SERVICE_TOKEN,
  createMemoryBus,
  loadConfig,
  verifyWebhookSignature,
  type EventBus,
  type RunningService,
} from '@payments/service-kit';
import { eventually } from '@payments/testkit';
import { ProviderSandboxConfigSchema, startProviderSandbox } from '../src/index.js';
import type { ProviderEvent } from '../src/domain/provider-event.js';

const SECRET = 'whsec_sandbox_test';
const silent = createLogger('provider-sandbox-test', 'silent');

interface Delivery {
  path: string;
  headers: IncomingHttpHeaders;
  raw: string;
  event: ProviderEvent;
  at: number;
}

/** Stands in for webhook-ingest: records every call and answers with the next scripted status (200 when none). */
async function startReceiver() {
  const deliveries: Delivery[] = [];
  const script = new Map<string, number[]>();
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      const event = JSON.parse(raw) as ProviderEvent;
      deliveries.push({ path: req.url ?? '', headers: req.headers, raw, event, at: Date.now() });
      const status = script.get(event.data.object.metadata.transaction_id)?.shift() ?? 200;
      res.writeHead(status).end(status === 200 ? '' : JSON.stringify({ error: 'scripted' }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    deliveries,
    /** Answers the next calls for this transaction with these statuses. */
    answer: (transactionId: string, statuses: number[]) => script.set(transactionId, statuses),
    for: (transactionId: string) =>
      deliveries.filter((d) => d.event.data.object.metadata.transaction_id === transactionId),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

describe('provider-sandbox', () => {
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  const running: { service: RunningService; bus: EventBus }[] = [];

  const startSandbox = async (env: Record<string, string> = {}) => {
    // A deployment that runs the sandbox: its queue exists.
    const bus = createMemoryBus(silent, { deployment: { sandbox: true } });
    const config = loadConfig(ProviderSandboxConfigSchema, {
      PORT: '0',
      NODE_ENV: 'test',
      LOG_LEVEL: 'silent',
      WEBHOOK_INGEST_URL: receiver.url,
      SANDBOX_WEBHOOK_SECRET: SECRET,
      SANDBOX_DELAY_MS: '10',
      SANDBOX_ENABLED: 'true',
      ...env,
    });
    const service = await startProviderSandbox(config, { bus, logger: silent });
    running.push({ service, bus });
    return { service, bus };
  };

  const request = (amount: number, currency = 'USD') =>
    createEvent(
      'WithdrawalRequested',
      { transaction_id: randomUUID(), account_id: randomUUID(), user_id: randomUUID(), amount, currency },
      { id: randomUUID(), correlationId: `corr-${randomUUID()}` },
    );

  const deliveriesFor = (transactionId: string, count = 1) =>
    eventually(
      async () => receiver.for(transactionId),
      (found) => found.length >= count,
    );

  before(async () => {
    receiver = await startReceiver();
  });

  afterEach(async () => {
    for (const { service, bus } of running.splice(0)) {
      await service.stop();
      await bus.close();
    }
  });

  after(async () => {
    await receiver.close();
  });

  it('pays a withdrawal with a correctly signed payout.paid event, and fails one ending in 13', async () => {
    const { bus } = await startSandbox();
    const paid = request(2500, 'EUR');
    const failed = request(213);
    await bus.publish(paid);
    await bus.publish(failed);

    const [delivery] = await deliveriesFor(paid.data.transaction_id);
    expect(delivery?.path).to.equal('/webhook/provider');
    expect(delivery?.headers['content-type']).to.equal('application/json');
    expect(delivery?.headers['x-request-id']).to.equal(paid.correlation_id);
    const signature = delivery?.headers['provider-signature'] as string;
    expect(verifyWebhookSignature(delivery?.raw ?? '', signature, [SECRET])).to.deep.include({ ok: true });
    expect(verifyWebhookSignature(delivery?.raw ?? '', signature, ['whsec_other']).ok).to.equal(false);
    expect(delivery?.event).to.deep.include({ object: 'event', type: 'payout.paid', livemode: false });
    expect(delivery?.event.id).to.match(/^evt_[0-9a-f-]{36}$/);
    expect(delivery?.event.data.object).to.deep.equal({
      id: delivery?.event.data.object.id,
      object: 'payout',
      amount: 2500,
      currency: 'eur',
      status: 'paid',
      metadata: { transaction_id: paid.data.transaction_id },
    });
    expect(delivery?.event.data.object.id).to.match(/^po_[0-9a-f-]{36}$/);

    const [failedDelivery] = await deliveriesFor(failed.data.transaction_id);
    expect(failedDelivery?.event.type).to.equal('payout.failed');
    expect(failedDelivery?.event.data.object).to.deep.include({ status: 'failed', amount: 213 });
    expect(failedDelivery?.event.data.object.failure_message).to.be.a('string');
  });

  it('waits SANDBOX_DELAY_MS before calling the webhook', async () => {
    const { bus } = await startSandbox({ SANDBOX_DELAY_MS: '300' });
    const payout = request(100);
    const publishedAt = Date.now();
    await bus.publish(payout);
    const [delivery] = await deliveriesFor(payout.data.transaction_id);
    expect((delivery?.at ?? 0) - publishedAt).to.be.at.least(300);
  });

  it('retries the same event, freshly signed, while the webhook answers 5xx', async () => {
    const { bus } = await startSandbox();
    const payout = request(700);
    receiver.answer(payout.data.transaction_id, [503, 500]);
    await bus.publish(payout);

    const deliveries = await deliveriesFor(payout.data.transaction_id, 3);
    expect(deliveries).to.have.length(3);
    expect(new Set(deliveries.map((d) => d.event.id)).size).to.equal(1);
    for (const delivery of deliveries) {
      const header = delivery.headers['provider-signature'] as string;
      expect(verifyWebhookSignature(delivery.raw, header, [SECRET]).ok).to.equal(true);
    }
  });

  it('dead-letters a request whose event the webhook refuses with a 4xx, without retrying', async () => {
    const { bus } = await startSandbox();
    const payout = request(900);
    receiver.answer(payout.data.transaction_id, [400]);
    await bus.publish(payout);

    const letters = await eventually(
      () => bus.listDeadLetters('provider-sandbox'),
      (found) => found.length > 0,
    );
    expect(letters.map((l) => (JSON.parse(l.body) as { id: string }).id)).to.deep.equal([payout.id]);
    expect(receiver.for(payout.data.transaction_id)).to.have.length(1);
  });

  it('sends each event twice when SANDBOX_DUPLICATE_DELIVERY is on', async () => {
    const { bus } = await startSandbox({ SANDBOX_DUPLICATE_DELIVERY: 'true' });
    const payout = request(4200);
    await bus.publish(payout);

    const deliveries = await deliveriesFor(payout.data.transaction_id, 2);
    expect(deliveries).to.have.length(2);
    expect(deliveries[0]?.event.id).to.equal(deliveries[1]?.event.id);
  });

  it('gives a redelivered request the same provider event id, so the webhook deduplicates it', async () => {
    const { bus } = await startSandbox();
    const payout = request(5100);
    await bus.publish(payout);
    await bus.publish(payout);

    const deliveries = await deliveriesFor(payout.data.transaction_id, 2);
    expect(deliveries[0]?.event.id).to.equal(deliveries[1]?.event.id);
    expect(deliveries[0]?.event.data.object.id).to.equal(deliveries[1]?.event.data.object.id);
  });

  it('refuses to start in production when enabled: it would confirm every payment', async () => {
    const failure = await startSandbox({
      NODE_ENV: 'production',
      SANDBOX_ENABLED: 'true',
      SERVICE_TOKEN: 'a-production-service-token-of-enough-length',
    }).catch((error: unknown) => error);
    expect(failure).to.be.instanceOf(ConfigError);
    expect((failure as Error).message).to.match(/SANDBOX_ENABLED=true is refused when NODE_ENV=production/);
  });

  for (const [what, env] of [
    ['SANDBOX_ENABLED unset', { SANDBOX_ENABLED: '' }],
    ['SANDBOX_ENABLED=false', { SANDBOX_ENABLED: 'false' }],
  ] as const) {
    it(`confirms nothing with ${what}, but still answers /health and /ready`, async () => {
      const { service, bus } = await startSandbox({ ...env, SANDBOX_DELAY_MS: '0' });
      const payout = request(100);
      await bus.publish(payout);

      expect((await fetch(`${service.url}/health`)).status).to.equal(200);
      expect((await fetch(`${service.url}/ready`)).status).to.equal(200);
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(receiver.for(payout.data.transaction_id)).to.deep.equal([]);
    });
  }

  it('disabled, still empties its queue, so requests routed to it do not pile up for as long as it runs', async () => {
    const { service, bus } = await startSandbox({ SANDBOX_ENABLED: 'false', SANDBOX_DELAY_MS: '0' });
    const requests = [request(100), request(250)];
    for (const event of requests) await bus.publish(event);
    await eventually(
      async () =>
        (
          await fetch(`${service.url}/metrics`, {
            headers: { authorization: `Bearer ${DEVELOPMENT_SERVICE_TOKEN}` },
          })
        ).text(),
      (text) => /sandbox_requests_discarded_total\{[^}]*type="WithdrawalRequested"[^}]*\} 2/.test(text),
    );
    await service.stop();
    running.splice(0, 1);

    // Whatever the sandbox left on its queue would now reach this consumer.
    const left: string[] = [];
    const consumer = await bus.consume('provider-sandbox', {
      WithdrawalRequested: async (event) => void left.push(event.id),
    });
    await new Promise((resolve) => setTimeout(resolve, 200));
    await consumer.stop();
    await bus.close();
    expect(left).to.deep.equal([]);
    expect(receiver.for(requests[0]!.data.transaction_id)).to.deep.equal([]);
  });
});
