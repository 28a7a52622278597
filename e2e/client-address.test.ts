import { randomBytes } from 'node:crypto';
import { request } from 'node:http';
import { expect } from 'chai';
import { startSystem, type TestSystem } from '@payments/testkit';
import { rawApi, type ApiResponse, type RawApi } from './support/api.js';

const REGISTRATION_LIMIT = 5;

/** A POST to `url` from the local address `from` (any 127.x address is this machine), outside fetch's reach. */
function postFrom(
  from: string,
  url: string,
  body: unknown,
  headers: Record<string, string>,
): Promise<{ status: number; body: Record<string, unknown> }> {
  return new Promise((resolve, reject) => {
    const payload = JSON.stringify(body);
    const outgoing = request(
      url,
      {
        method: 'POST',
        localAddress: from,
        headers: {
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(payload),
          ...headers,
        },
      },
      (incoming) => {
        const chunks: Buffer[] = [];
        incoming.on('data', (chunk: Buffer) => chunks.push(chunk));
        incoming.on('end', () =>
          resolve({
            status: incoming.statusCode ?? 0,
            body: JSON.parse(Buffer.concat(chunks).toString() || '{}'),
          }),
        );
      },
    );
    outgoing.on('error', reject);
    outgoing.end(payload);
  });
}

describe('client addresses and per-address limits, through a load balancer', function () {
  this.timeout(120_000);
  let system: TestSystem;
  let api: RawApi;

  before(async () => {
    system = await startSystem({
      serviceEnv: {
        'provider-sandbox': { SANDBOX_ENABLED: 'false' },
        // The test is the load balancer in front of the gateway (127.0.0.1); identity believes only the gateway.
        gateway: { TRUSTED_PROXIES: '127.0.0.1' },
        identity: { TRUSTED_PROXIES: '127.0.0.1', REGISTRATION_MAX_PER_WINDOW: String(REGISTRATION_LIMIT) },
      },
    });
    api = rawApi(system.gatewayUrl);
  });

  let failures = 0;
  afterEach(function () {
    if (this.currentTest?.state === 'failed') failures += 1;
  });
  after(async () => {
    if (failures > 0) console.error(system?.logs());
    await system?.stop();
  });

  /** A request as the load balancer passes it on for the client at `address`. */
  const from = (address: string) => ({ 'x-forwarded-for': address });
  const register = (address: string) => {
    const username = `u_${randomBytes(5).toString('hex')}`;
    const password = `pw-${randomBytes(8).toString('hex')}`;
    return api
      .post('/user', { username, email: `${username}@example.com`, password }, undefined, from(address))
      .then((response) => ({ response, username, password }));
  };
  const login = (address: string, username: string, password: string) =>
    api.post('/auth/login', { username, password }, undefined, from(address));
  const badLogin = (address: string) =>
    login(address, `nobody_${randomBytes(4).toString('hex')}`, 'sprayed-password');

  it("one client's ten bad logins do not lock out another client behind the same load balancer", async () => {
    const honest = await register('198.51.100.8');
    expect(honest.response.status, honest.response.text).to.equal(201);
    const answers: ApiResponse[] = [];
    for (let i = 0; i < 11; i++) answers.push(await badLogin('198.51.100.7'));
    expect(answers.slice(0, 10).map((a) => a.status)).to.deep.equal(Array(10).fill(401));
    expect(answers[10]?.status).to.equal(429);

    const honestLogin = await login('198.51.100.8', honest.username, honest.password);
    expect(honestLogin.status, honestLogin.text).to.equal(200);
    expect((await api.get('/accounts', honestLogin.body.token as string)).status).to.equal(200);
  });

  it("a caller reaching identity's port directly cannot dodge its per-address limit with X-Forwarded-For", async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 12; i++) {
      const answer = await postFrom(
        '127.0.0.2',
        `${system.urls.identity}/auth/login`,
        { username: `victim_${i}`, password: 'sprayed-password' },
        { 'x-forwarded-for': `203.0.113.${i}` },
      );
      statuses.push(answer.status);
    }
    expect(statuses.slice(0, 10)).to.deep.equal(Array(10).fill(401));
    expect(statuses.slice(10)).to.deep.equal([429, 429]);
    // Clients of the gateway are not caught by it.
    expect((await badLogin('198.51.100.9')).status).to.equal(401);
  });

  it('counts two IPv6 clients of one /64 as one', async () => {
    for (let i = 1; i <= 10; i++) expect((await badLogin(`2001:db8:aa:1::${i}`)).status).to.equal(401);
    expect((await badLogin('2001:db8:aa:1:ffff:ffff:ffff:ffff')).status).to.equal(429);
    expect((await badLogin('2001:db8:aa:2::1')).status).to.equal(401);
  });

  it('limits registrations per client address, with 429 and Retry-After', async () => {
    for (let i = 0; i < REGISTRATION_LIMIT; i++) {
      const { response } = await register('198.51.100.50');
      expect(response.status, response.text).to.equal(201);
    }
    const refused = await register('198.51.100.50');
    expect(refused.response.status, refused.response.text).to.equal(429);
    expect(refused.response.body).to.include({ code: 'RATE_LIMIT_EXCEEDED' });
    expect(Number(refused.response.headers.get('retry-after'))).to.be.within(1, 900);
    expect((await login('198.51.100.51', refused.username, refused.password)).status).to.equal(401);
    expect((await register('198.51.100.51')).response.status).to.equal(201);
  });
});
