import { expect } from 'chai';
import { SERVICE_NAMES } from '@payments/infra';
import {
  eventually,
  findInfrastructure,
  startTcpProxy,
  viaProxy,
  type TcpProxy,
  useSystem,
} from '@payments/testkit';
import { rawApi, signUpWithAccount, type Customer } from '@payments/test-support';
import { sleep } from './support/concurrency.js';

/** How long the outage is watched: several of Kubernetes' 5 s readiness periods would fail within it. */
const WATCH_MS = 4000;

describe('a broker outage spreads no further than the consumers that wait for it', function () {
  this.timeout(90_000);
  let broker: TcpProxy;
  let customer: Customer;

  // Every service reaches RabbitMQ through one hop the test can cut: the broker goes away for all of them.
  const system = useSystem(async () => {
    const { amqpUrl } = await findInfrastructure();
    const target = new URL(amqpUrl);
    broker = await startTcpProxy({ host: target.hostname, port: Number(target.port || 5672) });
    const viaBroker = { AMQP_URL: viaProxy(amqpUrl, broker) };
    return { serviceEnv: Object.fromEntries(SERVICE_NAMES.map((service) => [service, viaBroker])) };
  });
  const api = rawApi(system);

  before(async () => {
    customer = await signUpWithAccount(system.gatewayUrl);
  });

  after(async () => {
    await broker?.close();
  });

  /** `/ready` of the gateway (which wants the service credential) or of a service's own port. */
  const ready = async (url: string) =>
    (await fetch(new URL('/ready', url), {
      headers: { authorization: `Bearer ${system.serviceToken}` },
      signal: AbortSignal.timeout(2000),
    }).then((response) => response.status)) as number;

  /** The process's `event_bus_connected` as it reports it at `/metrics`. */
  const busConnected = async (url: string) => {
    const response = await fetch(new URL('/metrics', url), {
      headers: { authorization: `Bearer ${system.serviceToken}` },
      signal: AbortSignal.timeout(2000),
    });
    const value = /^event_bus_connected(?:\{[^}]*\})? (\d+)$/m.exec(await response.text())?.[1];
    return value === undefined ? undefined : Number(value);
  };

  it('leaves the gateway and the ledger ready, and answers balance reads and logins, while RabbitMQ is away', async () => {
    const watched = {
      gateway: system.gatewayUrl,
      ledger: system.urls.ledger,
      identity: system.urls.identity,
    };
    for (const [name, url] of Object.entries(watched)) {
      expect(await ready(url), name).to.equal(200);
      expect(await busConnected(url), name).to.equal(1);
    }

    broker.cut();
    try {
      for (const [name, url] of Object.entries(watched))
        await eventually(
          () => busConnected(url),
          (value) => value === 0,
          { what: `${name} to see the broker gone`, timeoutMs: 15_000, intervalMs: 100 },
        );

      const deadline = Date.now() + WATCH_MS;
      let rounds = 0;
      while (Date.now() < deadline) {
        for (const [name, url] of Object.entries(watched)) expect(await ready(url), name).to.equal(200);
        const balance = await api.get(`/account/${customer.accountId}/balance`, customer.token);
        expect(balance.status, balance.text).to.equal(200);
        expect(balance.body).to.include({ account_id: customer.accountId, currency: 'USD' });
        const login = await api.post('/auth/login', {
          username: customer.username,
          password: customer.password,
        });
        expect(login.status, login.text).to.equal(200);
        expect(login.body).to.have.property('token').that.is.a('string');
        rounds += 1;
        await sleep(250);
      }
      expect(rounds).to.be.at.least(3);

      // A money request is accepted too: its event waits in the ledger's outbox.
      const deposit = await api.post(
        `/account/${customer.accountId}/deposit`,
        { amount: 5, currency: 'USD' },
        customer.token,
      );
      expect(deposit.status, deposit.text).to.equal(202);
      expect(broker.refused(), 'the services kept trying the broker').to.be.greaterThan(0);
    } finally {
      broker.restore();
    }
    for (const [name, url] of Object.entries(watched))
      await eventually(
        () => busConnected(url),
        (value) => value === 1,
        { what: `${name} to reconnect`, timeoutMs: 30_000, intervalMs: 250 },
      );
  });
});
