import { expect } from 'chai';
import jwt from 'jsonwebtoken';
import { createLogger, createTokenVerifier, remoteTokenKeys } from '@payments/service-kit';
import { expectRateLimited, PASSWORD, useIdentityHarness } from './identity-harness.js';

const USER_FIELDS = ['created_at', 'email', 'id', 'role', 'status', 'updated_at', 'username'];

describe('identity: registration and login', function () {
  this.timeout(60_000);

  const identity = useIdentityHarness();

  describe('POST /user', () => {
    it('creates the user and answers 201 with a Location and the user without any password', async () => {
      const response = await identity.request('POST', '/user', {
        body: { username: 'Alice.W', email: 'Alice.W@Example.COM', password: PASSWORD },
      });
      expect(response.status).to.equal(201);
      expect(Object.keys(response.body).sort()).to.deep.equal(USER_FIELDS);
      expect(response.body).to.include({
        username: 'Alice.W',
        email: 'alice.w@example.com',
        role: 'user',
        status: 'active',
      });
      expect(response.body.id).to.match(/^[0-9a-f-]{36}$/);
      expect(response.headers.get('location')).to.equal(`/user/${String(response.body.id)}`);
      expect(JSON.stringify(response.body)).not.to.match(/password|hash|argon/i);
    });

    const invalid: [string, Record<string, unknown>, string][] = [
      ['a username shorter than 3 characters', { username: 'ab' }, 'username'],
      ['a username longer than 32 characters', { username: 'a'.repeat(33) }, 'username'],
      ['a username with other characters', { username: 'bob smith' }, 'username'],
      ['an e-mail that is not one', { email: 'bob.example.com' }, 'email'],
      ['a password shorter than 8 characters', { password: 'short77' }, 'password'],
      ['a password longer than 128 characters', { password: 'p'.repeat(129) }, 'password'],
      ['a missing username', { username: undefined }, 'username'],
      ['a field the API does not take', { role: 'admin' }, 'role'],
    ];
    for (const [what, change, field] of invalid) {
      it(`answers 400 VALIDATION_ERROR naming the field for ${what}`, async () => {
        const body = { username: 'bob_1', email: 'bob@example.com', password: PASSWORD, ...change };
        const response = await identity.request<{ code: string; errors: { field: string }[] }>(
          'POST',
          '/user',
          { body },
        );
        expect(response.status).to.equal(400);
        expect(response.headers.get('content-type')).to.match(/application\/problem\+json/);
        expect(response.body.code).to.equal('VALIDATION_ERROR');
        expect(response.body.errors.map((e) => e.field)).to.include(field);
      });
    }

    it('answers 409 DUPLICATE_ENTRY for a username taken in another case, saying it is the username', async () => {
      await identity.register('carol');
      const response = await identity.request<{ code: string; detail: string }>('POST', '/user', {
        body: { username: 'CAROL', email: 'carol2@example.com', password: PASSWORD },
      });
      expect(response.status).to.equal(409);
      expect(response.body.code).to.equal('DUPLICATE_ENTRY');
      expect(response.body.detail).to.match(/username/);
    });

    it('answers 409 DUPLICATE_ENTRY for an e-mail taken in another case, saying it is the e-mail', async () => {
      await identity.register('dave');
      const response = await identity.request<{ code: string; detail: string }>('POST', '/user', {
        body: { username: 'dave2', email: 'DAVE@example.com', password: PASSWORD },
      });
      expect(response.status).to.equal(409);
      expect(response.body.code).to.equal('DUPLICATE_ENTRY');
      expect(response.body.detail).to.match(/email/);
    });

    it('creates exactly one user when 20 identical registrations race', async () => {
      const body = { username: 'racer', email: 'racer@example.com', password: PASSWORD };
      const responses = await Promise.all(
        Array.from({ length: 20 }, () => identity.request('POST', '/user', { body })),
      );
      const statuses = responses.map((r) => r.status);
      expect(statuses.filter((s) => s === 201)).to.have.length(1);
      expect(statuses.filter((s) => s === 409)).to.have.length(19);
    });
  });

  describe('POST /auth/login and /login', () => {
    let erin: { id: string };
    before(async () => {
      erin = await identity.register('erin');
    });

    const ways: [string, string, Record<string, string>][] = [
      ['/auth/login', 'username', { username: 'erin' }],
      ['/auth/login', 'e-mail in any case', { email: 'ERIN@Example.com' }],
      ['/login', 'identity holding the username', { identity: 'erin' }],
      ['/login', 'identity holding the e-mail', { identity: 'erin@example.com' }],
    ];
    for (const [path, what, name] of ways) {
      it(`gives a bearer token on ${path} by ${what}`, async () => {
        const response = await identity.request('POST', path, { body: { ...name, password: PASSWORD } });
        expect(response.status).to.equal(200);
        expect(response.body).to.have.keys('token', 'token_type', 'expires_in');
        expect(response.body.token_type).to.equal('Bearer');
        expect(response.body.expires_in).to.equal(900);
      });
    }

    it('issues an ES256 token that verifies against the served JWKS and carries every claim', async () => {
      const token = await identity.login('erin');
      const keys = remoteTokenKeys({
        jwksUrl: `${identity.url}/.well-known/jwks.json`,
        maxAgeMs: 60_000,
        logger: createLogger('test', 'silent'),
      });
      const verifier = createTokenVerifier(keys, { issuer: 'payments-identity', audience: 'payments-api' });
      const claims = await verifier.verify(token);
      expect(claims).to.include({ userId: erin.id, role: 'user' });
      const decoded = jwt.decode(token, { complete: true }) as jwt.Jwt;
      const payload = decoded.payload as jwt.JwtPayload;
      expect(decoded.header.alg).to.equal('ES256');
      expect(payload).to.include({
        sub: erin.id,
        role: 'user',
        iss: 'payments-identity',
        aud: 'payments-api',
      });
      expect(payload.jti).to.be.a('string');
      expect((payload.exp as number) - (payload.iat as number)).to.equal(900);
    });

    it('serves the JWKS with kid, alg ES256, use sig and a one-minute cache', async () => {
      const response = await identity.request<{ keys: Record<string, string>[] }>(
        'GET',
        '/.well-known/jwks.json',
      );
      expect(response.status).to.equal(200);
      expect(response.headers.get('cache-control')).to.equal('public, max-age=60');
      const [key] = response.body.keys;
      expect(key).to.include({ kty: 'EC', crv: 'P-256', alg: 'ES256', use: 'sig' });
      expect(key?.kid).to.match(/^[\w-]{43}$/);
      expect(key).not.to.have.property('d');
      const token = await identity.login('erin');
      expect(jwt.decode(token, { complete: true })?.header.kid).to.equal(key?.kid);
    });

    it('answers a wrong password and an unknown user with the same 401 INVALID_CREDENTIALS', async () => {
      const wrong = await identity.request('POST', '/auth/login', {
        body: { username: 'erin', password: 'not the password' },
      });
      const unknown = await identity.request('POST', '/auth/login', {
        body: { username: 'nobody-here', password: 'not the password' },
      });
      expect(wrong.status).to.equal(401);
      expect(wrong.body.code).to.equal('INVALID_CREDENTIALS');
      expect(unknown.body).to.deep.equal(wrong.body);
      expect(unknown.status).to.equal(wrong.status);
    });

    it('takes about as long for an unknown user as for a wrong password, because both hash', async () => {
      const timeLogin = async (username: string) => {
        const started = process.hrtime.bigint();
        await identity.request('POST', '/auth/login', { body: { username, password: 'not the password' } });
        return Number(process.hrtime.bigint() - started) / 1e6;
      };
      const median = (values: number[]) => values.sort((a, b) => a - b)[1] as number;
      const known: number[] = [];
      const unknown: number[] = [];
      for (let i = 0; i < 3; i++) {
        known.push(await timeLogin('erin'));
        unknown.push(await timeLogin(`ghost-${i}`));
      }
      // Without the dummy hash an unknown user answers in about a millisecond, far below this bound.
      expect(median(unknown)).to.be.greaterThan(median(known) / 3);
    });

    it('answers 400 when the body names the user twice or not at all', async () => {
      const twice = await identity.request('POST', '/auth/login', {
        body: { username: 'erin', email: 'erin@example.com', password: PASSWORD },
      });
      const none = await identity.request('POST', '/auth/login', { body: { password: PASSWORD } });
      expect([twice.status, none.status]).to.deep.equal([400, 400]);
      expect(none.body.code).to.equal('VALIDATION_ERROR');
    });
  });
});

describe('identity: registration limit and client addresses', function () {
  this.timeout(60_000);

  const identity = useIdentityHarness({
    REGISTRATION_MAX_PER_WINDOW: '3',
    LOGIN_MAX_FAILURES_PER_ADDRESS: '3',
  });

  const register = (username: string, address: string) =>
    identity.request('POST', '/user', {
      body: { username, email: `${username}@example.com`, password: PASSWORD },
      headers: { 'x-forwarded-for': address },
    });
  const badLogin = (address: string) =>
    identity.request('POST', '/auth/login', {
      body: { username: `nobody_${Math.random().toString(36).slice(2)}`, password: 'wrong password' },
      headers: { 'x-forwarded-for': address },
    });

  it('answers the 4th registration from one address with 429 and Retry-After, and registers nothing', async () => {
    const statuses = [];
    for (let i = 0; i < 3; i++) statuses.push((await register(`reg_${i}`, '198.51.100.30')).status);
    expect(statuses).to.deep.equal([201, 201, 201]);
    const fourth = await register('reg_3', '198.51.100.30');
    expectRateLimited(fourth);
    const login = await identity.request('POST', '/auth/login', {
      body: { username: 'reg_3', password: PASSWORD },
    });
    expect(login.status).to.equal(401);
    // Another client is not affected.
    expect((await register('reg_3', '198.51.100.31')).status).to.equal(201);
  });

  it('counts two IPv6 addresses of one /64 as one client, and an IPv4-mapped address as its IPv4', async () => {
    for (let i = 1; i <= 3; i++) expect((await badLogin(`2001:db8:77:1::${i}`)).status).to.equal(401);
    expect((await badLogin('2001:db8:77:1:ffff:ffff:ffff:ffff')).status).to.equal(429);
    expect((await badLogin('2001:db8:77:2::1')).status).to.equal(401);
    for (let i = 0; i < 3; i++) expect((await badLogin('192.0.2.90')).status).to.equal(401);
    expect((await badLogin('::ffff:192.0.2.90')).status).to.equal(429);
  });
});

describe('identity: reached directly by a caller that is not its trusted proxy', function () {
  this.timeout(60_000);

  // The test connects from 127.0.0.1; only a gateway at 192.0.2.254 would be believed.
  const identity = useIdentityHarness({
    TRUSTED_PROXIES: '192.0.2.254',
    LOGIN_MAX_FAILURES_PER_ADDRESS: '3',
  });

  it('limits it by its socket address whatever X-Forwarded-For it forges', async () => {
    const statuses = [];
    for (let i = 0; i < 5; i++) {
      const response = await identity.request('POST', '/auth/login', {
        body: { username: `victim_${i}`, password: 'sprayed password' },
        headers: { 'x-forwarded-for': `203.0.113.${i}` },
      });
      statuses.push(response.status);
    }
    expect(statuses).to.deep.equal([401, 401, 401, 429, 429]);
  });
});
