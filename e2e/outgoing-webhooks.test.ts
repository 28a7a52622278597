import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import Stripe from 'stripe';
import {
  eventually,
  runPayments,
  startTestReceiver,
  type ReceivedCall,
  useSystem,
  DELIVERY_TO_RECEIVER,
  useStarted,
} from '@payments/testkit';
import type { PaymentsClient } from '@payments/client';
import { rawApi, signUp, postProviderEvent } from '@payments/test-support';
import { loadOpenApiValidator, type OpenApiValidator } from './openapi-validator.js';

const stripe = new Stripe('sk_test_unused');
const addFormats = addFormatsModule as unknown as typeof addFormatsModule.default;

interface DeliveredEvent {
  id: string;
  type: string;
  api_version: string;
  data: { object: Record<string, unknown> };
}

const eventOf = (call: ReceivedCall) => JSON.parse(call.body) as DeliveredEvent;

describe('outgoing webhooks end to end, through the gateway', function () {
  this.timeout(180_000);
  let openapi: OpenApiValidator;

  const system = useSystem({
    serviceEnv: {
      'webhook-delivery': { ...DELIVERY_TO_RECEIVER, DELIVERY_TIMEOUT_MS: '2000' },
    },
  });
  const api = rawApi(system);

  const receiver = useStarted(startTestReceiver);

  before(async () => {
    openapi = await loadOpenApiValidator(system.gatewayUrl);
  });

  const call = async (
    method: string,
    path: string,
    token: string,
    body?: unknown,
    headers?: Record<string, string>,
  ) => {
    const response = await api.request(method, path, { token, body, headers });
    openapi.check(method, path, response);
    return response;
  };

  const register = async (token: string, path: string, events: string[], version = '1.1') => {
    const created = await call(
      'POST',
      '/webhook-endpoints',
      token,
      { url: `${receiver.url}${path}`, events },
      { 'x-api-version': version },
    );
    expect(created.status, created.text).to.equal(201);
    return created.body as { id: string; secret: string };
  };

  const openAccountAndDeposit = async (
    client: PaymentsClient<'1.1'>,
    amount: number,
    attached: { reference?: string; metadata?: Record<string, string> } = {},
  ) => {
    const account = await client.accounts.open({ currency: 'USD' });
    const deposit = await client.money.deposit(account.id, { amount, currency: 'USD', ...attached });
    return { accountId: account.id, transactionId: deposit.id };
  };

  it('delivers one signed transaction.completed for a deposit, verified by the stripe package', async () => {
    const { token, client } = await signUp(system.gatewayUrl);
    const endpoint = await register(token, '/deposit', ['transaction.completed']);
    const reference = `order-${randomUUID()}`;
    const { transactionId } = await openAccountAndDeposit(client, 42.5, {
      reference,
      metadata: { order: '8812' },
    });
    const calls = await eventually(
      async () => receiver.calls('/deposit'),
      (found) => found.length > 0,
      { timeoutMs: 30_000 },
    );
    const [first] = calls;
    const verified = stripe.webhooks.constructEvent(
      first!.body,
      first!.headers['stripe-signature'] as string,
      endpoint.secret,
    ) as unknown as DeliveredEvent;
    expect(verified).to.include({ type: 'transaction.completed', api_version: '1.1' });
    // The body is what the OpenAPI document's `webhooks.event` promises.
    const schemas = (openapi.document.components as { schemas: Record<string, object> }).schemas;
    const validate = addFormats(new Ajv2020({ strict: false })).compile(schemas.WebhookEvent as object);
    expect(validate(JSON.parse(first!.body)), JSON.stringify(validate.errors)).to.equal(true);
    expect(verified.data.object).to.include({
      id: transactionId,
      status: 'completed',
      amount: 42.5,
      type: 'deposit',
      reference,
    });
    expect(verified.data.object).to.deep.include({ metadata: { order: '8812' } });
    expect(verified.data.object).to.have.property('fee');
    const transaction = await client.transactions.get(transactionId);
    // The event carries the transaction as its owner reads it, without what the provider made for it.
    const { provider_payment: providerPayment, ...shown } = transaction;
    expect(providerPayment).to.have.property('reference');
    expect(verified.data.object).to.deep.equal(shown);

    await new Promise((resolve) => setTimeout(resolve, 1000));
    expect(receiver.calls('/deposit'), 'exactly one delivery').to.have.length(1);
    const log = await call('GET', `/webhook-endpoints/${endpoint.id}/deliveries`, token);
    expect(log.body.data).to.have.length(1);
    expect(log.body.data[0]).to.include({ status: 'succeeded', attempts: 1, last_status_code: 200 });
  });

  it('announces a failed payment attempt as transaction.updated, then the cancellation as transaction.canceled', async () => {
    const { token, client } = await signUp(system.gatewayUrl);
    const endpoint = await register(token, '/declined', ['transaction.updated', 'transaction.canceled']);
    // The sandbox declines amounts whose minor units end in 13, then cancels the payment.
    const { transactionId } = await openAccountAndDeposit(client, 10.13);
    const calls = await eventually(
      async () => receiver.calls('/declined'),
      (found) => found.length >= 2,
      { timeoutMs: 30_000 },
    );
    const [updated, canceled] = calls
      .map(
        (received) =>
          stripe.webhooks.constructEvent(
            received.body,
            received.headers['stripe-signature'] as string,
            endpoint.secret,
          ) as unknown as DeliveredEvent,
      )
      .sort((a, b) => (a.type === 'transaction.updated' ? -1 : b.type === 'transaction.updated' ? 1 : 0));
    expect(updated?.type).to.equal('transaction.updated');
    // Rendered as the transaction stands at the first delivery attempt: pending, or canceled already.
    expect(updated?.data.object).to.include({ id: transactionId, type: 'deposit', amount: 10.13 });
    expect(updated?.data.object.failure_reason).to.be.a('string').with.length.greaterThan(0);
    expect(canceled?.type).to.equal('transaction.canceled');
    expect(canceled?.data.object).to.include({ id: transactionId, status: 'canceled' });
    const final = await client.transactions.get(transactionId);
    expect(final).to.include({
      status: 'canceled',
      failure_reason: 'canceled at the provider (abandoned)',
    });
  });

  it('gets the event to a receiver that fails three times on the fourth attempt', async () => {
    const { token, client } = await signUp(system.gatewayUrl);
    const endpoint = await register(token, '/flaky', ['transaction.completed']);
    receiver.on('/flaky', (n) => (n <= 3 ? { status: 500, body: 'try later' } : { status: 200 }));
    await openAccountAndDeposit(client, 10);
    const calls = await eventually(
      async () => receiver.calls('/flaky'),
      (found) => found.length >= 4,
      {
        timeoutMs: 30_000,
      },
    );
    expect(new Set(calls.map((c) => eventOf(c).id)).size, 'one event, four attempts').to.equal(1);
    const log = await eventually(
      () => call('GET', `/webhook-endpoints/${endpoint.id}/deliveries`, token),
      (response) => response.body.data[0]?.status === 'succeeded',
    );
    const [delivery] = log.body.data;
    expect(delivery).to.include({ attempts: 4, last_status_code: 200 });
    const detail = await call('GET', `/webhook-endpoints/${endpoint.id}/deliveries/${delivery.id}`, token);
    expect(detail.body.attempt_log.map((a: { status_code: number }) => a.status_code)).to.deep.equal([
      500, 500, 500, 200,
    ]);
    const again = await call(
      'POST',
      `/webhook-endpoints/${endpoint.id}/deliveries/${delivery.id}/redeliver`,
      token,
    );
    expect(again.status, again.text).to.equal(202);
    await eventually(
      async () => receiver.calls('/flaky'),
      (found) => found.length >= 5,
    );
  });

  it('delivers account.created and user.updated as the API renders them, and keeps other users out', async () => {
    const me = await signUp(system.gatewayUrl);
    const endpoint = await register(me.token, '/mine', ['account.created', 'user.updated'], '1.0');
    const account = await me.client.accounts.open({ currency: 'USD' });
    const renamed = await api.put(`/user/${me.userId}`, { username: `${me.username}_x` }, me.token);
    expect(renamed.status, renamed.text).to.equal(200);
    const calls = await eventually(
      async () => receiver.calls('/mine'),
      (found) => found.length >= 2,
      {
        timeoutMs: 30_000,
      },
    );
    const byType = Object.fromEntries(calls.map((c) => [eventOf(c).type, eventOf(c)]));
    expect(byType['account.created']?.data.object).to.include({ id: account.id, balance: 0 });
    expect(byType['user.updated']?.data.object).to.deep.equal(renamed.body);

    const other = await signUp(system.gatewayUrl);
    for (const [method, path] of [
      ['GET', `/webhook-endpoints/${endpoint.id}`],
      ['DELETE', `/webhook-endpoints/${endpoint.id}`],
      ['GET', `/webhook-endpoints/${endpoint.id}/deliveries`],
    ] as const) {
      const response = await call(method, path, other.token);
      expect(response.status, `${method} ${path}`).to.equal(403);
    }
  });

  it('delivers transaction.reversed for a refund of a deposit, the reversal rendered like the API does', async () => {
    const { token, client } = await signUp(system.gatewayUrl);
    await register(token, '/reversed', ['transaction.reversed']);
    const { transactionId } = await openAccountAndDeposit(client, 100);
    await eventually(
      async () => (await client.transactions.get(transactionId)).status,
      (status) => status === 'completed',
    );
    const body = JSON.stringify({
      id: `evt_${randomUUID()}`,
      object: 'event',
      type: 'charge.refunded',
      data: {
        object: {
          id: `ch_${transactionId}`,
          object: 'charge',
          amount: 10000,
          amount_refunded: 2500,
          currency: 'usd',
          payment_intent: transactionId,
          metadata: { transaction_id: transactionId },
          refunds: {
            object: 'list',
            data: [{ id: `re_${randomUUID()}`, object: 'refund' }],
            has_more: false,
          },
        },
      },
    });
    const refunded = await postProviderEvent(api, body, system.webhookSecret);
    expect(refunded.status, refunded.text).to.equal(200);
    const [call] = await eventually(
      async () => receiver.calls('/reversed'),
      (calls) => calls.length > 0,
      {
        timeoutMs: 30_000,
      },
    );
    const event = eventOf(call!);
    expect(event.type).to.equal('transaction.reversed');
    expect(event.data.object).to.include({ type: 'reversal', amount: 25, status: 'completed' });
    const reversal = await client.transactions.get(String(event.data.object.id));
    expect(event.data.object).to.deep.equal(reversal);
  });

  it('loses nothing when the delivery process is killed mid-flight', async () => {
    const { token, client } = await signUp(system.gatewayUrl);
    await register(token, '/crash', ['transaction.completed']);
    receiver.on('/crash', (n) => (n === 1 ? 'hang' : { status: 200 }));
    const { transactionId } = await openAccountAndDeposit(client, 7);
    await eventually(
      async () => receiver.calls('/crash'),
      (found) => found.length >= 1,
      { timeoutMs: 30_000 },
    );
    await system.kill('webhook-delivery', 'SIGKILL');
    // Events published while it is down wait in its queue.
    const second = await openAccountAndDeposit(client, 8);
    await system.restart('webhook-delivery');
    const calls = await eventually(
      async () => receiver.calls('/crash').map((c) => eventOf(c).data.object.id),
      (ids) =>
        ids.includes(transactionId) &&
        ids.filter((id) => id === transactionId).length >= 2 &&
        ids.includes(second.transactionId),
      { timeoutMs: 60_000, intervalMs: 250 },
    );
    expect(calls).to.include.members([transactionId, second.transactionId]);
  });

  it('documents every webhook endpoint operation it answers (OpenAPI)', async () => {
    const { token } = await signUp(system.gatewayUrl);
    const endpoint = await register(token, '/docs', ['transaction.failed']);
    expect((await call('GET', '/webhook-endpoints', token)).status).to.equal(200);
    expect((await call('GET', `/webhook-endpoints/${endpoint.id}`, token)).status).to.equal(200);
    expect(
      (await call('PUT', `/webhook-endpoints/${endpoint.id}`, token, { enabled: false })).status,
    ).to.equal(200);
    expect((await call('POST', `/webhook-endpoints/${endpoint.id}/rotate-secret`, token)).status).to.equal(
      200,
    );
    // The version prefix pins the endpoint's API version like the header does.
    const prefixed = await api.request('POST', '/v1.1/webhook-endpoints', {
      token,
      body: { url: `${receiver.url}/prefixed`, events: ['user.updated'] },
    });
    expect(prefixed.status, prefixed.text).to.equal(201);
    expect(prefixed.body.api_version).to.equal('1.1');
    expect(prefixed.headers.get('x-api-version')).to.equal('1.1');
    const refused = await call('POST', '/webhook-endpoints', token, {
      url: 'ftp://example.com',
      events: ['user.updated'],
    });
    expect(refused.status).to.equal(400);
    expect((await call('DELETE', `/webhook-endpoints/${endpoint.id}`, token)).status).to.equal(204);
    expect((await call('GET', `/webhook-endpoints/${endpoint.id}`, token)).status).to.equal(404);
    const { text } = await rawApi(system.urls['webhook-delivery']).get('/metrics', system.serviceToken);
    expect(text).to.match(/webhook_deliveries_succeeded_total\{[^}]*\} [1-9]/);
    expect(text).to.match(/webhook_delivery_queue_depth/);
  });

  it('manages endpoints and reads the delivery log from the CLI', async () => {
    const user = await signUp(system.gatewayUrl);
    const configHome = await mkdtemp(path.join(tmpdir(), 'payments-cli-'));
    const payments = async (...args: string[]) => {
      const run = await runPayments(args, {
        PAYMENTS_API_URL: system.gatewayUrl,
        XDG_CONFIG_HOME: configHome,
      });
      return { code: run.code, stdout: run.stdout.trim(), stderr: run.stderr.trim() };
    };
    try {
      const login = await payments('login', '--username', user.username, '--password', user.password);
      expect(login.code, login.stderr).to.equal(0);
      const created = await payments(
        'webhook',
        'create',
        `${receiver.url}/cli`,
        '--event',
        'transaction.completed',
        '--json',
      );
      expect(created.code, created.stderr).to.equal(0);
      const endpoint = JSON.parse(created.stdout) as { id: string; secret: string };
      expect(endpoint.secret).to.match(/^whsec_/);
      const human = await payments('webhook', 'show', endpoint.id);
      expect(human.stdout).to.include(`${receiver.url}/cli`).and.not.include(endpoint.secret);
      const list = await payments('webhook', 'list');
      expect(list.stdout).to.include(endpoint.id);
      const unknown = await payments('webhook', 'create', `${receiver.url}/x`, '--event', 'money.printed');
      expect(unknown.code).to.not.equal(0);

      await openAccountAndDeposit(user.client, 3);
      await eventually(
        async () => receiver.calls('/cli'),
        (calls) => calls.length === 1,
        { timeoutMs: 30_000 },
      );
      const log = await eventually(
        () => payments('webhook', 'deliveries', endpoint.id),
        (run) => run.stdout.includes('succeeded'),
      );
      expect(log.stdout).to.match(/transaction\.completed\W+succeeded\W+1\W+200/);
      const rotated = await payments('webhook', 'rotate-secret', endpoint.id, '--grace', '60');
      expect(rotated.code, rotated.stderr).to.equal(0);
      expect(rotated.stdout).to.include('Signing secret').and.not.include(endpoint.secret);
      const disabled = await payments('webhook', 'update', endpoint.id, '--no-enable');
      expect(disabled.stdout).to.match(/Enabled\W+no/);
      const deleted = await payments('webhook', 'delete', endpoint.id);
      expect(deleted.code, deleted.stderr).to.equal(0);
      expect((await payments('webhook', 'show', endpoint.id)).code).to.not.equal(0);
    } finally {
      await rm(configHome, { recursive: true, force: true });
    }
  });
});
