import { createServer, type Server } from 'node:http';
import { expect } from 'chai';
import Stripe from 'stripe';
import { createLogger, createMemoryBus, loadConfig } from '@payments/service-kit';
import { eventually } from '@payments/testkit';
import { ProviderSandboxConfigSchema, startProviderSandbox } from '../src/index.js';

const KEY = 'sk_test_sandbox_reordered_delivery_test';
const silent = createLogger('provider-sandbox-test', 'silent');

/** Stands in for webhook-ingest: keeps every delivery, copies included, in the order they arrived. */
async function startReceiver() {
  const received: Stripe.Event[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      received.push(JSON.parse(Buffer.concat(chunks).toString('utf8')) as Stripe.Event);
      res.writeHead(200).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    /** The charge.refunded deliveries of one PaymentIntent's charge, as they arrived. */
    refundedTotalsOf: (paymentIntentId: string) =>
      received
        .filter((event) => event.type === 'charge.refunded')
        .map((event) => event.data.object as Stripe.Charge)
        .filter((charge) => charge.payment_intent === paymentIntentId),
    received,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

describe('provider-sandbox: events out of order (SANDBOX_REORDER_EVENTS_MS)', () => {
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  let stripe: Stripe;
  let stop: () => Promise<void>;

  before(async () => {
    receiver = await startReceiver();
    const bus = createMemoryBus(silent, { deployment: { sandbox: true } });
    const config = loadConfig(ProviderSandboxConfigSchema, {
      PORT: '0',
      NODE_ENV: 'test',
      LOG_LEVEL: 'silent',
      WEBHOOK_INGEST_URL: receiver.url,
      SANDBOX_API_KEY: KEY,
      SANDBOX_ENABLED: 'true',
      SANDBOX_AUTO_CONFIRM: 'false',
      SANDBOX_REORDER_EVENTS_MS: '300',
      SANDBOX_DUPLICATE_DELIVERY: 'true',
    });
    const service = await startProviderSandbox(config, { bus, logger: silent });
    stripe = new Stripe(KEY, {
      host: '127.0.0.1',
      port: service.port,
      protocol: 'http',
      maxNetworkRetries: 0,
    });
    stop = async () => {
      await service.stop();
      await bus.close();
    };
  });

  after(async () => {
    await stop?.();
    await receiver?.close();
  });

  it('lets a higher refunded total arrive before a lower one, and still sends every event twice', async () => {
    const paid = await stripe.paymentIntents.create({
      amount: 2000,
      currency: 'usd',
      payment_method: 'pm_card_visa',
      confirm: true,
    });
    // Twenty partial refunds one after the other: their totals are 100, 200, … 2000, in the order made.
    for (let refund = 0; refund < 20; refund += 1) {
      await stripe.refunds.create({ payment_intent: paid.id, amount: 100 });
    }

    const arrived = await eventually(
      async () => receiver.refundedTotalsOf(paid.id),
      (charges) => charges.length >= 40,
    );
    const firstArrivals = [...new Set(arrived.map((charge) => charge.amount_refunded))];
    expect(firstArrivals, 'every refunded total arrived').to.have.members(
      Array.from({ length: 20 }, (_, i) => (i + 1) * 100),
    );
    expect(firstArrivals, 'a later total arrived before an earlier one').not.to.deep.equal(
      [...firstArrivals].sort((a, b) => a - b),
    );

    await new Promise((resolve) => setTimeout(resolve, 400));
    const copies = new Map<string, number>();
    for (const event of receiver.received) copies.set(event.id, (copies.get(event.id) ?? 0) + 1);
    expect([...copies.values()], 'each event delivered exactly twice').to.satisfy((counts: number[]) =>
      counts.every((count) => count === 2),
    );
    // created and succeeded, then refund.created and charge.refunded for each refund
    expect(copies.size).to.equal(2 + 20 * 2);
  });
});
