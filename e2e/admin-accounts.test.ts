import { expect } from 'chai';
import { createPaymentsClient } from '@payments/client';
import { useSystem } from '@payments/testkit';
import { rawApi, signUpWithAccount, type Customer } from '@payments/test-support';

describe("an operator's look-ups: a user's accounts, a user by the start of their id", function () {
  this.timeout(120_000);
  const system = useSystem({}, { admin: true });
  const api = rawApi(system);
  let owner: Customer;
  let other: Customer;

  before(async () => {
    owner = await signUpWithAccount(system.gatewayUrl);
    await owner.client.accounts.open({ currency: 'EUR' });
    other = await signUpWithAccount(system.gatewayUrl);
  });

  it("lists a user's accounts to an admin, as the user sees them, through the client", async () => {
    const listed = await api.get(`/admin/accounts?user_id=${owner.userId}`, system.admin.token);
    expect(listed.status, listed.text).to.equal(200);
    const own = await api.get('/accounts', owner.token);
    expect(listed.body).to.deep.equal(own.body);
    // A UUID is the same id whatever the case of its letters.
    const upper = await api.get(`/admin/accounts?user_id=${owner.userId.toUpperCase()}`, system.admin.token);
    expect(upper.body.data, upper.text).to.deep.equal(own.body.data);
    expect(listed.body.data.map((account: { currency: string }) => account.currency).sort()).to.deep.equal([
      'EUR',
      'USD',
    ]);
    expect(
      listed.body.data.every((account: { user_id: string }) => account.user_id === owner.userId),
    ).to.equal(true);

    const admin = createPaymentsClient({ baseUrl: system.gatewayUrl, token: system.admin.token });
    const found = await admin.admin.accounts.find({ user_id: owner.userId, limit: 1 }).toArray();
    expect(found.map((account) => account.id).sort()).to.deep.equal(
      own.body.data.map((account: { id: string }) => account.id).sort(),
    );
  });

  it('refuses a user (403) even for their own id, and anyone unauthenticated (401)', async () => {
    for (const userId of [owner.userId, other.userId]) {
      const refused = await api.get(`/admin/accounts?user_id=${userId}`, other.token);
      expect(refused.status).to.equal(403);
      expect(refused.body.code).to.equal('ACCESS_DENIED');
      expect((await api.get(`/admin/accounts?user_id=${userId}`)).status).to.equal(401);
    }
  });

  it('answers 400 without a user_id or with one that is not a UUID', async () => {
    for (const query of ['', '?user_id=nope', `?user_id=${owner.userId}&limit=0`]) {
      const refused = await api.get(`/admin/accounts${query}`, system.admin.token);
      expect(refused.status, query).to.equal(400);
      expect(refused.body.code, query).to.equal('VALIDATION_ERROR');
    }
  });

  it('finds a user by the start of their id, in any case, for admins only', async () => {
    const prefix = owner.userId.slice(0, 8).toUpperCase();
    const found = await api.get(`/admin/users?id_prefix=${prefix}`, system.admin.token);
    expect(found.status, found.text).to.equal(200);
    expect(found.body.data.map((user: { id: string }) => user.id)).to.include(owner.userId);
    expect(
      found.body.data.every((user: { id: string }) => user.id.startsWith(prefix.toLowerCase())),
    ).to.equal(true);
    const whole = await api.get(`/admin/users?id_prefix=${owner.userId}`, system.admin.token);
    expect(whole.body.data.map((user: { id: string }) => user.id)).to.deep.equal([owner.userId]);
    // LIKE's wildcards are not hex: refused, never a match-all.
    for (const bad of ['%25', '_', 'xyz']) {
      const refused = await api.get(`/admin/users?id_prefix=${bad}`, system.admin.token);
      expect(refused.status, bad).to.equal(400);
    }
    expect((await api.get(`/admin/users?id_prefix=${prefix}`, other.token)).status).to.equal(403);
    expect((await api.get(`/admin/users?id_prefix=${prefix}`)).status).to.equal(401);
  });
});
