import { rm } from 'node:fs/promises';
import { expect } from 'chai';
import { developmentKeyPath } from '@payments/identity';
import { eventually, useSystem } from '@payments/testkit';
import { rawApi, signUp, type ApiResponse, type RawApi } from '@payments/test-support';

describe('a signing key identity removed stops working everywhere', function () {
  this.timeout(180_000);
  const system = useSystem({ serviceEnv: { 'provider-sandbox': { SANDBOX_ENABLED: 'false' } } });

  /** Every verifier asked directly, and the gateway: each answers a request that needs a signed-in user. */
  const verifiers = (userId: string): [string, RawApi, string][] => [
    ['gateway', rawApi(system.gatewayUrl), '/accounts'],
    ['identity', rawApi(system.urls.identity), `/user/${userId}`],
    ['ledger', rawApi(system.urls.ledger), '/accounts'],
    ['webhook-delivery', rawApi(system.urls['webhook-delivery']), '/webhook-endpoints'],
    // An admin route: a user's good token is 403 there, a refused one 401.
    ['currency', rawApi(system.urls.currency), '/admin/dead-letters/currency'],
  ];
  const accepted = (response: ApiResponse) => response.status === 200 || response.status === 403;

  it("refuses (401) the old key's tokens at the gateway and at every service soon after identity restarts without it", async () => {
    const user = await signUp(system.gatewayUrl);
    for (const [name, api, route] of verifiers(user.userId)) {
      const answer = await api.get(route, user.token);
      expect(accepted(answer), `${name} before: ${answer.status} ${answer.text}`).to.equal(true);
    }

    // A development system keeps its key under DATA_DIR; without it, identity starts with a new key, alone.
    await rm(developmentKeyPath(system.environment('identity').DATA_DIR as string));
    await system.restart('identity');

    // JWKS_REFRESH_SECONDS is 60 s here: well within it, only identity's SigningKeysChanged can have done this.
    const startedAt = Date.now();
    for (const [name, api, route] of verifiers(user.userId)) {
      const refused = await eventually(
        () => api.get(route, user.token),
        (response) => response.status === 401,
        { timeoutMs: 15_000, what: `${name} refusing the removed key's token` },
      );
      expect(refused.body, name).to.include({ code: 'AUTH_REQUIRED' });
    }
    expect(Date.now() - startedAt).to.be.below(30_000);

    const { token } = await user.client.auth.login({ username: user.username, password: user.password });
    for (const [name, api, route] of verifiers(user.userId)) {
      const answer = await api.get(route, token);
      expect(accepted(answer), `${name} with the new key: ${answer.status} ${answer.text}`).to.equal(true);
    }
  });
});
