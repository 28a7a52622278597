import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import { expect } from 'chai';
import Stripe from 'stripe';
import { createLogger, createMemoryBus, loadConfig, type RunningService } from '@payments/service-kit';
import { eventually } from '@payments/testkit';
import { ProviderSandboxConfigSchema, startProviderSandbox } from '../src/index.js';

const KEY = 'sk_test_sandbox_held_payouts_test';
const silent = createLogger('provider-sandbox-test', 'silent');

/** Stands in for webhook-ingest: keeps every event it is sent, in the order they came. */
async function startIngest() {
  const events: Stripe.Event[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      events.push(JSON.parse(Buffer.concat(chunks).toString('utf8')) as Stripe.Event);
      res.writeHead(200).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    /** The types of the events about one object, in the order they arrived. */
    typesAbout: (objectId: string) =>
      events.filter((event) => (event.data.object as { id?: string }).id === objectId).map((e) => e.type),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

describe('provider-sandbox: payouts held until released (SANDBOX_HOLD_PAYOUTS)', () => {
  let ingest: Awaited<ReturnType<typeof startIngest>>;
  let service: RunningService;
  let stripe: Stripe;
  const bus = createMemoryBus(silent, { deployment: { sandbox: true } });

  before(async () => {
    ingest = await startIngest();
    const config = loadConfig(ProviderSandboxConfigSchema, {
      PORT: '0',
      NODE_ENV: 'test',
      LOG_LEVEL: 'silent',
      WEBHOOK_INGEST_URL: ingest.url,
      SANDBOX_API_KEY: KEY,
      SANDBOX_ENABLED: 'true',
      SANDBOX_DELAY_MS: '50',
      SANDBOX_HOLD_PAYOUTS: 'true',
    });
    service = await startProviderSandbox(config, { bus, logger: silent });
    stripe = new Stripe(KEY, {
      host: '127.0.0.1',
      port: service.port,
      protocol: 'http',
      maxNetworkRetries: 0,
    });
  });

  after(async () => {
    await service?.stop();
    await bus.close();
    await ingest?.close();
  });

  /** A payout of `amount` cents on a new connected account whose bank is `accountNumber`. */
  const payout = async (amount: number, accountNumber = '000123456789') => {
    const account = await stripe.accounts.create({
      type: 'express',
      country: 'US',
      external_account: {
        object: 'bank_account',
        country: 'US',
        currency: 'usd',
        account_number: accountNumber,
        routing_number: '110000000',
      },
    });
    const transactionId = randomUUID();
    await stripe.transfers.create({
      amount,
      currency: 'usd',
      destination: account.id,
      metadata: { transaction_id: transactionId },
    });
    const made = await stripe.payouts.create(
      { amount, currency: 'usd', metadata: { transaction_id: transactionId } },
      { stripeAccount: account.id },
    );
    return { account: account.id, id: made.id };
  };
  const statusOf = async ({ account, id }: { account: string; id: string }) =>
    (await stripe.payouts.retrieve(id, {}, { stripeAccount: account })).status;
  const release = async (payoutId: string, body: unknown, key = KEY) => {
    const response = await fetch(`${service.url}/sandbox/payouts/${payoutId}/release`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    return { status: response.status, body: (await response.json()) as Record<string, unknown> };
  };
  const typesOf = (objectId: string, count: number) =>
    eventually(
      async () => ingest.typesAbout(objectId),
      (types) => types.length >= count,
    );

  it('keeps a payout pending past SANDBOX_DELAY_MS, then pays it once released, once', async () => {
    const held = await payout(2_500);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(await statusOf(held)).to.equal('pending');
    expect(ingest.typesAbout(held.id)).to.deep.equal(['payout.created']);

    const released = await release(held.id, { outcome: 'paid' });
    expect(released.status).to.equal(200);
    expect(released.body).to.include({ id: held.id, object: 'payout', status: 'paid' });
    expect(await typesOf(held.id, 2)).to.deep.equal(['payout.created', 'payout.paid']);

    const again = await release(held.id, { outcome: 'failed' });
    expect(again.status).to.equal(409);
    expect(await statusOf(held)).to.equal('paid');
  });

  it('fails a released payout as told, whatever the bank, and its money is back on the account', async () => {
    const held = await payout(1_800);
    expect((await release(held.id, { outcome: 'failed' })).body).to.include({
      status: 'failed',
      failure_code: 'could_not_process',
    });
    expect(await typesOf(held.id, 2)).to.deep.equal(['payout.created', 'payout.failed']);
    const again = await stripe.payouts.create(
      { amount: 1_800, currency: 'usd' },
      { stripeAccount: held.account },
    );
    expect(again.status).to.equal('pending');

    // Told to pay, a payout is paid even to Stripe's closed test bank account, and whatever its amount.
    const closed = await payout(1_013, '000111111113');
    expect((await release(closed.id, { outcome: 'paid' })).body).to.include({ status: 'paid' });
  });

  it('refuses a release without an outcome, of a payout it does not hold, or without the secret key', async () => {
    const held = await payout(700);
    const unsaid = await release(held.id, {});
    expect(unsaid.status).to.equal(400);
    expect(unsaid.body.error).to.include({ type: 'invalid_request_error', param: 'outcome' });
    expect((await release('po_missing', { outcome: 'paid' })).status).to.equal(404);
    expect((await release(held.id, { outcome: 'paid' }, 'sk_test_wrong')).status).to.equal(401);
    expect(await statusOf(held)).to.equal('pending');
  });
});
