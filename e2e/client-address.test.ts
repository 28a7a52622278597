import { randomBytes } from 'node:crypto';
import { request } from 'node:http';
import { expect } from 'chai';
import { useSystem } from '@payments/testkit';
import { rawApi, type ApiResponse } from '@payments/test-support';

const REGISTRATION_LIMIT = 5;
/** Identity's login limits here: failures per account from one address, per account, per address. */
const PAIR_LIMIT = 3;
const ACCOUNT_LIMIT = 9;
const ADDRESS_LIMIT = 10;

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

  const system = useSystem({
    serviceEnv: {
      'provider-sandbox': { SANDBOX_ENABLED: 'false' },
      // The test is the load balancer in front of the gateway (127.0.0.1); identity believes only the gateway.
      gateway: { TRUSTED_PROXIES: '127.0.0.1' },
      identity: {
        TRUSTED_PROXIES: '127.0.0.1',
        REGISTRATION_MAX_PER_WINDOW: String(REGISTRATION_LIMIT),
        LOGIN_MAX_FAILURES: String(PAIR_LIMIT),
        LOGIN_MAX_FAILURES_PER_ACCOUNT: String(ACCOUNT_LIMIT),
        LOGIN_MAX_FAILURES_PER_ADDRESS: String(ADDRESS_LIMIT),
      },
    },
  });
  const api = rawApi(system);

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

  it("an attacker's wrong passwords from one address stop there, and the account's owner logs in from another", async () => {
    const owner = await register('198.51.100.20');
    expect(owner.response.status, owner.response.text).to.equal(201);
    const attacker = '198.51.100.21';
    const guesses: ApiResponse[] = [];
    for (let i = 0; i <= PAIR_LIMIT; i++) guesses.push(await login(attacker, owner.username, `guess-${i}`));
    expect(guesses.map((answer) => answer.status)).to.deep.equal([...Array(PAIR_LIMIT).fill(401), 429]);
    const refused = guesses[PAIR_LIMIT] as ApiResponse;
    expect(refused.headers.get('content-type')).to.match(/^application\/problem\+json/);
    expect(refused.body).to.include({ status: 429, code: 'RATE_LIMIT_EXCEEDED' });
    expect(Number(refused.headers.get('retry-after'))).to.be.within(1, 900);
    // Refused before the password is checked: the right one from there is no oracle.
    expect((await login(attacker, owner.username, owner.password)).status).to.equal(429);

    const ownerLogin = await login('198.51.100.20', owner.username, owner.password);
    expect(ownerLogin.status, ownerLogin.text).to.equal(200);
    expect((await api.get('/accounts', ownerLogin.body.token as string)).status).to.equal(200);
  });

  it('stops a guess spread over many addresses at the account’s higher ceiling, however many are sent at once', async () => {
    const victim = await register('198.51.100.22');
    expect(victim.response.status, victim.response.text).to.equal(201);
    // Eight addresses, each guessing as often as its own limit allows, all at once.
    const guesses = await Promise.all(
      Array.from({ length: 8 * PAIR_LIMIT }, (_, i) =>
        login(`203.0.113.${100 + (i % 8)}`, victim.username, `guess-${i}`),
      ),
    );
    const statuses = guesses.map((answer) => answer.status);
    expect(statuses.filter((status) => status === 401)).to.have.length(ACCOUNT_LIMIT);
    expect(statuses.filter((status) => status === 429)).to.have.length(8 * PAIR_LIMIT - ACCOUNT_LIMIT);
    // A ninth address, with the right password: the account has had its failures for the window.
    const more = await login('203.0.113.200', victim.username, victim.password);
    expect(more.status, more.text).to.equal(429);
    expect(more.body).to.include({ code: 'RATE_LIMIT_EXCEEDED' });
    expect(Number(more.headers.get('retry-after'))).to.be.within(1, 900);
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
