import { expect } from 'chai';
import { closedPort, eventually, freePort, testRuntime, useSystem } from '@payments/testkit';
import { startProcessSystem, type ProcessSystem } from '@payments/infra';
import { rawApi, signUp, type TestUser } from '@payments/test-support';
import { portsOf } from './support/system-copies.js';

describe('deposit flow end to end, every service in its own process', function () {
  this.timeout(120_000);
  let user: TestUser;
  let accountId: string;

  // No sandbox here, as in production (no process, no queue for it): the test plays the payment provider itself,
  // through the unsigned webhook it opts into.
  const system = useSystem({
    sandbox: false,
    serviceEnv: { 'webhook-ingest': { UNSIGNED_WEBHOOK_ENABLED: 'true' } },
  });
  const api = rawApi(system);

  before(async () => {
    user = await signUp(system.gatewayUrl);
    accountId = (await user.client.accounts.open({ currency: 'USD' })).id;
  });

  const balanceOf = async (id: string) => (await user.client.balances.get(id)).balance;
  const deposit = async (amount: number | string) => {
    const response = await api.post(`/account/${accountId}/deposit`, { amount, currency: 'USD' }, user.token);
    expect(response.status, response.text).to.equal(202);
    return response;
  };
  const confirm = (paymentId: string, status = 'completed') =>
    api.post('/webhook/payment', { payment_id: paymentId, status });

  it('credits a deposit only once the payment webhook confirms it', async () => {
    const accepted = await deposit(100.5);
    const transactionId = accepted.body.id as string;
    expect(accepted.headers.get('location')).to.equal(`/transaction/${transactionId}`);
    expect(accepted.body).to.include({ status: 'pending', amount: 100.5, currency: 'USD', type: 'deposit' });
    expect(await balanceOf(accountId)).to.equal(0);

    const webhook = await confirm(transactionId);
    expect(webhook.status, webhook.text).to.equal(200);
    expect(webhook.text).to.equal('');

    const balance = await eventually(
      () => balanceOf(accountId),
      (b) => b === 100.5,
    );
    expect(balance).to.equal(100.5);
    const transaction = await user.client.transactions.get(transactionId);
    expect(transaction).to.include({ id: transactionId, status: 'completed', amount: 100.5 });
  });

  it('credits once when the same webhook arrives five times at once', async () => {
    const before = await balanceOf(accountId);
    const accepted = await deposit('25.25');
    const answers = await Promise.all(Array.from({ length: 5 }, () => confirm(accepted.body.id)));
    expect(answers.map((a) => a.status)).to.deep.equal([200, 200, 200, 200, 200]);
    await eventually(
      async () => (await user.client.transactions.get(accepted.body.id)).status,
      (status) => status === 'completed',
    );
    // Give any duplicate delivery time to (wrongly) land before checking.
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(await balanceOf(accountId)).to.equal(Math.round((before + 25.25) * 100) / 100);
  });

  it('answers a webhook with an unknown status with 400 and an error body', async () => {
    const response = await confirm('whatever', 'teleported');
    expect(response.status).to.equal(400);
    expect(response.body).to.deep.equal({ error: 'invalid payload' });
  });

  it('answers 401 problem+json on a protected path without a token', async () => {
    const response = await api.get(`/account/${accountId}`);
    expect(response.status).to.equal(401);
    expect(response.headers.get('content-type')).to.match(/^application\/problem\+json/);
    expect(response.body).to.include({ status: 401, code: 'AUTH_REQUIRED' });
  });

  describe('when RabbitMQ is unreachable', () => {
    let isolated: ProcessSystem;

    before(async () => {
      // A second webhook-ingest on the same database whose broker address answers nothing.
      const env = system.environment('webhook-ingest');
      const port = await freePort();
      isolated = await startProcessSystem({
        postgresUrl: 'postgres://unused',
        amqpUrl: `amqp://guest:guest@127.0.0.1:${await closedPort()}`,
        ports: { ...portsOf(system), 'webhook-ingest': port },
        dataDir: env.DATA_DIR as string,
        services: ['webhook-ingest'],
        runtime: testRuntime(),
        nodeEnv: 'test',
        logLevel: 'warn',
        serviceEnv: {
          'webhook-ingest': {
            DATABASE_URL: env.DATABASE_URL as string,
            WEBHOOK_SECRETS: system.webhookSecret,
            UNSIGNED_WEBHOOK_ENABLED: 'true',
          },
        },
      });
    });

    after(async () => isolated?.stop());

    it('answers the webhook 500 and credits nothing', async () => {
      const before = await balanceOf(accountId);
      const accepted = await deposit(7);
      const response = await rawApi(isolated.urls['webhook-ingest']).post('/webhook/payment', {
        payment_id: accepted.body.id,
        status: 'completed',
      });
      expect(response.status).to.equal(500);
      expect(response.body).to.have.property('error');
      await new Promise((resolve) => setTimeout(resolve, 1000));
      expect(await balanceOf(accountId)).to.equal(before);
      expect((await user.client.transactions.get(accepted.body.id)).status).to.equal('pending');
    });
  });
});
