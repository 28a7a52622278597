import {
  createServer,
  request as forward,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import Stripe from 'stripe';
import { createLogger, createMetrics } from '@payments/service-kit';
import { eventually, useStarted } from '@payments/testkit';
import { createProviderPaymentRepository } from '../src/data/provider-payment-repository.js';
import {
  startProviderRequests,
  type ProviderRequests,
  type ProviderRequestStore,
} from '../src/use-cases/provider-requests.js';
import { createStripeProvider } from '../src/provider/stripe-provider.js';
import { useLedgerHarness, type TestUser } from './support/ledger-harness.js';
import { SANDBOX_KEY as KEY, startStripeSandbox } from './support/stripe-sandbox.js';

const silent = createLogger('provider-request-leases-test', 'silent');

/** A POST to the provider as the proxy saw it: the transaction its idempotency key names, and what it asked for. */
interface SeenCall {
  transactionId: string;
  path: string;
}

/**
 * Stands between the ledger and the sandbox: holds every request `delayMs` before passing it on, and counts, per
 * transaction (the idempotency key's first 36 characters), the calls under way at once.
 */
interface SlowProxy {
  url: string;
  calls: SeenCall[];
  mostAtOnce: Map<string, number>;
  /** Awaited when a call arrives, before it is held and passed on. */
  onCall: (call: SeenCall) => Promise<void>;
  close(): Promise<void>;
}

const bodyOf = async (message: IncomingMessage) => {
  const chunks: Buffer[] = [];
  for await (const chunk of message) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
};

async function startSlowProxy(target: string, delayMs: number): Promise<SlowProxy> {
  const underWay = new Map<string, number>();
  const proxy: SlowProxy = {
    url: '',
    calls: [],
    mostAtOnce: new Map(),
    onCall: async () => undefined,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
  // A failure in here (a hook that throws) is left an unhandled rejection, which mocha reports as the test's.
  const relay = async (req: IncomingMessage, res: ServerResponse) => {
    const key = req.headers['idempotency-key'];
    const call = typeof key === 'string' ? { transactionId: key.slice(0, 36), path: req.url ?? '' } : null;
    const body = await bodyOf(req);
    if (call) {
      proxy.calls.push(call);
      const now = (underWay.get(call.transactionId) ?? 0) + 1;
      underWay.set(call.transactionId, now);
      proxy.mostAtOnce.set(call.transactionId, Math.max(now, proxy.mostAtOnce.get(call.transactionId) ?? 0));
      await proxy.onCall(call);
    }
    await new Promise((resolve) => setTimeout(resolve, delayMs));
    const upstream = forward(new URL(req.url ?? '/', target), { method: req.method, headers: req.headers });
    upstream.on('response', (answer) => {
      void bodyOf(answer).then((answered) => {
        if (call) underWay.set(call.transactionId, (underWay.get(call.transactionId) ?? 1) - 1);
        res.writeHead(answer.statusCode ?? 502, answer.headers).end(answered);
      });
    });
    upstream.on('error', () => res.writeHead(502).end());
    upstream.end(body);
  };
  const server: Server = createServer((req, res) => void relay(req, res));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  proxy.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return proxy;
}

describe('ledger: one worker at a time makes the calls of a provider request', function () {
  this.timeout(60_000);
  let store: ProviderRequestStore;
  let proxy: SlowProxy;
  const loops: ProviderRequests[] = [];

  // The ledgers ask no provider themselves: the request loops under test are the only ones.
  const ledger = useLedgerHarness();
  const sandbox = useStarted(() => startStripeSandbox());
  before(() => {
    store = createProviderPaymentRepository(ledger.db);
  });
  afterEach(async () => {
    await Promise.all(loops.splice(0).map((loop) => loop.stop()));
    await proxy?.close();
  });

  const adapter = () =>
    createStripeProvider({
      secretKey: KEY,
      apiUrl: proxy.url,
      onboardingReturnUrl: 'http://127.0.0.1:8080/payout-account',
      maxNetworkRetries: 0,
    });
  const startLoop = (leaseMs: number) => {
    const loop = startProviderRequests({
      store,
      provider: adapter(),
      outbox: { wake: () => undefined },
      logger: silent,
      metrics: createMetrics('ledger'),
      intervalMs: 20,
      leaseMs,
    });
    loops.push(loop);
    return loop;
  };

  /** A user with funds and a connected account at the sandbox, linked as their payout account. */
  const customer = async () => {
    const user = ledger.newUser();
    const account = await ledger.openAccount(user);
    await ledger.fund(user, account.id, 100);
    const connected = await createStripeProvider({
      secretKey: KEY,
      apiUrl: sandbox.url,
      onboardingReturnUrl: 'http://127.0.0.1:8080/payout-account',
    }).createPayoutAccount({ userId: user.id });
    await ledger.db('payout_accounts').insert({ user_id: user.id, provider: 'stripe', account: connected });
    return { user, account, connected };
  };
  /** A withdrawal accepted by the ledger, recorded as a payout to ask the provider for. */
  const withdrawal = async (user: TestUser, accountId: string, amount: number) => {
    const accepted = await ledger.withdraw(user, accountId, amount);
    expect(accepted.status, accepted.text).to.equal(202);
    const id = accepted.body.id as string;
    expect(await store.record({ transactionId: id, kind: 'payout', provider: 'stripe' })).to.equal(true);
    return id;
  };
  const requestOf = (id: string) => ledger.db('provider_payments').where({ transaction_id: id }).first();
  const callsAbout = (id: string) =>
    proxy.calls.filter((call) => call.transactionId === id).map((c) => c.path);
  const stripe = () =>
    new Stripe(KEY, {
      host: '127.0.0.1',
      port: new URL(sandbox.url).port as unknown as number,
      protocol: 'http',
    });

  it('runs each payout in one worker at a time while its calls outlast the lease, and makes it once', async () => {
    // Each call takes longer than the whole lease: only a claim renewed while they are under way holds.
    proxy = await startSlowProxy(sandbox.url, 1_200);
    const { user, account, connected } = await customer();
    const ids = [];
    for (const amount of [10, 11, 12, 14]) ids.push(await withdrawal(user, account.id, amount));
    startLoop(1_000);
    startLoop(1_000);

    for (const id of ids) {
      const row = await eventually(
        () => requestOf(id),
        (found) => found?.state === 'created',
        { timeoutMs: 20_000 },
      );
      expect(row.reference).to.match(/^po_/);
    }
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    for (const id of ids) {
      expect(proxy.mostAtOnce.get(id), `calls under way at once for ${id}`).to.equal(1);
      expect(callsAbout(id)).to.deep.equal(['/v1/transfers', '/v1/payouts']);
      const transfers = await stripe().transfers.list({ transfer_group: id });
      expect(transfers.data).to.have.length(1);
    }
    const payouts = await stripe().payouts.list({ limit: 100 }, { stripeAccount: connected });
    expect(payouts.data.map((payout) => payout.metadata?.transaction_id).sort()).to.deep.equal(
      [...ids].sort(),
    );
  });

  it('makes no further call and records nothing once another worker took the request over', async () => {
    proxy = await startSlowProxy(sandbox.url, 50);
    const { user, account } = await customer();
    const id = await withdrawal(user, account.id, 20);
    proxy.onCall = async (call) => {
      // Another worker claims it while the transfer is under way (its lease lapsed, say, in a long pause).
      if (call.transactionId === id && call.path === '/v1/transfers')
        await ledger
          .db('provider_payments')
          .where({ transaction_id: id })
          .update({
            attempts: ledger.db.raw('attempts + 1'),
            next_attempt_at: ledger.db.raw(`now() + interval '1 hour'`),
          });
    };
    startLoop(5_000);

    await eventually(
      async () => callsAbout(id),
      (calls) => calls.length > 0,
    );
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect(callsAbout(id)).to.deep.equal(['/v1/transfers']);
    expect(await requestOf(id)).to.include({
      state: 'requested',
      reference: null,
      transfer: null,
      attempts: 2,
    });
  });
});
