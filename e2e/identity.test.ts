import {
  createHmac,
  createPublicKey,
  randomBytes,
  randomUUID,
  type JsonWebKey,
  type KeyObject,
} from 'node:crypto';
import { expect } from 'chai';
import jwt from 'jsonwebtoken';
import { generateTokenKeyPair } from '@payments/service-kit';
import { eventually, useSystem } from '@payments/testkit';
import { createPaymentsClient } from '@payments/client';
import {
  confirmPayment,
  depositConfirmed,
  rawApi,
  signUp,
  type ApiResponse,
  type TestUser,
} from '@payments/test-support';

const ISSUER = 'payments-identity';
const AUDIENCE = 'payments-api';
/** Where the attacks below come from, as the load balancer (the test, a trusted proxy) tells the gateway. */
const ATTACKER = { 'x-forwarded-for': '198.51.100.40' };
const ADMIN = { username: 'root_admin', email: 'root@example.com', password: `admin-${randomUUID()}` };

type User = TestUser;

const base64url = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');

/** A token with any header and claims, signed (or not) by `sign` over `header.payload`. */
function handMadeToken(header: object, claims: object, sign: (input: string) => string): string {
  const input = `${base64url(header)}.${base64url(claims)}`;
  return `${input}.${sign(input)}`;
}

function expectAuthRequired(response: ApiResponse) {
  expect(response.status, response.text).to.equal(401);
  expect(response.headers.get('content-type')).to.match(/^application\/problem\+json/);
  expect(response.body).to.include({ status: 401, code: 'AUTH_REQUIRED' });
}

function expectAccessDenied(response: ApiResponse, ...secrets: string[]) {
  expect(response.status, response.text).to.equal(403);
  expect(response.body).to.include({ status: 403, code: 'ACCESS_DENIED' });
  for (const secret of secrets) expect(response.text).not.to.include(secret);
}

describe('identity and access end to end, through the gateway', function () {
  this.timeout(120_000);
  // Identity signs with this key, so the test can sign tokens that are valid in every respect but one.
  const signingKey = generateTokenKeyPair().privateKey;
  let kid: string;

  const system = useSystem(
    {
      serviceEnv: {
        'provider-sandbox': { SANDBOX_ENABLED: 'false' },
        // The test stands in for a load balancer: attacks below come "from" addresses of their own, so
        // their failed logins do not spend 127.0.0.1's allowance that the brute-force test counts on.
        gateway: { TRUSTED_PROXIES: 'loopback' },
        'webhook-ingest': { UNSIGNED_WEBHOOK_ENABLED: 'true' },
        identity: {
          JWT_PRIVATE_KEY: signingKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
        },
      },
    },
    { admin: ADMIN },
  );
  const api = rawApi(system);

  before(async () => {
    const jwks = await api.get('/.well-known/jwks.json');
    expect(jwks.status, jwks.text).to.equal(200);
    kid = (jwks.body.keys as { kid: string }[])[0]?.kid as string;
  });

  const logIn = async ({ username, password }: { username: string; password: string }) =>
    (await createPaymentsClient({ baseUrl: system.gatewayUrl }).auth.login({ username, password })).token;

  const openAccount = async (user: User, currency = 'USD') =>
    (await user.client.accounts.open({ currency })).id;

  describe('tokens the gateway refuses', () => {
    let victim: User;
    const now = () => Math.floor(Date.now() / 1000);
    const claimsFor = (overrides: Record<string, unknown> = {}) => ({
      sub: victim.userId,
      role: 'admin',
      jti: randomUUID(),
      iat: now() - 10,
      exp: now() + 600,
      iss: ISSUER,
      aud: AUDIENCE,
      ...overrides,
    });
    const signedBy = (key: KeyObject, claims: object, keyid = kid) =>
      jwt.sign(claims, key, { algorithm: 'ES256', keyid });
    const protectedRead = (token: string) => api.get(`/user/${victim.userId}`, token);
    /** Refused by the gateway, and by the ledger reached directly: services do not trust the gateway's check. */
    const expectRefused = async (token: string) => {
      expectAuthRequired(await protectedRead(token));
      expectAuthRequired(await api.get('/accounts', token));
      expectAuthRequired(await rawApi(system.urls.ledger).get('/accounts', token));
    };

    before(async () => {
      victim = await signUp(system.gatewayUrl);
    });

    it('accepts a token signed by the identity key with the right claims (the control for the forgeries below)', async () => {
      const token = signedBy(signingKey, claimsFor({ role: 'user' }));
      const response = await protectedRead(token);
      expect(response.status, response.text).to.equal(200);
      expect(response.body).to.include({ id: victim.userId });
      expect((await rawApi(system.urls.ledger).get('/accounts', token)).status).to.equal(200);
    });

    it('refuses a token with alg none', async () => {
      const token = handMadeToken({ alg: 'none', typ: 'JWT', kid }, claimsFor(), () => '');
      await expectRefused(token);
    });

    it('refuses an HS256 token whose HMAC secret is the published public key', async () => {
      const jwks = await api.get('/.well-known/jwks.json');
      const jwk = (jwks.body.keys as (JsonWebKey & { kid: string })[]).find((key) => key.kid === kid);
      const publicPem = createPublicKey({ key: jwk as JsonWebKey, format: 'jwk' })
        .export({ type: 'spki', format: 'pem' })
        .toString();
      const token = handMadeToken({ alg: 'HS256', typ: 'JWT', kid }, claimsFor(), (input) =>
        createHmac('sha256', publicPem).update(input).digest('base64url'),
      );
      await expectRefused(token);
    });

    it('refuses a token for another audience', async () => {
      await expectRefused(signedBy(signingKey, claimsFor({ aud: 'another-api' })));
    });

    it('refuses a token from another issuer', async () => {
      await expectRefused(signedBy(signingKey, claimsFor({ iss: 'someone-else' })));
    });

    it('refuses an expired token', async () => {
      const expired = claimsFor({ iat: now() - 1200, exp: now() - 60 });
      await expectRefused(signedBy(signingKey, expired));
    });

    it('refuses a token signed by a key identity never published', async () => {
      const stranger = generateTokenKeyPair().privateKey;
      await expectRefused(signedBy(stranger, claimsFor(), 'not-a-known-kid'));
      await expectRefused(signedBy(stranger, claimsFor()));
    });

    it('refuses a token whose jti was revoked by logging out', async () => {
      const token = await logIn(victim);
      expect((await protectedRead(token)).status).to.equal(200);
      const logout = await api.post('/auth/logout', undefined, token);
      expect(logout.status, logout.text).to.equal(204);
      expectAuthRequired(await protectedRead(token));
    });
  });

  describe('one user against another', () => {
    let alice: User;
    let bob: User;
    let aliceAccount: string;
    let bobAccount: string;
    let bobDeposit: string;
    let bobPending: string;

    const bobsState = async () => ({
      user: await bob.client.users.get(bob.userId),
      account: await bob.client.accounts.get(bobAccount),
      history: await bob.client.transactions.historyPage(bobAccount),
    });

    before(async () => {
      [alice, bob] = await Promise.all([signUp(system.gatewayUrl), signUp(system.gatewayUrl)]);
      [aliceAccount, bobAccount] = await Promise.all([openAccount(alice), openAccount(bob)]);
      bobDeposit = (await depositConfirmed(bob.client, bobAccount, 40, 'USD')).id;
      const pending = await bob.client.money.deposit(bobAccount, { amount: 5, currency: 'USD' });
      expect(pending.status).to.equal('pending');
      bobPending = pending.id;
    });

    it("refuses to show A the user record of B, without any of B's data", async () => {
      expectAccessDenied(await api.get(`/user/${bob.userId}`, alice.token), bob.username);
    });

    it("refuses A changing or deleting B's user record, and B's record is unchanged", async () => {
      const before = await api.get(`/user/${bob.userId}`, bob.token);
      expectAccessDenied(await api.put(`/user/${bob.userId}`, { email: 'taken@example.com' }, alice.token));
      expectAccessDenied(
        await api.put(`/user/${bob.userId}`, { password: 'hijacked-password' }, alice.token),
      );
      expectAccessDenied(await api.delete(`/user/${bob.userId}?confirm=true`, alice.token));
      const after = await api.get(`/user/${bob.userId}`, bob.token);
      expect(after.status).to.equal(200);
      expect(after.body).to.deep.equal(before.body);
      expect(after.headers.get('etag')).to.equal(before.headers.get('etag'));
      // The old password still works: the refused change changed nothing.
      await logIn(bob);
    });

    it("refuses A reading B's account, balance and history", async () => {
      for (const path of [
        `/account/${bobAccount}`,
        `/account/${bobAccount}/balance`,
        `/account/${bobAccount}/transactions`,
        `/transactions?account_id=${bobAccount}`,
      ]) {
        expectAccessDenied(await api.get(path, alice.token), bob.userId);
      }
      const aliceAccounts = await alice.client.accounts.listPage();
      expect(aliceAccounts.data.map((a) => a.id)).to.deep.equal([aliceAccount]);
    });

    it("refuses A moving money on B's account, and B's balance and history are unchanged", async () => {
      const before = await bobsState();
      expect(before.account.balance).to.equal(40);
      expectAccessDenied(
        await api.post(`/account/${bobAccount}/deposit`, { amount: 1, currency: 'USD' }, alice.token),
      );
      expectAccessDenied(
        await api.post(`/account/${bobAccount}/withdraw`, { amount: 1, currency: 'USD' }, alice.token),
      );
      expectAccessDenied(
        await api.post(
          `/account/${bobAccount}/transfer`,
          { to_account_id: aliceAccount, amount: 10, currency: 'USD' },
          alice.token,
        ),
      );
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(await bobsState()).to.deep.equal(before);
      expect((await alice.client.balances.get(aliceAccount)).balance).to.equal(0);
    });

    it("refuses A reading B's transactions, completed or pending, and lists none of them to A", async () => {
      for (const id of [bobDeposit, bobPending]) {
        expectAccessDenied(await api.get(`/transaction/${id}`, alice.token), bobAccount);
      }
      const aliceHistory = await api.get('/transactions', alice.token);
      expect(aliceHistory.status).to.equal(200);
      expect(aliceHistory.body.data).to.deep.equal([]);
    });
  });

  describe('registration', () => {
    it('creates exactly one user when 20 identical registrations race', async () => {
      const username = `race_${randomBytes(4).toString('hex')}`;
      const registration = { username, email: `${username}@example.com`, password: 'race-password-1' };
      const answers = await Promise.all(Array.from({ length: 20 }, () => api.post('/user', registration)));
      const statuses = answers.map((answer) => answer.status);
      expect(statuses.filter((status) => status === 201)).to.have.length(1);
      expect(statuses.filter((status) => status === 409)).to.have.length(19);
      for (const answer of answers.filter((a) => a.status === 409)) {
        expect(answer.body).to.include({ code: 'DUPLICATE_ENTRY' });
      }
      await logIn(registration);
    });
  });

  describe('logging out', () => {
    it('refuses a logged-out token at the gateway and at the ledger reached directly', async () => {
      const user = await signUp(system.gatewayUrl);
      const ledger = rawApi(system.urls.ledger);
      expect((await api.get('/accounts', user.token)).status).to.equal(200);
      expect((await ledger.get('/accounts', user.token)).status).to.equal(200);

      const logout = await api.post('/auth/logout', undefined, user.token);
      expect(logout.status, logout.text).to.equal(204);

      expectAuthRequired(await api.get('/accounts', user.token));
      expectAuthRequired(await api.get(`/user/${user.userId}`, user.token));
      expectAuthRequired(await api.post('/auth/refresh', undefined, user.token));
      // The revocation reaches the ledger as a TokenRevoked event, so it may take a moment.
      expectAuthRequired(
        await eventually(
          () => ledger.get('/accounts', user.token),
          (response) => response.status === 401,
        ),
      );
      // Only that token: a new login works again.
      expect((await api.get('/accounts', await logIn(user))).status).to.equal(200);
    });

    it('keeps refusing a logged-out token at a ledger restarted after the logout', async () => {
      const user = await signUp(system.gatewayUrl);
      const ledger = rawApi(system.urls.ledger);
      expect((await api.post('/auth/logout', undefined, user.token)).status).to.equal(204);
      await system.restart('ledger');
      expectAuthRequired(await ledger.get('/accounts', user.token));
      expectAuthRequired(await api.get('/accounts', user.token));
      expect((await ledger.get('/accounts', await logIn(user))).status).to.equal(200);
    });
  });

  describe('changing the password', () => {
    it('logs out every other session everywhere, and keeps the one that changed it', async () => {
      const user = await signUp(system.gatewayUrl);
      const otherSession = await logIn(user);
      const ledger = rawApi(system.urls.ledger);
      const changed = await api.put(
        `/user/${user.userId}`,
        { password: 'an entirely new password', current_password: user.password },
        user.token,
      );
      expect(changed.status, changed.text).to.equal(200);

      // Other processes learn of it through the TokenRevoked event.
      expectAuthRequired(
        await eventually(
          () => api.get('/accounts', otherSession),
          (response) => response.status === 401,
        ),
      );
      expectAuthRequired(
        await eventually(
          () => ledger.get('/accounts', otherSession),
          (response) => response.status === 401,
        ),
      );
      expect((await api.get('/accounts', user.token)).status).to.equal(200);
      expect((await ledger.get('/accounts', user.token)).status).to.equal(200);
      expect((await api.get(`/user/${user.userId}`, user.token)).status).to.equal(200);
    });
  });

  describe('a stolen token', () => {
    const now = () => Math.floor(Date.now() / 1000);
    const SESSION_MAX_SECONDS = 43_200;
    /** A token identity could have issued for `user`, with the session claims the test chooses. */
    const sessionToken = (user: User, claims: Record<string, unknown>) =>
      jwt.sign(
        { sub: user.userId, role: 'user', jti: randomUUID(), iat: now() - 30, exp: now() + 600, ...claims },
        signingKey,
        { algorithm: 'ES256', keyid: kid, issuer: ISSUER, audience: AUDIENCE },
      );

    it('cannot take the account over: no e-mail or password change without the current password', async () => {
      const owner = await signUp(system.gatewayUrl);
      const ownersOtherSession = await logIn(owner);
      const stolen = owner.token;
      const before = await api.get(`/user/${owner.userId}`, ownersOtherSession);

      const noPassword = await api.put(
        `/user/${owner.userId}`,
        { email: 'attacker@example.com', password: 'attacker-password' },
        stolen,
      );
      expect(noPassword.status, noPassword.text).to.equal(422);
      expect(noPassword.body.errors).to.deep.equal([
        { field: 'current_password', message: 'is required to change the e-mail or the password' },
      ]);
      const wrongPassword = await api.put(
        `/user/${owner.userId}`,
        { password: 'attacker-password', current_password: 'a guess' },
        stolen,
        ATTACKER,
      );
      expectAccessDenied(wrongPassword);

      // The owner is still logged in everywhere, keeps their e-mail and password, and the record is unchanged.
      expect((await api.get('/accounts', ownersOtherSession)).status).to.equal(200);
      const after = await api.get(`/user/${owner.userId}`, ownersOtherSession);
      expect(after.body).to.deep.equal(before.body);
      await logIn(owner);
      expect(
        (
          await api.post(
            '/auth/login',
            { username: owner.username, password: 'attacker-password' },
            undefined,
            ATTACKER,
          )
        ).status,
      ).to.equal(401);
    });

    it('cannot be refreshed past SESSION_MAX_SECONDS after its login', async () => {
      const owner = await signUp(system.gatewayUrl);
      const expired = sessionToken(owner, { auth_time: now() - SESSION_MAX_SECONDS - 5 });
      expect((await api.get('/accounts', expired)).status).to.equal(200);
      expectAuthRequired(await api.post('/auth/refresh', undefined, expired));
      const withoutAuthTime = sessionToken(owner, { iat: now() - SESSION_MAX_SECONDS - 5 });
      expectAuthRequired(await api.post('/auth/refresh', undefined, withoutAuthTime));

      const authTime = now() - SESSION_MAX_SECONDS + 90;
      const nearTheEnd = await api.post(
        '/auth/refresh',
        undefined,
        sessionToken(owner, { auth_time: authTime }),
      );
      expect(nearTheEnd.status, nearTheEnd.text).to.equal(200);
      const claims = jwt.decode(nearTheEnd.body.token as string) as jwt.JwtPayload;
      expect(claims.auth_time).to.equal(authTime);
      expect(claims.exp).to.equal(authTime + SESSION_MAX_SECONDS);
      const again = await api.post('/auth/refresh', undefined, nearTheEnd.body.token as string);
      expect((jwt.decode(again.body.token as string) as jwt.JwtPayload).exp).to.equal(
        authTime + SESSION_MAX_SECONDS,
      );
    });

    it('yields exactly one new token when 20 refreshes of it race through the gateway', async () => {
      const owner = await signUp(system.gatewayUrl);
      const answers = await Promise.all(
        Array.from({ length: 20 }, () => api.post('/auth/refresh', undefined, owner.token)),
      );
      const fresh = answers.filter((answer) => answer.status === 200);
      expect(fresh, answers.map((a) => a.status).join(',')).to.have.length(1);
      for (const answer of answers.filter((a) => a.status !== 200)) expectAuthRequired(answer);
      expect((await api.get('/accounts', fresh[0]?.body.token as string)).status).to.equal(200);
      expectAuthRequired(await api.get('/accounts', owner.token));
    });
  });

  describe('a disabled account', () => {
    it('answers a right and a wrong password alike, so it tells nothing about the password', async () => {
      const admin = await logIn(ADMIN);
      const user = await signUp(system.gatewayUrl);
      const disabled = await api.request('PATCH', `/admin/users/${user.userId}/status`, {
        body: { status: 'disabled' },
        token: admin,
      });
      expect(disabled.status, disabled.text).to.equal(200);
      const from = { 'x-forwarded-for': '198.51.100.41' };
      const right = await api.post(
        '/auth/login',
        { username: user.username, password: user.password },
        undefined,
        from,
      );
      const wrong = await api.post(
        '/auth/login',
        { username: user.username, password: 'a wrong guess' },
        undefined,
        from,
      );
      expectAccessDenied(right);
      expect(wrong.status).to.equal(right.status);
      expect(wrong.body).to.deep.equal(right.body);
    });
    it('loses the session its password change spared, at the gateway and the ledger, when disabled right after', async () => {
      // The attack: keep changing the password with a stolen token, so that each change spares that token, and
      // hope a change lands in the same second as the administrator's disable (or commits after it).
      const admin = await logIn(ADMIN);
      const ledger = rawApi(system.urls.ledger);
      for (let round = 0; round < 4; round += 1) {
        const user = await signUp(system.gatewayUrl);
        const changed = await api.put(
          `/user/${user.userId}`,
          { password: `a new password ${round}`, current_password: user.password },
          user.token,
        );
        expect(changed.status, changed.text).to.equal(200);
        const disabled = await api.request('PATCH', `/admin/users/${user.userId}/status`, {
          body: { status: 'disabled' },
          token: admin,
        });
        expect(disabled.status, disabled.text).to.equal(200);
        for (const at of [api, ledger]) {
          expectAuthRequired(
            await eventually(
              () => at.get('/accounts', user.token),
              (response) => response.status === 401,
              { what: `the disabled user's spared token refused (round ${round})` },
            ),
          );
        }
      }
    });
  });

  describe('deleting a user', () => {
    let admin: string;
    let leaver: User;
    let leaverAccount: string;
    let leaverTransactions: string[];
    let bystander: User;
    let bystanderAccount: string;

    before(async () => {
      admin = await logIn(ADMIN);
      [leaver, bystander] = await Promise.all([signUp(system.gatewayUrl), signUp(system.gatewayUrl)]);
      [leaverAccount, bystanderAccount] = await Promise.all([openAccount(leaver), openAccount(bystander)]);
      await depositConfirmed(bystander.client, bystanderAccount, 12.34, 'USD');
    });

    it('asks for confirmation', async () => {
      const response = await api.delete(`/user/${leaver.userId}`, leaver.token);
      expect(response.status, response.text).to.equal(400);
      expect(response.body).to.include({ code: 'VALIDATION_ERROR' });
    });

    it('refuses (422) while the user holds money, and while a withdrawal is pending', async () => {
      const deposit = await depositConfirmed(leaver.client, leaverAccount, 25, 'USD');
      const holding = await api.delete(`/user/${leaver.userId}?confirm=true`, leaver.token);
      expect(holding.status, holding.text).to.equal(422);
      expect(holding.body.detail).to.match(/balance/);

      const withdrawal = await api.post(
        `/account/${leaverAccount}/withdraw`,
        { amount: 25, currency: 'USD' },
        leaver.token,
      );
      expect(withdrawal.status, withdrawal.text).to.equal(202);
      const pending = await api.delete(`/user/${leaver.userId}?confirm=true`, leaver.token);
      expect(pending.status, pending.text).to.equal(422);
      expect(pending.body.detail).to.match(/pending/);

      await confirmPayment(leaver.client, withdrawal.body.id);
      expect((await leaver.client.balances.get(leaverAccount)).balance).to.equal(0);
      expect((await api.get(`/user/${leaver.userId}`, leaver.token)).status).to.equal(200);
      leaverTransactions = [deposit.id, withdrawal.body.id];
    });

    it("removes a user with no money and no pending transaction, with their accounts and transactions, and nobody else's", async () => {
      const bystanderState = async () => ({
        balance: await bystander.client.balances.get(bystanderAccount),
        history: await bystander.client.transactions.listPage(),
        user: await bystander.client.users.get(bystander.userId),
      });
      const bystanderBefore = await bystanderState();
      expect(bystanderBefore.balance.balance).to.equal(12.34);
      for (const id of leaverTransactions)
        expect((await api.get(`/transaction/${id}`, admin)).status).to.equal(200);

      const deleted = await api.delete(`/user/${leaver.userId}?confirm=true`, leaver.token);
      expect(deleted.status, deleted.text).to.equal(204);

      expectAuthRequired(await api.get(`/user/${leaver.userId}`, leaver.token));
      const gone = await api.get(`/user/${leaver.userId}`, admin);
      expect(gone.status, gone.text).to.equal(404);
      expect(gone.body).to.include({ code: 'RESOURCE_NOT_FOUND' });

      const account = await eventually(
        () => api.get(`/account/${leaverAccount}`, admin),
        (response) => response.status === 404,
      );
      expect(account.status, account.text).to.equal(404);
      for (const id of leaverTransactions) {
        const transaction = await api.get(`/transaction/${id}`, admin);
        expect(transaction.status, transaction.text).to.equal(404);
      }

      expect(await bystanderState()).to.deep.equal(bystanderBefore);
    });
  });

  describe('many people behind one address', () => {
    it('lets 50 right logins from one address through at once, and still stops the wrong ones at the limit', async () => {
      // An office behind one NAT address, a carrier's gateway, a platform's backend: only failures count.
      const office = { 'x-forwarded-for': '203.0.113.77' };
      const users = await Promise.all(Array.from({ length: 5 }, () => signUp(system.gatewayUrl)));
      const logins = await Promise.all(
        Array.from({ length: 50 }, (_, i) => {
          const user = users[i % users.length] as (typeof users)[number];
          return api.post(
            '/auth/login',
            { username: user.username, password: user.password },
            undefined,
            office,
          );
        }),
      );
      expect(logins.map((answer) => answer.status)).to.deep.equal(Array.from({ length: 50 }, () => 200));
      // Wrong guesses from there still end at 10 per window, whatever the right logins did.
      const victim = users[0] as (typeof users)[number];
      const guesses = await Promise.all(
        Array.from({ length: 15 }, () =>
          api.post(
            '/auth/login',
            { username: victim.username, password: 'a wrong guess' },
            undefined,
            office,
          ),
        ),
      );
      const statuses = guesses.map((answer) => answer.status).sort();
      expect(statuses.filter((status) => status === 401)).to.have.length(10);
      expect(statuses.filter((status) => status === 429)).to.have.length(5);
    });
  });

  // Last (mocha runs suites in order): its failed logins also count against this client address's failures, which
  // are limited too.
  describe('brute force', () => {
    it('answers the 11th wrong password in a row with 429 and Retry-After', async () => {
      const user = await signUp(system.gatewayUrl);
      const answers: ApiResponse[] = [];
      for (let attempt = 0; attempt < 11; attempt += 1) {
        answers.push(await api.post('/auth/login', { username: user.username, password: 'wrong-password' }));
      }
      for (const answer of answers.slice(0, 10)) {
        expect(answer.status, answer.text).to.equal(401);
        expect(answer.body).to.include({ code: 'INVALID_CREDENTIALS' });
      }
      const refused = answers[10] as ApiResponse;
      expect(refused.status, refused.text).to.equal(429);
      expect(refused.body).to.include({ status: 429, code: 'RATE_LIMIT_EXCEEDED' });
      expect(Number(refused.headers.get('retry-after'))).to.be.within(1, 900);
      // Still locked within the window, even with the right password.
      const right = await api.post('/auth/login', { username: user.username, password: user.password });
      expect(right.status, right.text).to.equal(429);
    });
  });
});
