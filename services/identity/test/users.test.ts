import { createPrivateKey, randomUUID } from 'node:crypto';
import { expect } from 'chai';
import jwt from 'jsonwebtoken';
import type { EventEnvelope } from '@payments/contracts';
import { DEVELOPMENT_SERVICE_TOKEN, serviceAuthorization } from '@payments/service-kit';
import { eventually } from '@payments/testkit';
import { PASSWORD, startIdentityHarnessWithAdmin, type IdentityHarness } from './identity-harness.js';

describe('identity: users, permissions and administration', function () {
  this.timeout(60_000);
  let identity: IdentityHarness;
  let adminToken: string;

  before(async () => {
    ({ identity, adminToken } = await startIdentityHarnessWithAdmin('root-admin'));
  });
  after(async () => {
    await identity?.stop();
  });

  const newUser = async (name: string) => {
    const user = await identity.register(name);
    return { ...user, token: await identity.login(name) };
  };

  /** What identity announced to the trail of admin actions about a user. */
  const adminActionsOn = (userId: string, count: number) =>
    eventually(
      async () =>
        identity.published.flatMap((event) =>
          event.type === 'AdminActionTaken' && event.data.owner === userId ? [event.data] : [],
        ),
      (found) => found.length >= count,
    );
  const adminId = () => (jwt.decode(adminToken) as jwt.JwtPayload).sub as string;

  describe('GET /user/{id}', () => {
    it('shows a user their own record with an ETag and no password', async () => {
      const ivan = await newUser('ivan');
      const response = await identity.request('GET', `/user/${ivan.id}`, { token: ivan.token });
      expect(response.status).to.equal(200);
      expect(response.body).to.include({ id: ivan.id, username: 'ivan', email: 'ivan@example.com' });
      expect(response.body).not.to.have.any.keys('password', 'password_hash');
      expect(response.headers.get('etag')).to.equal('"v1"');
    });

    it("answers 403 ACCESS_DENIED for another user's record, without its data", async () => {
      const [judy, mallory] = [await newUser('judy'), await newUser('mallory')];
      const response = await identity.request('GET', `/user/${judy.id}`, { token: mallory.token });
      expect(response.status).to.equal(403);
      expect(response.body.code).to.equal('ACCESS_DENIED');
      expect(JSON.stringify(response.body)).not.to.include('judy');
    });

    it('lets the configured administrator read any user', async () => {
      const ken = await identity.register('ken');
      const response = await identity.request('GET', `/user/${ken.id}`, { token: adminToken });
      expect(response.status).to.equal(200);
      expect(response.body.username).to.equal('ken');
      const claims = jwt.decode(adminToken) as jwt.JwtPayload;
      expect(claims.role).to.equal('admin');
    });

    it('answers 404 for an id that is not a UUID and for an unknown one', async () => {
      const notUuid = await identity.request('GET', '/user/not-a-uuid', { token: adminToken });
      const unknown = await identity.request('GET', `/user/${randomUUID()}`, { token: adminToken });
      expect([notUuid.status, unknown.status]).to.deep.equal([404, 404]);
      expect(unknown.body.code).to.equal('RESOURCE_NOT_FOUND');
    });

    it('answers 401 AUTH_REQUIRED without a token', async () => {
      const response = await identity.request('GET', `/user/${randomUUID()}`);
      expect(response.status).to.equal(401);
      expect(response.body.code).to.equal('AUTH_REQUIRED');
    });
  });

  describe('PUT /user/{id}', () => {
    it('changes only the fields given, stores the e-mail in lower case and moves the ETag', async () => {
      const leo = await newUser('leo');
      const response = await identity.request('PUT', `/user/${leo.id}`, {
        token: leo.token,
        body: { email: 'Leo.New@Example.com', current_password: PASSWORD },
      });
      expect(response.status).to.equal(200);
      expect(response.body).to.include({ username: 'leo', email: 'leo.new@example.com' });
      expect(response.headers.get('etag')).to.equal('"v2"');
    });

    it('answers 409 for a stale If-Match and applies a current one', async () => {
      const mia = await newUser('mia');
      const read = await identity.request('GET', `/user/${mia.id}`, { token: mia.token });
      const etag = read.headers.get('etag') as string;
      const first = await identity.request('PUT', `/user/${mia.id}`, {
        token: mia.token,
        body: { username: 'mia2' },
        headers: { 'if-match': etag },
      });
      expect(first.status).to.equal(200);
      const stale = await identity.request('PUT', `/user/${mia.id}`, {
        token: mia.token,
        body: { username: 'mia3' },
        headers: { 'if-match': etag },
      });
      expect(stale.status).to.equal(409);
      const after = await identity.request('GET', `/user/${mia.id}`, { token: mia.token });
      expect(after.body.username).to.equal('mia2');
    });

    let nicks = 0;
    for (const [what, body] of [
      ['a read-only field', { role: 'admin' }],
      ['an unknown field', { nickname: 'x' }],
      ['an empty body', {}],
      ['an invalid e-mail', { email: 'nope' }],
    ] as const) {
      it(`answers 400 VALIDATION_ERROR for ${what}`, async () => {
        const nick = await newUser(`nick${++nicks}`);
        const response = await identity.request('PUT', `/user/${nick.id}`, { token: nick.token, body });
        expect(response.status).to.equal(400);
        expect(response.body.code).to.equal('VALIDATION_ERROR');
      });
    }

    it('answers 409 DUPLICATE_ENTRY when the new username is taken', async () => {
      await identity.register('olga');
      const oscar = await newUser('oscar');
      const response = await identity.request('PUT', `/user/${oscar.id}`, {
        token: oscar.token,
        body: { username: 'Olga' },
      });
      expect(response.status).to.equal(409);
      expect(response.body.code).to.equal('DUPLICATE_ENTRY');
    });

    it("answers 403 for another user's record and changes nothing", async () => {
      const [peggy, mallory] = [await newUser('peggy'), await newUser('mallory2')];
      const response = await identity.request('PUT', `/user/${peggy.id}`, {
        token: mallory.token,
        body: { email: 'stolen@example.com' },
      });
      expect(response.status).to.equal(403);
      const after = await identity.request('GET', `/user/${peggy.id}`, { token: peggy.token });
      expect(after.body.email).to.equal('peggy@example.com');
    });

    it("revokes the user's other tokens when the password changes, keeping the session that changed it", async () => {
      const quinn = await newUser('quinn');
      const otherSession = await identity.login('quinn', PASSWORD, '203.0.113.9');
      const response = await identity.request('PUT', `/user/${quinn.id}`, {
        token: quinn.token,
        body: { password: 'a brand new password', current_password: PASSWORD },
      });
      expect(response.status).to.equal(200);
      const old = await identity.request('GET', `/user/${quinn.id}`, { token: otherSession });
      expect(old.status).to.equal(401);
      const same = await identity.request('GET', `/user/${quinn.id}`, { token: quinn.token });
      expect(same.status).to.equal(200);
      const oldPassword = await identity.request('POST', '/login', {
        body: { identity: 'quinn', password: PASSWORD },
      });
      expect(oldPassword.status).to.equal(401);
      const fresh = await identity.login('quinn', 'a brand new password');
      expect((await identity.request('GET', `/user/${quinn.id}`, { token: fresh })).status).to.equal(200);
    });
  });

  describe('PUT /user/{id} with a stolen token (the current password is required)', () => {
    const readUser = (user: { id: string; token: string }) =>
      identity.request('GET', `/user/${user.id}`, { token: user.token });

    it('refuses an e-mail or password change without current_password: 422 naming the field, nothing changed', async () => {
      const victim = await newUser('stolen1');
      const before = await readUser(victim);
      for (const body of [{ email: 'attacker@example.com' }, { password: 'attacker password' }]) {
        const response = await identity.request<{ code: string; errors: { field: string }[] }>(
          'PUT',
          `/user/${victim.id}`,
          { token: victim.token, body },
        );
        expect(response.status).to.equal(422);
        expect(response.body.code).to.equal('BUSINESS_RULE_VIOLATION');
        expect(response.body.errors.map((e) => e.field)).to.deep.equal(['current_password']);
      }
      const after = await readUser(victim);
      expect(after.body).to.deep.equal(before.body);
      expect(after.headers.get('etag')).to.equal(before.headers.get('etag'));
      await identity.login('stolen1');
      const revoked = identity.published.filter(
        (e) => e.type === 'TokenRevoked' && e.data.user_id === victim.id,
      );
      expect(revoked).to.have.length(0);
    });

    it('refuses a wrong current_password with 403 ACCESS_DENIED and counts it as a failed login', async () => {
      const victim = await newUser('stolen2');
      const change = (currentPassword: string) =>
        identity.request('PUT', `/user/${victim.id}`, {
          token: victim.token,
          body: { password: 'attacker password', current_password: currentPassword },
          headers: { 'x-forwarded-for': '198.51.100.77' },
        });
      const statuses: number[] = [];
      for (let guess = 0; guess < 11; guess++) statuses.push((await change(`guess number ${guess}`)).status);
      expect(statuses.slice(0, 10)).to.deep.equal(Array(10).fill(403));
      // The token holder cannot keep guessing: the 11th is limited like an 11th failed login...
      expect(statuses[10]).to.equal(429);
      // ...and so is a login with the right password from the token holder's address, for the window; the owner
      // logs in from their own.
      const login = (address: string) =>
        identity.request('POST', '/auth/login', {
          body: { username: 'stolen2', password: PASSWORD },
          headers: { 'x-forwarded-for': address },
        });
      expect((await login('198.51.100.77')).status).to.equal(429);
      expect((await login('198.51.100.78')).status).to.equal(200);
      const after = await readUser(victim);
      expect(after.headers.get('etag')).to.equal('"v1"');
    });

    it('changes the username without the current password, and both with it', async () => {
      const owner = await newUser('stolen3');
      const renamed = await identity.request('PUT', `/user/${owner.id}`, {
        token: owner.token,
        body: { username: 'stolen3b' },
      });
      expect(renamed.status).to.equal(200);
      const both = await identity.request('PUT', `/user/${owner.id}`, {
        token: owner.token,
        body: { email: 'stolen3b@example.com', password: 'a new password!', current_password: PASSWORD },
      });
      expect(both.status).to.equal(200);
      expect(both.body).to.include({ username: 'stolen3b', email: 'stolen3b@example.com' });
      await identity.login('stolen3b', 'a new password!');
    });

    it('publishes UserUpdated with the public details after a change, and renders the user internally', async () => {
      const updates: EventEnvelope<'UserUpdated'>[] = [];
      const consumer = await identity.bus.consume('webhook-delivery', {
        UserUpdated: async (event) => {
          updates.push(event);
        },
      });
      try {
        const owner = await newUser('renamed1');
        const renamed = await identity.request('PUT', `/user/${owner.id}`, {
          token: owner.token,
          body: { username: 'renamed1b' },
        });
        expect(renamed.status).to.equal(200);
        const [event] = await eventually(
          async () => updates.filter((e) => e.data.user_id === owner.id),
          (found) => found.length === 1,
        );
        expect(event?.data).to.deep.equal({
          user_id: owner.id,
          username: 'renamed1b',
          email: 'renamed1@example.com',
        });
        const internal = await identity.request('GET', `/internal/users/${owner.id}`, {
          headers: serviceAuthorization(DEVELOPMENT_SERVICE_TOKEN),
        });
        expect(internal.status).to.equal(200);
        expect(internal.body).to.deep.equal(renamed.body);
        expect((await identity.request('GET', `/internal/users/${owner.id}`)).status).to.equal(401);
      } finally {
        await consumer.stop();
      }
    });

    it('answers 400 for a body that holds only current_password', async () => {
      const owner = await newUser('stolen4');
      const response = await identity.request('PUT', `/user/${owner.id}`, {
        token: owner.token,
        body: { current_password: PASSWORD },
      });
      expect(response.status).to.equal(400);
      expect(response.body.code).to.equal('VALIDATION_ERROR');
    });
  });

  describe('DELETE /user/{id}', () => {
    it('answers 400 without a confirmation', async () => {
      const rob = await newUser('rob');
      const response = await identity.request('DELETE', `/user/${rob.id}`, { token: rob.token });
      expect(response.status).to.equal(400);
      expect(response.body.code).to.equal('VALIDATION_ERROR');
    });

    it("answers 422 with the ledger's reason when the ledger refuses to remove the user, and deletes nothing", async () => {
      const sybil = await newUser('sybil');
      identity.ledger.refusals.set(
        sybil.id,
        'The user cannot be deleted while holding a non-zero balance and 2 pending transaction(s)',
      );
      const response = await identity.request<{ code: string; detail: string }>(
        'DELETE',
        `/user/${sybil.id}?confirm=true`,
        { token: sybil.token },
      );
      expect(response.status).to.equal(422);
      expect(response.body.code).to.equal('BUSINESS_RULE_VIOLATION');
      expect(response.body.detail)
        .to.match(/non-zero balance/)
        .and.to.match(/2 pending/);
      expect((await identity.request('GET', `/user/${sybil.id}`, { token: sybil.token })).status).to.equal(
        200,
      );
      expect(identity.ledger.removals).to.include(sybil.id);
    });

    it('answers 503 when the ledger cannot tell, and deletes nothing', async () => {
      const trent = await newUser('trent');
      identity.ledger.refusals.set(trent.id, null);
      const response = await identity.request('DELETE', `/user/${trent.id}`, {
        token: trent.token,
        body: { confirm: true },
      });
      expect(response.status).to.equal(503);
      expect((await identity.request('GET', `/user/${trent.id}`, { token: trent.token })).status).to.equal(
        200,
      );
    });

    it('deletes a confirmed user, revokes their tokens and publishes UserDeleted and TokenRevoked', async () => {
      const uma = await newUser('uma');
      const response = await identity.request('DELETE', `/user/${uma.id}`, {
        token: uma.token,
        body: { confirm: true },
      });
      expect(response.status).to.equal(204);
      expect(identity.ledger.removals).to.include(uma.id);
      expect((await identity.request('GET', `/user/${uma.id}`, { token: adminToken })).status).to.equal(404);
      expect((await identity.request('GET', `/user/${uma.id}`, { token: uma.token })).status).to.equal(401);
      const events = await eventually(
        async () =>
          identity.published.filter(
            (e) =>
              (e.type === 'UserDeleted' && e.data.user_id === uma.id) ||
              (e.type === 'TokenRevoked' && e.data.user_id === uma.id),
          ),
        (found) => found.length >= 2,
      );
      expect(events.map((e) => e.type).sort()).to.deep.equal(['TokenRevoked', 'UserDeleted']);
      const revoked = events.find((e) => e.type === 'TokenRevoked');
      expect(revoked?.data)
        .to.have.property('issued_before')
        .that.is.at.least(Math.floor(Date.now() / 1000) - 5);
      const again = await identity.request('POST', '/user', {
        body: { username: 'uma', email: 'uma@example.com', password: PASSWORD },
      });
      expect(again.status).to.equal(201);
    });

    it("lands an admin's deletion of another user in the trail of admin actions, with the reason; not a user's own", async () => {
      const [vera, wes] = [await newUser('vera'), await newUser('wes')];
      const refused = await identity.request('DELETE', `/user/${vera.id}?confirm=true`, {
        token: adminToken,
        body: { reason: 'x'.repeat(1001) },
      });
      expect(refused.status).to.equal(400);
      const response = await identity.request('DELETE', `/user/${vera.id}`, {
        token: adminToken,
        body: { confirm: true, reason: 'fraud report #1234' },
      });
      expect(response.status).to.equal(204);
      expect(await adminActionsOn(vera.id, 1)).to.deep.equal([
        {
          actor: adminId(),
          action: 'user.delete',
          subject: `user:${vera.id}`,
          owner: vera.id,
          reason: 'fraud report #1234',
          detail: { username: 'vera' },
        },
      ]);
      const own = await identity.request('DELETE', `/user/${wes.id}?confirm=true`, { token: wes.token });
      expect(own.status).to.equal(204);
      await eventually(
        async () => identity.published.filter((e) => e.type === 'UserDeleted' && e.data.user_id === wes.id),
        (found) => found.length === 1,
      );
      const recorded = identity.published.filter(
        (e) => e.type === 'AdminActionTaken' && e.data.owner === wes.id,
      );
      expect(recorded).to.deep.equal([]);
    });

    it("answers 403 for another user's deletion", async () => {
      const [victor, mallory] = [await newUser('victor'), await newUser('mallory3')];
      const response = await identity.request('DELETE', `/user/${victor.id}?confirm=true`, {
        token: mallory.token,
      });
      expect(response.status).to.equal(403);
    });
  });

  describe('PATCH /admin/users/{id}/status', () => {
    it('is for administrators only', async () => {
      const [walter, mallory] = [await newUser('walter'), await newUser('mallory4')];
      const response = await identity.request('PATCH', `/admin/users/${walter.id}/status`, {
        token: mallory.token,
        body: { status: 'disabled' },
      });
      expect(response.status).to.equal(403);
    });

    it('disables a user: their tokens stop working, their login is 403, and re-enabling lets them in', async () => {
      const xena = await newUser('xena');
      const disabled = await identity.request('PATCH', `/admin/users/${xena.id}/status`, {
        token: adminToken,
        body: { status: 'disabled' },
      });
      expect(disabled.status).to.equal(200);
      expect(disabled.body.status).to.equal('disabled');
      expect((await identity.request('GET', `/user/${xena.id}`, { token: xena.token })).status).to.equal(401);
      const login = await identity.request('POST', '/auth/login', {
        body: { username: 'xena', password: PASSWORD },
      });
      expect(login.status).to.equal(403);
      expect(login.body.code).to.equal('ACCESS_DENIED');
      // A wrong password gets the very same answer: a disabled account is no oracle for its password.
      const wrong = await identity.request('POST', '/auth/login', {
        body: { username: 'xena', password: 'not her password' },
      });
      expect(wrong.status).to.equal(login.status);
      expect(wrong.body).to.deep.equal(login.body);
      await identity.request('PATCH', `/admin/users/${xena.id}/status`, {
        token: adminToken,
        body: { status: 'active' },
      });
      const token = await identity.login('xena');
      expect((await identity.request('GET', `/user/${xena.id}`, { token })).status).to.equal(200);
    });

    it('gives 403 ACCESS_DENIED to a locked user even with a token the revocation does not cover', async () => {
      const yuri = await newUser('yuri');
      await identity.request('PATCH', `/admin/users/${yuri.id}/status`, {
        token: adminToken,
        body: { status: 'locked' },
      });
      const iat = Math.floor(Date.now() / 1000) + 5;
      const key = createPrivateKey(await identity.signingKeyPem());
      const kid = jwt.decode(yuri.token, { complete: true })?.header.kid as string;
      const laterToken = jwt.sign({ sub: yuri.id, role: 'user', jti: randomUUID(), iat }, key, {
        algorithm: 'ES256',
        keyid: kid,
        issuer: 'payments-identity',
        audience: 'payments-api',
        expiresIn: 600,
      });
      const response = await identity.request('GET', `/user/${yuri.id}`, { token: laterToken });
      expect(response.status).to.equal(403);
      expect(response.body.code).to.equal('ACCESS_DENIED');
      expect((await identity.request('GET', `/user/${yuri.id}`, { token: yuri.token })).status).to.equal(401);
    });

    it('lands each status change in the trail of admin actions: who, whose, from what to what, and why', async () => {
      const yann = await newUser('yann');
      const disabled = await identity.request('PATCH', `/admin/users/${yann.id}/status`, {
        token: adminToken,
        body: { status: 'disabled', reason: 'chargeback ring, ticket 77' },
      });
      expect(disabled.status).to.equal(200);
      const enabled = await identity.request('PATCH', `/admin/users/${yann.id}/status`, {
        token: adminToken,
        body: { status: 'active' },
      });
      expect(enabled.status).to.equal(200);
      const recorded = await adminActionsOn(yann.id, 2);
      expect(recorded).to.deep.equal([
        {
          actor: adminId(),
          action: 'user.status_change',
          subject: `user:${yann.id}`,
          owner: yann.id,
          reason: 'chargeback ring, ticket 77',
          detail: { from: 'active', to: 'disabled' },
        },
        {
          actor: adminId(),
          action: 'user.status_change',
          subject: `user:${yann.id}`,
          owner: yann.id,
          reason: null,
          detail: { from: 'disabled', to: 'active' },
        },
      ]);
      const empty = await identity.request('PATCH', `/admin/users/${yann.id}/status`, {
        token: adminToken,
        body: { status: 'disabled', reason: '' },
      });
      expect(empty.status).to.equal(400);
    });

    it('rejects an unknown status with 400', async () => {
      const zoe = await identity.register('zoe');
      const response = await identity.request('PATCH', `/admin/users/${zoe.id}/status`, {
        token: adminToken,
        body: { status: 'banished' },
      });
      expect(response.status).to.equal(400);
    });
  });
});
