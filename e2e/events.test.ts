import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import {
  DELIVERY_TO_RECEIVER,
  eventually,
  runPayments,
  startTestReceiver,
  useStarted,
  useSystem,
} from '@payments/testkit';
import { rawApi, signUp, type TestUser } from '@payments/test-support';
import { loadOpenApiValidator, type OpenApiValidator } from './openapi-validator.js';

interface EventBody {
  id: string;
  object: string;
  type: string;
  api_version: string;
  created: number;
  data: { object: Record<string, unknown> };
}

describe('the events API end to end, through the gateway', function () {
  this.timeout(180_000);
  let openapi: OpenApiValidator;

  const system = useSystem(
    { serviceEnv: { 'webhook-delivery': { ...DELIVERY_TO_RECEIVER, DELIVERY_TIMEOUT_MS: '2000' } } },
    { admin: true },
  );
  const api = rawApi(system);
  const receiver = useStarted(startTestReceiver);

  const get = async (path: string, token: string) => {
    const response = await api.get(path, token);
    openapi.check('GET', path, response);
    return response;
  };

  /** A user whose deposit has completed, with its reference and metadata; their events are being written. */
  const withDeposit = async (user: TestUser & { accountId?: string }) => {
    const account = await user.client.accounts.open({ currency: 'USD' });
    const reference = `order-${randomUUID()}`;
    const accepted = await api.post(
      `/v1.1/account/${account.id}/deposit`,
      { amount: 7.5, currency: 'USD', reference, metadata: { order: '8812' } },
      user.token,
    );
    expect(accepted.status, accepted.text).to.equal(202);
    const transactionId = accepted.body.id as string;
    const completed = await eventually(
      () => get(`/events?type=transaction.completed`, user.token),
      (response) =>
        (response.body.data as EventBody[]).some((event) => event.data.object.id === transactionId),
      { timeoutMs: 30_000 },
    );
    const event = (completed.body.data as EventBody[]).find((e) => e.data.object.id === transactionId);
    return { accountId: account.id, transactionId, reference, event: event as EventBody };
  };

  let alice: TestUser;
  let bob: TestUser;

  before(async () => {
    openapi = await loadOpenApiValidator(system.gatewayUrl);
    alice = await signUp(system.gatewayUrl);
    bob = await signUp(system.gatewayUrl);
  });

  it('carries the same body as the webhook delivered for the event, metadata and reference included', async () => {
    const created = await api.post(
      '/v1.1/webhook-endpoints',
      { url: `${receiver.url}/alice`, events: ['transaction.completed'] },
      alice.token,
    );
    expect(created.status, created.text).to.equal(201);
    const { transactionId, reference, event } = await withDeposit(alice);
    expect(event).to.include({ object: 'event', type: 'transaction.completed', api_version: '1.1' });
    expect(event.data.object).to.deep.include({ id: transactionId, reference, metadata: { order: '8812' } });

    const calls = await receiver.waitForCalls('/alice', (all) =>
      all.some((call) => (JSON.parse(call.body) as EventBody).id === event.id),
    );
    const delivered = calls.find((call) => (JSON.parse(call.body) as EventBody).id === event.id);
    const one = await get(`/events/${event.id}`, alice.token);
    expect(one.status, one.text).to.equal(200);
    expect(one.text).to.equal(delivered?.body);
    expect(one.body).to.deep.equal(event);
  });

  it('keeps the events of a user without endpoints: the account opened, the deposit completed', async () => {
    const { accountId, event } = await withDeposit(bob);
    const all = await get('/events?limit=100', bob.token);
    const types = (all.body.data as EventBody[]).map((e) => e.type);
    expect(types).to.include.members(['account.created', 'transaction.completed']);
    const opened = (all.body.data as EventBody[]).find((e) => e.type === 'account.created');
    expect(opened?.data.object.id).to.equal(accountId);
    // Newest first.
    const created = (all.body.data as EventBody[]).map((e) => e.created);
    expect(created).to.deep.equal([...created].sort((a, b) => b - a));

    const window = await get(
      `/events?created[gte]=${event.created}&created[lte]=${event.created}&type=transaction.completed`,
      bob.token,
    );
    expect((window.body.data as EventBody[]).map((e) => e.id)).to.include(event.id);
    const before = await get(`/events?created[lt]=${event.created}&type=transaction.completed`, bob.token);
    expect((before.body.data as EventBody[]).map((e) => e.id)).to.not.include(event.id);
  });

  it("answers another user's event, to a user or an admin, as one that never was", async () => {
    const { event } = await withDeposit(alice);
    for (const other of [bob, system.admin]) {
      const theirs = await get(`/events/${event.id}`, other.token);
      const nothing = await get(`/events/${randomUUID()}`, other.token);
      expect(theirs.status).to.equal(404);
      expect(theirs.body.code).to.equal('RESOURCE_NOT_FOUND');
      expect(theirs.body.detail).to.equal(nothing.body.detail);
      const listed = await get('/events?limit=100', other.token);
      expect((listed.body.data as EventBody[]).map((e) => e.id)).to.not.include(event.id);
      const cursor = await get(`/events?starting_after=${event.id}`, other.token);
      expect(cursor.status).to.equal(400);
    }
    expect((await api.get('/events')).status).to.equal(401);
  });

  it('lists and shows events with `payments events`', async () => {
    const { event } = await withDeposit(bob);
    const configHome = await mkdtemp(path.join(tmpdir(), 'payments-cli-'));
    const payments = (...args: string[]) =>
      runPayments(args, { PAYMENTS_API_URL: system.gatewayUrl, XDG_CONFIG_HOME: configHome });
    try {
      const login = await payments('login', '--username', bob.username, '--password', bob.password);
      expect(login.code, login.stderr).to.equal(0);
      const listed = await payments('events', '--type', 'transaction.completed', '--limit', '1');
      expect(listed.code, listed.stderr).to.equal(0);
      expect(listed.stdout).to.contain(event.id);
      expect(listed.stdout).to.contain('transaction.completed');
      // The amount as every command prints it: the currency's decimals, not the JSON number's.
      expect(listed.stdout).to.contain('7.50 USD');
      const shown = await payments('events', 'get', event.id, '--json');
      expect(shown.code, shown.stderr).to.equal(0);
      expect(JSON.parse(shown.stdout)).to.deep.equal(event);
      const page = await payments('events', 'list', '--json', '--limit', '1');
      expect(JSON.parse(page.stdout)).to.include({ has_more: true });
    } finally {
      await rm(configHome, { recursive: true, force: true });
    }
  });
});
