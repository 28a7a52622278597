import { expect } from 'chai';
import { startProcessSystem, type ProcessSystem, type ServiceName } from '@payments/infra';
import {
  eventually,
  freePort,
  startTcpProxy,
  testRuntime,
  viaProxy,
  type TcpProxy,
  type TestSystem,
  useSystem,
} from '@payments/testkit';
import { createPaymentsClient } from '@payments/client';
import { rawApi, signUp, type RawApi } from '@payments/test-support';

/** Ports of the running system, so an extra process finds its peers. */
const portsOf = (system: TestSystem) =>
  Object.fromEntries(
    Object.entries(system.urls).map(([name, url]) => [name, Number(new URL(url).port)]),
  ) as Record<ServiceName, number>;

const hostAndPort = (url: string) => {
  const parsed = new URL(url);
  return { host: parsed.hostname, port: Number(parsed.port) };
};

describe('revocations reach every process, whatever started first or reconnected', function () {
  this.timeout(120_000);
  const extras: ProcessSystem[] = [];
  const proxies: TcpProxy[] = [];
  const system = useSystem(
    { serviceEnv: { 'provider-sandbox': { SANDBOX_ENABLED: 'false' } } },
    {
      logs: () => extras.map((extra) => extra.logs()),
      beforeStop: async () => {
        for (const extra of extras) await extra.stop();
        for (const proxy of proxies) await proxy.close();
      },
    },
  );

  /** A second gateway and/or ledger joining the system, with some of its environment changed. */
  const startExtra = async (
    services: ServiceName[],
    env: (service: ServiceName, ports: Record<ServiceName, number>) => Record<string, string>,
  ): Promise<ProcessSystem> => {
    const ports = { ...portsOf(system) };
    for (const service of services) ports[service] = await freePort();
    const extra = await startProcessSystem({
      postgresUrl: 'postgres://unused',
      amqpUrl: system.environment('gateway').AMQP_URL as string,
      ports,
      dataDir: system.environment('identity').DATA_DIR as string,
      services,
      runtime: testRuntime(),
      nodeEnv: 'test',
      logLevel: 'warn',
      serviceEnv: Object.fromEntries(
        services.map((service) => [
          service,
          { ...system.environment(service), PORT: String(ports[service]), ...env(service, ports) },
        ]),
      ),
    });
    extras.push(extra);
    return extra;
  };

  const logIn = async (user: { username: string; password: string }) => {
    const client = createPaymentsClient({ baseUrl: system.gatewayUrl });
    return (await client.auth.login({ username: user.username, password: user.password })).token;
  };

  const loggedOutToken = async () => {
    const user = await signUp(system.gatewayUrl);
    await user.client.auth.logout();
    return { user, token: user.token };
  };

  it('a gateway and a ledger started while identity is down answer 503, then refuse a logged-out token once it is up', async () => {
    const { token } = await loggedOutToken();
    const identityProxy = await startTcpProxy(hostAndPort(system.urls.identity));
    proxies.push(identityProxy);
    identityProxy.cut();
    const identityUrl = viaProxy(system.urls.identity, identityProxy).replace(/\/$/, '');
    const late = await startExtra(['ledger', 'gateway'], () => ({ IDENTITY_URL: identityUrl }));
    const gateway = rawApi(late.gatewayUrl);
    const ledger = rawApi(late.urls.ledger);

    // Identity cannot say what was revoked, so no token is judged: not even a logged-out one gets through.
    for (const client of [gateway, ledger] as RawApi[]) {
      const refused = await client.get('/accounts', token);
      expect(refused.status, refused.text).to.equal(503);
      expect(refused.body).to.include({ code: 'SERVICE_UNAVAILABLE' });
      expect(refused.headers.get('retry-after')).to.match(/^\d+$/);
      expect((await client.get('/ready', system.serviceToken)).status).to.equal(503);
    }

    identityProxy.restore();
    for (const client of [gateway, ledger]) {
      const answer = await eventually(
        () => client.get('/accounts', token),
        (response) => response.status !== 503,
        { timeoutMs: 20_000 },
      );
      expect(answer.status, answer.text).to.equal(401);
      expect(answer.body).to.include({ code: 'AUTH_REQUIRED' });
    }
    const fresh = (await signUp(system.gatewayUrl)).token;
    expect((await gateway.get('/accounts', fresh)).status).to.equal(200);
    expect((await ledger.get('/accounts', fresh)).status).to.equal(200);
  });

  it('a gateway and a ledger that lost their broker connection refuse a token revoked meanwhile, once reconnected', async () => {
    const brokerProxy = await startTcpProxy(hostAndPort(system.environment('gateway').AMQP_URL as string));
    proxies.push(brokerProxy);
    const amqpUrl = viaProxy(system.environment('gateway').AMQP_URL as string, brokerProxy);
    // The second gateway sends to the second ledger, so no process that heard the revocation judges the token.
    const second = await startExtra(['ledger', 'gateway'], (service, ports) => ({
      AMQP_URL: amqpUrl,
      ...(service === 'gateway' && { LEDGER_URL: `http://127.0.0.1:${ports.ledger}` }),
    }));
    const gateway = rawApi(second.gatewayUrl);
    const ledger = rawApi(second.urls.ledger);
    const user = await signUp(system.gatewayUrl);
    expect((await gateway.get('/accounts', user.token)).status).to.equal(200);

    brokerProxy.cut();
    // The broker drops the gateway's exclusive broadcast queue with its connection.
    await new Promise((resolve) => setTimeout(resolve, 1000));
    await user.client.auth.logout();
    // The TokenRevoked broadcast went out while this gateway had no queue to receive it.
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect((await gateway.get('/accounts', user.token)).status).to.equal(200);
    expect((await ledger.get('/accounts', user.token)).status).to.equal(200);

    brokerProxy.restore();
    for (const client of [gateway, ledger]) {
      const answer = await eventually(
        () => client.get('/accounts', user.token),
        (response) => response.status === 401,
        { timeoutMs: 20_000 },
      );
      expect(answer.status, answer.text).to.equal(401);
      expect(answer.body).to.include({ code: 'AUTH_REQUIRED' });
    }
    expect((await gateway.get('/accounts', await logIn(user))).status).to.equal(200);
  });
});
