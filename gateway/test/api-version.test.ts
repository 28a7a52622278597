import { expect } from 'chai';
import { resolveApiVersion } from '../src/domain/api-version.js';

const VENDOR = (v: string) => `application/vnd.service.${v}+json`;

describe('API version resolution', () => {
  it('serves 1.0 when the request names no version', () => {
    expect(resolveApiVersion({ path: '/accounts' })).to.deep.equal({
      ok: true,
      version: '1.0',
      source: 'default',
      prefix: null,
      path: '/accounts',
    });
  });

  it('takes the path prefix and strips it from the path', () => {
    expect(resolveApiVersion({ path: '/v1.1/account/42/balance' })).to.deep.equal({
      ok: true,
      version: '1.1',
      source: 'path',
      prefix: '/v1.1',
      path: '/account/42/balance',
    });
    expect(resolveApiVersion({ path: '/v1.0' })).to.include({ version: '1.0', path: '/' });
    expect(resolveApiVersion({ path: '/v1.1/' })).to.include({ version: '1.1', path: '/' });
  });

  it('takes the vendor media type from Accept, among other media types', () => {
    const accept = `application/json;q=0.5, ${VENDOR('v1.1')}`;
    expect(resolveApiVersion({ path: '/accounts', accept })).to.include({ version: '1.1', source: 'accept' });
  });

  it('takes X-API-Version with or without the v', () => {
    expect(resolveApiVersion({ path: '/x', versionHeader: '1.1' })).to.include({
      version: '1.1',
      source: 'header',
    });
    expect(resolveApiVersion({ path: '/x', versionHeader: 'v1.1' })).to.include({
      version: '1.1',
      source: 'header',
    });
    expect(resolveApiVersion({ path: '/x', versionHeader: 'v1.0' })).to.include({
      version: '1.0',
      source: 'header',
    });
  });

  it('lets the path win over Accept and X-API-Version', () => {
    const resolved = resolveApiVersion({
      path: '/v1.0/accounts',
      accept: VENDOR('v1.1'),
      versionHeader: '1.1',
    });
    expect(resolved).to.include({ version: '1.0', source: 'path' });
  });

  it('lets Accept win over X-API-Version', () => {
    expect(resolveApiVersion({ path: '/x', accept: VENDOR('v1.0'), versionHeader: '1.1' })).to.include({
      version: '1.0',
      source: 'accept',
    });
    expect(resolveApiVersion({ path: '/x', accept: VENDOR('v1.1'), versionHeader: '1.0' })).to.include({
      version: '1.1',
      source: 'accept',
    });
  });

  for (const [label, request, source] of [
    ['an unsupported path version', { path: '/v2.0/accounts' }, 'path'],
    ['a path version without a minor', { path: '/v1/accounts' }, 'path'],
    ['a malformed path version', { path: '/v1.1x/accounts' }, 'path'],
    ['an unsupported Accept version', { path: '/x', accept: VENDOR('v1.7') }, 'accept'],
    ['an Accept version without its v', { path: '/x', accept: VENDOR('1.1') }, 'accept'],
    ['an unsupported X-API-Version', { path: '/x', versionHeader: '1.7' }, 'header'],
    ['a word in X-API-Version', { path: '/x', versionHeader: 'abc' }, 'header'],
    ['a major-only X-API-Version', { path: '/x', versionHeader: '1' }, 'header'],
    ['a padded number in X-API-Version', { path: '/x', versionHeader: '01.1' }, 'header'],
  ] as const) {
    it(`rejects ${label}`, () => {
      expect(resolveApiVersion(request)).to.include({ ok: false, source });
    });
  }

  it('leaves paths that merely start with v alone', () => {
    expect(resolveApiVersion({ path: '/verify' })).to.include({ ok: true, version: '1.0', path: '/verify' });
  });
});
