import { expect } from 'chai';
import {
  ConfigError,
  createLogger,
  DEVELOPMENT_SERVICE_TOKEN,
  isLoopbackHost,
  refuseDevelopmentSecrets,
  resolveServiceCredential,
} from '@payments/service-kit';

const REAL = 'a'.repeat(64);
const silent = createLogger('service-credential-test', 'silent');

describe('service credential', () => {
  it('falls back to the marked development token outside production', () => {
    for (const NODE_ENV of ['development', 'test']) {
      expect(resolveServiceCredential({ NODE_ENV })).to.deep.equal({
        token: DEVELOPMENT_SERVICE_TOKEN,
        accepted: [DEVELOPMENT_SERVICE_TOKEN],
        development: true,
      });
    }
  });

  it('sends the first of a comma-separated list and accepts every one (rotation)', () => {
    expect(
      resolveServiceCredential({ NODE_ENV: 'production', SERVICE_TOKEN: `${REAL}, ${'b'.repeat(40)}` }),
    ).to.deep.equal({
      token: REAL,
      accepted: [REAL, 'b'.repeat(40)],
      development: false,
    });
  });

  it('refuses to start in production without a token, with the development one, or with a short one', () => {
    const production = (SERVICE_TOKEN?: string) => () =>
      resolveServiceCredential({ NODE_ENV: 'production', SERVICE_TOKEN });
    expect(production()).to.throw(ConfigError, 'SERVICE_TOKEN is required when NODE_ENV=production');
    expect(production(`${REAL},${DEVELOPMENT_SERVICE_TOKEN}`)).to.throw(
      ConfigError,
      'must not contain the development token',
    );
    expect(production('changeme')).to.throw(ConfigError, 'at least 32 characters');
  });

  it('knows loopback addresses from the others', () => {
    for (const host of ['127.0.0.1', '127.1.2.3', 'localhost', '::1', '[::1]', '::ffff:127.0.0.1']) {
      expect(isLoopbackHost(host), host).to.equal(true);
    }
    for (const host of [
      '0.0.0.0',
      '::',
      '10.0.0.5',
      '192.168.1.2',
      'identity',
      '',
      '127.0.0.1.example.com',
    ]) {
      expect(isLoopbackHost(host), host).to.equal(false);
    }
  });

  it('refuses development secrets beyond loopback, naming each, and allows them on loopback', () => {
    const inUse = { SERVICE_TOKEN: true, WEBHOOK_SECRETS: true, JWT_PRIVATE_KEY: false };
    expect(() => refuseDevelopmentSecrets('0.0.0.0', inUse, silent)).to.throw(
      ConfigError,
      'Refusing to start: HOST=0.0.0.0 listens beyond loopback, but SERVICE_TOKEN, WEBHOOK_SECRETS have their public development value.',
    );
    expect(() => refuseDevelopmentSecrets('127.0.0.1', inUse, silent)).to.not.throw();
    expect(() => refuseDevelopmentSecrets('0.0.0.0', { SERVICE_TOKEN: false }, silent)).to.not.throw();
  });
});
