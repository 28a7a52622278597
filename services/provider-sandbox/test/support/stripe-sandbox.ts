import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import Stripe from 'stripe';
import { createLogger, createMemoryBus, loadConfig, verifyWebhookSignature } from '@payments/service-kit';
import { ProviderSandboxConfigSchema, startProviderSandbox } from '../../src/index.js';

export const WEBHOOK_SECRET = 'whsec_sandbox_test';
export const API_KEY = 'sk_test_sandbox_test';
const silent = createLogger('provider-sandbox-test', 'silent');

export interface Delivery {
  path: string;
  headers: IncomingHttpHeaders;
  raw: string;
  event: Stripe.Event;
  /** Whether its signature verifies with WEBHOOK_SECRET. */
  verified: boolean;
}

const transactionOf = (event: Stripe.Event) =>
  (event.data.object as { metadata?: { transaction_id?: string } }).metadata?.transaction_id ?? '';

/**
 * Stands in for webhook-ingest: keeps every event it is sent, in the order they came, and answers with the next
 * status scripted for its transaction (200 when none).
 */
export async function startEventReceiver() {
  const deliveries: Delivery[] = [];
  const script = new Map<string, number[]>();
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      const event = JSON.parse(raw) as Stripe.Event;
      const signature = String(req.headers['provider-signature'] ?? '');
      const verified = verifyWebhookSignature(raw, signature, [WEBHOOK_SECRET], 300).ok;
      deliveries.push({ path: req.url ?? '', headers: req.headers, raw, event, verified });
      const status = script.get(transactionOf(event))?.shift() ?? 200;
      res.writeHead(status).end(status === 200 ? '' : JSON.stringify({ error: 'scripted' }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    deliveries,
    /** The deliveries about one object (a payment intent, a payout, a transfer), in the order they arrived. */
    about: (objectId: string) =>
      deliveries.filter((d) => (d.event.data.object as { id?: string }).id === objectId),
    /** The deliveries about one transaction (named in the object's metadata). */
    for: (transactionId: string) => deliveries.filter((d) => transactionOf(d.event) === transactionId),
    /** Answers the next calls about this transaction with these statuses. */
    answer: (transactionId: string, statuses: number[]) => void script.set(transactionId, statuses),
    stop: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

export type EventReceiver = Awaited<ReturnType<typeof startEventReceiver>>;

/** A sandbox playing Stripe, sending its events to `receiverUrl`, and stripe-node pointed at it. */
export async function startStripeSandbox(receiverUrl: string, env: Record<string, string> = {}) {
  const config = loadConfig(ProviderSandboxConfigSchema, {
    PORT: '0',
    NODE_ENV: 'test',
    LOG_LEVEL: 'silent',
    WEBHOOK_INGEST_URL: receiverUrl,
    SANDBOX_WEBHOOK_SECRET: WEBHOOK_SECRET,
    SANDBOX_API_KEY: API_KEY,
    SANDBOX_ENABLED: 'true',
    ...env,
  });
  // A deployment that runs the sandbox: its queue exists.
  const bus = createMemoryBus(silent, { deployment: { sandbox: true } });
  const service = await startProviderSandbox(config, { bus, logger: silent }).catch(
    async (error: unknown) => {
      await bus.close();
      throw error;
    },
  );
  return {
    service,
    bus,
    port: service.port,
    stripe: new Stripe(API_KEY, {
      host: '127.0.0.1',
      port: service.port,
      protocol: 'http',
      maxNetworkRetries: 0,
    }),
    async stop() {
      await service.stop();
      await bus.close();
    },
  };
}

/** A receiver and a sandbox sending to it, stopped together. */
export async function startSandboxWithReceiver(env: Record<string, string> = {}) {
  const receiver = await startEventReceiver();
  const sandbox = await startStripeSandbox(receiver.url, env).catch(async (error: unknown) => {
    await receiver.stop();
    throw error;
  });
  return {
    ...sandbox,
    receiver,
    async stop() {
      await sandbox.stop();
      await receiver.stop();
    },
  };
}

/** A connected account in the US (a user's, for payouts), with a bank account numbered `accountNumber` if given. */
export const aConnectedAccount = (
  stripe: Stripe,
  accountNumber?: string,
  metadata?: Record<string, string>,
) =>
  stripe.accounts.create({
    type: 'express',
    country: 'US',
    ...(metadata && { metadata }),
    ...(accountNumber && {
      external_account: {
        object: 'bank_account',
        country: 'US',
        currency: 'usd',
        account_number: accountNumber,
        routing_number: '110000000',
      },
    }),
  });
