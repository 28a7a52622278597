import { rm } from 'node:fs/promises';
import { expect } from 'chai';
import { eventually } from '@payments/testkit';
import { developmentKeyPath } from '../src/data/signing-key-files.js';
import { useIdentityHarness } from './identity-harness.js';

describe('identity: announcing its signing keys', () => {
  const identity = useIdentityHarness();

  const servedKids = async () =>
    (await identity.request<{ keys: { kid: string }[] }>('GET', '/.well-known/jwks.json')).body.keys.map(
      (key) => key.kid,
    );
  const announcements = () =>
    identity.published.flatMap((event) => (event.type === 'SigningKeysChanged' ? [event.data.kids] : []));

  it('announces SigningKeysChanged on a start with other keys than the last announced, and only then', async () => {
    const kim = await identity.register('kim');
    const oldToken = await identity.login('kim');
    const [oldKid] = await servedKids();
    // The first start ever: nothing was announced before.
    await eventually(
      async () => announcements(),
      (kids) => kids.length === 1,
    );
    expect(announcements()).to.deep.equal([[oldKid]]);

    await identity.restart();
    expect(await servedKids()).to.deep.equal([oldKid]);

    // The key removed, as a leaked one is: this start makes a new key and serves it alone.
    await rm(developmentKeyPath(identity.config.DATA_DIR));
    await identity.restart();
    const [newKid] = await servedKids();
    expect(newKid).to.not.equal(oldKid);
    await eventually(
      async () => announcements(),
      (kids) => kids.length >= 2,
    );
    // The restart with the same keys announced nothing.
    expect(announcements()).to.deep.equal([[oldKid], [newKid]]);

    expect((await identity.request('GET', `/user/${kim.id}`, { token: oldToken })).status).to.equal(401);
    const newToken = await identity.login('kim');
    expect((await identity.request('GET', `/user/${kim.id}`, { token: newToken })).status).to.equal(200);
  });
});
