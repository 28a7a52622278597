import { expect } from 'chai';
import { loadConfig } from '@payments/service-kit';
import { checkProductionSettings, resolveSecretKeys, WebhookDeliveryConfigSchema } from '../src/config.js';
import { createSecretBox, UnknownSecretKeyError } from '../src/data/secret-box.js';
import { isPublicAddress, parseEndpointUrl } from '../src/domain/endpoint-url.js';
import { signingSecrets } from '../src/domain/endpoint.js';
import { nextAttemptAt, retryDelayMs } from '../src/domain/retry-schedule.js';

describe('outgoing webhook rules', () => {
  describe('public addresses', () => {
    for (const address of [
      '127.0.0.1',
      '127.255.255.254',
      '10.1.2.3',
      '172.31.255.255',
      '192.168.0.1',
      '169.254.169.254',
      '100.64.0.1',
      '0.0.0.0',
      '224.0.0.1',
      '255.255.255.255',
      '::1',
      '::',
      'fe80::1',
      'fd12:3456::1',
      'ff02::1',
      '::ffff:127.0.0.1',
      '::ffff:7f00:1',
      '::127.0.0.1',
      '::7f00:1',
      '::a00:1',
      '::ffff:10.0.0.1',
      '64:ff9b::a00:1',
      '2001:db8::1',
      'not-an-address',
    ]) {
      it(`refuses ${address}`, () => expect(isPublicAddress(address)).to.equal(false));
    }
    for (const address of ['93.184.215.14', '8.8.8.8', '2606:4700:4700::1111', '::ffff:8.8.8.8']) {
      it(`accepts ${address}`, () => expect(isPublicAddress(address)).to.equal(true));
    }
  });

  it('parses only http(s) URLs without credentials or fragments', () => {
    expect(parseEndpointUrl('https://example.com/hooks').ok).to.equal(true);
    expect(parseEndpointUrl('http://[::1]:8080/x')).to.deep.include({
      ok: true,
      hostname: '::1',
      literalAddress: true,
    });
    for (const url of [
      'ftp://example.com',
      'javascript:alert(1)',
      'https://a:b@example.com',
      'https://e.com/#x',
      '/relative',
    ]) {
      expect(parseEndpointUrl(url).ok, url).to.equal(false);
    }
  });

  it('backs off exponentially with jitter, capped, and gives up after the window', () => {
    const policy = { baseMs: 1000, maxMs: 8000 };
    expect([1, 2, 3, 4, 5, 9].map((n) => retryDelayMs(n, policy, () => 0))).to.deep.equal([
      500, 1000, 2000, 4000, 4000, 4000,
    ]);
    expect([1, 2, 3, 4, 5].map((n) => retryDelayMs(n, policy, () => 1))).to.deep.equal([
      1000, 2000, 4000, 8000, 8000,
    ]);
    const now = new Date(0);
    expect(nextAttemptAt(1, now, new Date(10_000), policy, () => 1)?.getTime()).to.equal(1000);
    expect(nextAttemptAt(4, now, new Date(5_000), policy, () => 1)).to.equal(null);
  });

  it('retries with the default settings for at least 24 hours', () => {
    const config = loadConfig(WebhookDeliveryConfigSchema, {});
    const policy = { baseMs: config.DELIVERY_BACKOFF_BASE_MS, maxMs: config.DELIVERY_BACKOFF_MAX_MS };
    const start = new Date(0);
    const until = new Date(config.DELIVERY_RETRY_WINDOW_SECONDS * 1000);
    let at: Date | null = start;
    let attempts = 0;
    let last = start;
    while (at) {
      last = at;
      attempts += 1;
      at = nextAttemptAt(attempts, at, until, policy, () => 1);
    }
    expect(last.getTime()).to.be.at.least(24 * 3600_000);
    expect(attempts).to.be.within(20, 100);
  });

  it('signs with the previous secret only until it expires', () => {
    const now = new Date(1_000_000);
    const endpoint = { secret: 'new', previousSecret: 'old', previousSecretExpiresAt: new Date(1_000_001) };
    expect(signingSecrets(endpoint, now)).to.deep.equal(['new', 'old']);
    expect(signingSecrets({ ...endpoint, previousSecretExpiresAt: now }, now)).to.deep.equal(['new']);
  });

  it('refuses private URLs and a short retry window in production', () => {
    const production = (env: Record<string, string>) => () =>
      checkProductionSettings(loadConfig(WebhookDeliveryConfigSchema, { NODE_ENV: 'production', ...env }));
    expect(production({ WEBHOOK_ALLOW_PRIVATE_URLS: 'true' })).to.throw(/WEBHOOK_ALLOW_PRIVATE_URLS/);
    expect(production({ DELIVERY_RETRY_WINDOW_SECONDS: '3600' })).to.throw(/DELIVERY_RETRY_WINDOW_SECONDS/);
    expect(production({})).to.not.throw();
  });

  describe('endpoint secrets at rest', () => {
    const OLD = 'o'.repeat(40);
    const NEW = 'n'.repeat(40);

    it('seals so that the stored value reveals nothing, and opens it again', () => {
      const box = createSecretBox([OLD]);
      const sealed = box.seal('whsec_abc');
      expect(sealed)
        .to.match(/^enc:v1:/)
        .and.not.include('whsec_abc');
      expect(box.seal('whsec_abc')).to.not.equal(sealed);
      expect(box.open(sealed)).to.equal('whsec_abc');
    });

    it('opens what an older key sealed while that key is still listed, and refuses a tampered value', () => {
      const sealedByOld = createSecretBox([OLD]).seal('whsec_old');
      expect(createSecretBox([NEW, OLD]).open(sealedByOld)).to.equal('whsec_old');
      expect(() => createSecretBox([NEW]).open(sealedByOld))
        .to.throw(UnknownSecretKeyError)
        .with.property('message')
        .that.matches(/^sealed under key [0-9a-f]{12}, which WEBHOOK_ENDPOINT_SECRETS_KEYS no longer holds/);
      const parts = sealedByOld.split(':');
      parts[5] = Buffer.from('whsec_new').toString('base64url');
      expect(() => createSecretBox([OLD]).open(parts.join(':'))).to.throw();
    });

    it('refuses a value whose authentication tag was cut short (a short tag is far easier to forge)', () => {
      const parts = createSecretBox([OLD]).seal('whsec_abc').split(':');
      parts[4] = Buffer.from(parts[4] as string, 'base64url')
        .subarray(0, 4)
        .toString('base64url');
      expect(() => createSecretBox([OLD]).open(parts.join(':'))).to.throw();
    });

    it('re-seals under the first key what an older key sealed or nothing did, and leaves what the first key sealed', () => {
      const box = createSecretBox([NEW, OLD]);
      const current = box.seal('whsec_current');
      expect(box.reseal(current)).to.equal(null);
      for (const stored of [createSecretBox([OLD]).seal('whsec_old'), 'whsec_plain']) {
        const resealed = box.reseal(stored) as string;
        expect(resealed.split(':')[2]).to.equal(current.split(':')[2]);
        expect(createSecretBox([NEW]).open(resealed)).to.equal(box.open(stored));
      }
      expect(() => createSecretBox([NEW]).reseal(createSecretBox([OLD]).seal('x'))).to.throw(
        UnknownSecretKeyError,
      );
    });

    it('reads values stored before encryption as they are', () => {
      expect(createSecretBox([OLD]).open('whsec_plain')).to.equal('whsec_plain');
    });

    it('requires real keys in production, and uses the development key elsewhere', () => {
      const config = (env: Record<string, string>) => loadConfig(WebhookDeliveryConfigSchema, env);
      expect(() => resolveSecretKeys(config({ NODE_ENV: 'production' }))).to.throw(
        /WEBHOOK_ENDPOINT_SECRETS_KEYS/,
      );
      expect(() => resolveSecretKeys(config({ WEBHOOK_ENDPOINT_SECRETS_KEYS: 'short' }))).to.throw(/32/);
      expect(resolveSecretKeys(config({})).development).to.equal(true);
      expect(
        resolveSecretKeys(config({ NODE_ENV: 'production', WEBHOOK_ENDPOINT_SECRETS_KEYS: `${NEW},${OLD}` })),
      ).to.deep.equal({ keys: [NEW, OLD], development: false });
    });
  });
});
