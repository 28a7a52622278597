import { expect } from 'chai';
import jwt from 'jsonwebtoken';
import type { EventData } from '@payments/contracts';
import {
  createRevocationList,
  DEVELOPMENT_SERVICE_TOKEN,
  serviceAuthorization,
  type AuthClaims,
} from '@payments/service-kit';
import { PASSWORD, startIdentityHarnessWithAdmin, type IdentityHarness } from './identity-harness.js';

const OTHER_PASSWORD = 'another horse battery';

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function claimsOf(token: string): AuthClaims {
  const payload = jwt.decode(token) as jwt.JwtPayload;
  return {
    userId: payload.sub as string,
    role: payload.role as AuthClaims['role'],
    jti: payload.jti as string,
    issuedAt: payload.iat as number,
    expiresAt: payload.exp as number,
    authTime: payload.auth_time as number,
  };
}

function versionOf(etag: string | null): number {
  return Number(/^"v(\d+)"$/.exec(etag ?? '')?.[1] ?? Number.NaN);
}

describe('identity: refreshes, logins and changes racing each other', function () {
  this.timeout(180_000);
  let identity: IdentityHarness;
  let adminToken: string;

  before(async () => {
    ({ identity, adminToken } = await startIdentityHarnessWithAdmin('race-admin'));
  });
  after(async () => {
    await identity?.stop();
  });

  /** Judged as identity judges it, and as a verifier that loaded the stored revocations judges it (the gateway). */
  const refusedEverywhere = async (userId: string, token: string) => {
    const here = await identity.request('GET', `/user/${userId}`, { token });
    const stored = await identity.request<{ data: EventData<'TokenRevoked'>[] }>(
      'GET',
      '/internal/revocations',
      { headers: serviceAuthorization(DEVELOPMENT_SERVICE_TOKEN) },
    );
    const elsewhere = createRevocationList();
    for (const revocation of stored.body.data) elsewhere.add(revocation);
    return { identity: here.status === 401, verifiers: elsewhere.isRevoked(claimsOf(token)) };
  };

  it('refuses, after a password change, every token of another session, including one refreshed while it was made', async () => {
    const user = await identity.register('racing_refresh');
    const change = (token: string, from: string, to: string) =>
      identity.request('PUT', `/user/${user.id}`, {
        token,
        body: { password: to, current_password: from },
      });
    // How long a password change takes here, so the refreshes below land all along it.
    let password = PASSWORD;
    const timing = await identity.login(user.username, password);
    const started = Date.now();
    expect((await change(timing, password, OTHER_PASSWORD)).status).to.equal(200);
    password = OTHER_PASSWORD;
    const span = (Date.now() - started) * 1.5;

    const rounds = 60;
    const escaped: string[] = [];
    let refreshed = 0;
    for (let round = 0; round < rounds; round++) {
      const changer = await identity.login(user.username, password);
      const other = await identity.login(user.username, password);
      const next = password === PASSWORD ? OTHER_PASSWORD : PASSWORD;
      const delay = (span * round) / rounds;
      const [changed, refresh] = await Promise.all([
        change(changer, password, next),
        pause(delay).then(() =>
          identity.request<{ token?: string }>('POST', '/auth/refresh', { token: other }),
        ),
      ]);
      expect(changed.status, JSON.stringify(changed.body)).to.equal(200);
      password = next;
      const tokens = {
        old: other,
        ...(refresh.status === 200 && { refreshed: refresh.body.token as string }),
      };
      if (refresh.status === 200) refreshed += 1;
      else expect(refresh.status).to.equal(401);
      for (const [which, token] of Object.entries(tokens)) {
        const refused = await refusedEverywhere(user.id, token);
        if (!refused.identity || !refused.verifiers) {
          escaped.push(
            `round ${round} (+${Math.round(delay)} ms): the ${which} token ${JSON.stringify(refused)}`,
          );
        }
      }
      // The session that changed the password carries on.
      expect((await identity.request('GET', `/user/${user.id}`, { token: changer })).status).to.equal(200);
    }
    expect(escaped).to.deep.equal([]);
    // Some refreshes must win the race, or no refreshed token was put to the test.
    expect(refreshed).to.be.greaterThan(0);
  });

  it('refuses, after a password change, a token from a login with the old password that raced it', async () => {
    const user = await identity.register('racing_login');
    let password = PASSWORD;
    const rounds = 40;
    const escaped: string[] = [];
    for (let round = 0; round < rounds; round++) {
      const changer = await identity.login(user.username, password);
      const next = password === PASSWORD ? OTHER_PASSWORD : PASSWORD;
      const [changed, login] = await Promise.all([
        identity.request('PUT', `/user/${user.id}`, {
          token: changer,
          body: { password: next, current_password: password },
        }),
        pause(round % 20).then(() =>
          identity.request<{ token?: string }>('POST', '/auth/login', {
            body: { identity: user.username, password },
            headers: { 'x-forwarded-for': `198.51.100.${round}` },
          }),
        ),
      ]);
      expect(changed.status, JSON.stringify(changed.body)).to.equal(200);
      password = next;
      if (login.status === 200) {
        const refused = await refusedEverywhere(user.id, login.body.token as string);
        if (!refused.identity || !refused.verifiers)
          escaped.push(`round ${round}: ${JSON.stringify(refused)}`);
      } else {
        expect(login.status).to.equal(401);
      }
    }
    expect(escaped).to.deep.equal([]);
  });

  it('lands one of two password changes that race with the same current password, and refuses the other', async () => {
    const user = await identity.register('racing_changes');
    let password = PASSWORD;
    const rounds = 20;
    for (let round = 0; round < rounds; round++) {
      const [first, second] = [
        await identity.login(user.username, password),
        await identity.login(user.username, password),
      ];
      const candidates = [`first password ${round}`, `second password ${round}`];
      const answers = await Promise.all(
        [first, second].map((token, i) =>
          identity.request('PUT', `/user/${user.id}`, {
            token,
            body: { password: candidates[i], current_password: password },
          }),
        ),
      );
      const statuses = answers.map((answer) => answer.status);
      expect(
        statuses.filter((status) => status === 200),
        statuses.join('/'),
      ).to.have.length(1);
      expect([403, 409]).to.include(statuses.find((status) => status !== 200));
      password = candidates[statuses.indexOf(200)] as string;
      // The password that landed is the user's; the refused one is not.
      await identity.login(user.username, password);
    }
  });

  it("never lands a user's change after an administrator's disable that raced it", async () => {
    const user = await identity.register('racing_update');
    let password = PASSWORD;
    const rounds = 40;
    const landedAfter: string[] = [];
    for (let round = 0; round < rounds; round++) {
      const token = await identity.login(user.username, password);
      const withPassword = round % 2 === 1;
      const next = password === PASSWORD ? OTHER_PASSWORD : PASSWORD;
      const body = withPassword
        ? { username: `racing_update_${round}`, password: next, current_password: password }
        : { username: `racing_update_${round}` };
      const [update, disable] = await Promise.all([
        identity.request('PUT', `/user/${user.id}`, { token, body }),
        pause(round % 10).then(() =>
          identity.request('PATCH', `/admin/users/${user.id}/status`, {
            token: adminToken,
            body: { status: 'disabled' },
          }),
        ),
      ]);
      expect(disable.status).to.equal(200);
      if (update.status === 200) {
        if (withPassword) password = next;
        if (versionOf(update.headers.get('etag')) > versionOf(disable.headers.get('etag'))) {
          landedAfter.push(
            `round ${round}: ${update.headers.get('etag')} after ${disable.headers.get('etag')}`,
          );
        }
      } else {
        expect([401, 403], JSON.stringify(update.body)).to.include(update.status);
      }
      const stored = await identity.request('GET', `/user/${user.id}`, { token: adminToken });
      expect(stored.body.status).to.equal('disabled');
      if (update.status !== 200) expect(stored.body.username).not.to.equal(`racing_update_${round}`);
      const enabled = await identity.request('PATCH', `/admin/users/${user.id}/status`, {
        token: adminToken,
        body: { status: 'active' },
      });
      expect(enabled.status).to.equal(200);
      user.username = enabled.body.username as string;
    }
    expect(landedAfter).to.deep.equal([]);
  });
});
