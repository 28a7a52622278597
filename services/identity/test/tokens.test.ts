import { createHmac, createPrivateKey, createPublicKey, randomUUID } from 'node:crypto';
import { expect } from 'chai';
import jwt from 'jsonwebtoken';
import { DEVELOPMENT_SERVICE_TOKEN, generateTokenKeyPair, serviceAuthorization } from '@payments/service-kit';
import { eventually } from '@payments/testkit';
import { useIdentityHarness } from './identity-harness.js';

const base64url = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');

describe('identity: tokens, revocation and failed-login limits', function () {
  this.timeout(60_000);
  let frank: { id: string };
  let kid: string;

  const forge = async (claims: Record<string, unknown>, options: jwt.SignOptions = {}) =>
    jwt.sign(
      { sub: frank.id, role: 'user', jti: randomUUID(), ...claims },
      createPrivateKey(await identity.signingKeyPem()),
      {
        algorithm: 'ES256',
        keyid: kid,
        issuer: 'payments-identity',
        audience: 'payments-api',
        // A token that names its own exp cannot also take expiresIn.
        ...(claims.exp === undefined && { expiresIn: 600 }),
        ...options,
      },
    );
  const readSelf = (token: string) => identity.request('GET', `/user/${frank.id}`, { token });

  const identity = useIdentityHarness();
  before(async () => {
    frank = await identity.register('frank');
    const token = await identity.login('frank');
    kid = jwt.decode(token, { complete: true })?.header.kid as string;
  });

  describe('verification', () => {
    it('accepts a well-formed token signed with the current key, so the attacks below are refused for their flaw', async () => {
      expect((await readSelf(await forge({}))).status).to.equal(200);
    });

    it('refuses a token with alg none', async () => {
      const header = base64url({ alg: 'none', typ: 'JWT', kid });
      const now = Math.floor(Date.now() / 1000);
      const payload = base64url({
        sub: frank.id,
        role: 'user',
        jti: randomUUID(),
        iat: now,
        exp: now + 600,
        iss: 'payments-identity',
        aud: 'payments-api',
      });
      const response = await readSelf(`${header}.${payload}.`);
      expect(response.status).to.equal(401);
      expect(response.body.code).to.equal('AUTH_REQUIRED');
    });

    it('refuses an HS256 token whose HMAC secret is the public key', async () => {
      const publicPem = createPublicKey(createPrivateKey(await identity.signingKeyPem()))
        .export({ format: 'pem', type: 'spki' })
        .toString();
      const now = Math.floor(Date.now() / 1000);
      const unsigned = `${base64url({ alg: 'HS256', typ: 'JWT', kid })}.${base64url({
        sub: frank.id,
        role: 'admin',
        jti: randomUUID(),
        iat: now,
        exp: now + 600,
        iss: 'payments-identity',
        aud: 'payments-api',
      })}`;
      const signature = createHmac('sha256', publicPem).update(unsigned).digest('base64url');
      expect((await readSelf(`${unsigned}.${signature}`)).status).to.equal(401);
    });

    it('refuses a token for another audience', async () => {
      expect((await readSelf(await forge({}, { audience: 'someone-else' }))).status).to.equal(401);
    });

    it('refuses a token from another issuer', async () => {
      expect((await readSelf(await forge({}, { issuer: 'evil-issuer' }))).status).to.equal(401);
    });

    it('refuses an expired token', async () => {
      const iat = Math.floor(Date.now() / 1000) - 1000;
      const response = await readSelf(await forge({ iat }, { expiresIn: 10 }));
      expect(response.status).to.equal(401);
      expect(response.body.code).to.equal('AUTH_REQUIRED');
    });

    it('refuses a token signed by a key it does not publish', async () => {
      const { privateKey } = generateTokenKeyPair();
      const token = jwt.sign({ sub: frank.id, role: 'user', jti: randomUUID() }, privateKey, {
        algorithm: 'ES256',
        keyid: kid,
        issuer: 'payments-identity',
        audience: 'payments-api',
        expiresIn: 600,
      });
      expect((await readSelf(token)).status).to.equal(401);
    });
  });

  describe('logout and refresh', () => {
    it('logs out with 204, then refuses the same token with 401 AUTH_REQUIRED and publishes TokenRevoked', async () => {
      const token = await identity.login('frank');
      const { jti } = jwt.decode(token) as jwt.JwtPayload;
      expect((await readSelf(token)).status).to.equal(200);
      expect((await identity.request('POST', '/auth/logout', { token })).status).to.equal(204);
      const reuse = await readSelf(token);
      expect(reuse.status).to.equal(401);
      expect(reuse.body.code).to.equal('AUTH_REQUIRED');
      const published = await eventually(
        async () => identity.published.filter((e) => e.type === 'TokenRevoked' && e.data.jti === jti),
        (events) => events.length > 0,
      );
      expect(published).to.have.length(1);
    });

    it('lists active revocations for verifiers that start later', async () => {
      const token = await identity.login('frank');
      const { jti } = jwt.decode(token) as jwt.JwtPayload;
      await identity.request('POST', '/auth/logout', { token });
      const response = await identity.request<{ data: { jti?: string; expires_at: number }[] }>(
        'GET',
        '/internal/revocations',
        { headers: serviceAuthorization(DEVELOPMENT_SERVICE_TOKEN) },
      );
      expect(response.status).to.equal(200);
      expect(response.body.data.find((r) => r.jti === jti)?.expires_at).to.be.greaterThan(Date.now() / 1000);
    });

    it('still refuses a logged-out token after a restart', async () => {
      const token = await identity.login('frank');
      await identity.request('POST', '/auth/logout', { token });
      await identity.restart();
      expect((await readSelf(token)).status).to.equal(401);
      expect((await readSelf(await identity.login('frank'))).status).to.equal(200);
    });

    it('refreshes a valid token into a new one and retires the old one', async () => {
      const token = await identity.login('frank');
      const response = await identity.request<{ token: string; token_type: string }>(
        'POST',
        '/auth/refresh',
        {
          token,
        },
      );
      expect(response.status).to.equal(200);
      expect(response.body.token_type).to.equal('Bearer');
      expect(response.body.token).not.to.equal(token);
      expect((await readSelf(response.body.token)).status).to.equal(200);
      expect((await readSelf(token)).status).to.equal(401);
    });

    it('gives exactly one new token when 20 refreshes of one token race; the others get 401', async () => {
      const token = await identity.login('frank');
      const answers = await Promise.all(
        Array.from({ length: 20 }, () =>
          identity.request<{ token?: string }>('POST', '/auth/refresh', { token }),
        ),
      );
      const statuses = answers.map((answer) => answer.status);
      expect(statuses.filter((status) => status === 200)).to.have.length(1);
      expect(statuses.filter((status) => status === 401)).to.have.length(19);
      const fresh = answers.find((answer) => answer.status === 200)?.body.token as string;
      expect((await readSelf(fresh)).status).to.equal(200);
      expect((await readSelf(token)).status).to.equal(401);
    });

    it('carries the login time (auth_time) unchanged through a refresh', async () => {
      const token = await identity.login('frank');
      const first = jwt.decode(token) as jwt.JwtPayload;
      expect(first.auth_time).to.equal(first.iat);
      await new Promise((resolve) => setTimeout(resolve, 1100));
      const refreshed = await identity.request<{ token: string }>('POST', '/auth/refresh', { token });
      const second = jwt.decode(refreshed.body.token) as jwt.JwtPayload;
      expect(second.auth_time).to.equal(first.auth_time);
      expect(second.iat).to.be.greaterThan(first.iat as number);
    });

    describe('a session that refreshes forever', () => {
      const SESSION_MAX = 43_200;
      const now = () => Math.floor(Date.now() / 1000);
      const sessionToken = (claims: Record<string, unknown>) => forge({ exp: now() + 600, ...claims });

      it('refuses (401) to refresh a token whose session began more than SESSION_MAX_SECONDS ago', async () => {
        const token = await sessionToken({ iat: now() - 60, auth_time: now() - SESSION_MAX - 1 });
        expect((await readSelf(token)).status).to.equal(200);
        const response = await identity.request('POST', '/auth/refresh', { token });
        expect(response.status).to.equal(401);
        expect(response.body.code).to.equal('AUTH_REQUIRED');
      });

      it('counts a token without auth_time from its iat', async () => {
        const token = await sessionToken({ iat: now() - SESSION_MAX - 1 });
        expect((await identity.request('POST', '/auth/refresh', { token })).status).to.equal(401);
      });

      it('never issues a token that outlives the session', async () => {
        const authTime = now() - SESSION_MAX + 120;
        const token = await sessionToken({ iat: now() - 60, auth_time: authTime });
        const response = await identity.request<{ token: string; expires_in: number }>(
          'POST',
          '/auth/refresh',
          { token },
        );
        expect(response.status).to.equal(200);
        const claims = jwt.decode(response.body.token) as jwt.JwtPayload;
        expect(claims.auth_time).to.equal(authTime);
        expect(claims.exp).to.equal(authTime + SESSION_MAX);
        expect(response.body.expires_in).to.equal((claims.exp as number) - (claims.iat as number));
        expect(response.body.expires_in).to.be.within(100, 121);
      });
    });

    it('keeps a user-wide revocation for the longest token lifetime, not the current TTL', async () => {
      const gus = await identity.register('gus');
      const token = await identity.login('gus');
      const changed = await identity.request('PUT', `/user/${gus.id}`, {
        token,
        body: { password: 'correct horse battery', current_password: 'correct horse battery' },
      });
      expect(changed.status).to.equal(200);
      const response = await identity.request<{
        data: { user_id?: string; issued_before?: number; expires_at: number }[];
      }>('GET', '/internal/revocations', { headers: serviceAuthorization(DEVELOPMENT_SERVICE_TOKEN) });
      const revocation = response.body.data.find((r) => r.user_id === gus.id);
      // A token issued under TOKEN_TTL_SECONDS=86400 (its maximum) before a change to 900 is still covered.
      expect(revocation?.expires_at).to.equal((revocation?.issued_before as number) + 86_400);
    });

    it('refuses to refresh without a valid token', async () => {
      const response = await identity.request('POST', '/auth/refresh', { token: 'not-a-token' });
      expect(response.status).to.equal(401);
    });
  });

  describe('failed-login limit', () => {
    it('answers the 11th wrong password from one address with 429 and Retry-After, even the right one from there', async () => {
      await identity.register('grace');
      const attempt = (name: Record<string, string>, password: string, address: string) =>
        identity.request('POST', '/auth/login', {
          body: { ...name, password },
          headers: { 'x-forwarded-for': address },
        });
      const byName = { username: 'grace' };
      for (let i = 0; i < 10; i++)
        expect((await attempt(byName, 'wrong password', '198.51.100.11')).status).to.equal(401);
      const eleventh = await attempt(byName, 'wrong password', '198.51.100.11');
      expect(eleventh.status).to.equal(429);
      expect(eleventh.body.code).to.equal('RATE_LIMIT_EXCEEDED');
      const retryAfter = Number(eleventh.headers.get('retry-after'));
      expect(retryAfter).to.be.within(1, 900);
      // The e-mail names the same account.
      const byEmail = { email: 'grace@example.com' };
      expect((await attempt(byEmail, 'correct horse battery', '198.51.100.11')).status).to.equal(429);
      // Her own address is not the guesser's: she logs in.
      expect((await attempt(byEmail, 'correct horse battery', '198.51.100.12')).status).to.equal(200);
    });
  });
});

describe('identity: failed-login limit with a configured limit', function () {
  this.timeout(60_000);

  const identity = useIdentityHarness({
    LOGIN_MAX_FAILURES: '3',
    LOGIN_MAX_FAILURES_PER_ADDRESS: '5',
    LOGIN_WINDOW_SECONDS: '2',
  });
  before(async () => {
    await identity.register('heidi');
  });

  const attempt = (identityName: string, password: string, forwardedFor: string) =>
    identity.request('POST', '/auth/login', {
      body: { identity: identityName, password },
      headers: { 'x-forwarded-for': forwardedFor },
    });

  it('starts the count over for the account from that address after a successful login', async () => {
    for (let i = 0; i < 2; i++)
      expect((await attempt('heidi', 'wrong password', '192.0.2.1')).status).to.equal(401);
    expect((await attempt('heidi', 'correct horse battery', '192.0.2.1')).status).to.equal(200);
    // Three more failures are checked: without the start over, the second would be the limit's fourth.
    for (let i = 0; i < 3; i++)
      expect((await attempt('heidi', 'wrong password', '192.0.2.1')).status).to.equal(401);
  });

  it('limits one address across identities, and a forged first X-Forwarded-For hop does not escape it', async () => {
    const statuses = [];
    for (let i = 0; i < 6; i++) {
      const response = await attempt(`stranger-${i}`, 'wrong password', `10.0.0.${i}, 192.0.2.50`);
      statuses.push(response.status);
    }
    expect(statuses).to.deep.equal([401, 401, 401, 401, 401, 429]);
  });

  it('lets the user in again once the window has passed', async () => {
    for (let i = 0; i < 3; i++) await attempt('heidi@example.com', 'wrong password', '192.0.2.60');
    expect((await attempt('heidi', 'correct horse battery', '192.0.2.60')).status).to.equal(429);
    await new Promise((resolve) => setTimeout(resolve, 2100));
    expect((await attempt('heidi', 'correct horse battery', '192.0.2.60')).status).to.equal(200);
  });
});
