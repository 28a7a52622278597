import { expect } from 'chai';
import { Type } from '@sinclair/typebox';
import { CommonConfig, ConfigError, DatabaseConfig, loadConfig, PortNumber, Url } from '../src/config.js';

const Schema = Type.Object({
  ...CommonConfig,
  PORT: PortNumber(3000),
  DATABASE_URL: Url({ description: 'A database' }),
  MAX_AMOUNT: Type.Integer({ minimum: 1, default: 1000 }),
});

describe('configuration', () => {
  it('applies defaults and coerces numbers', () => {
    const config = loadConfig(Schema, { DATABASE_URL: 'postgres://localhost/x', PORT: '4000' });
    expect(config).to.include({ PORT: 4000, MAX_AMOUNT: 1000, NODE_ENV: 'development', HOST: '127.0.0.1' });
  });

  it('treats an empty variable as unset', () => {
    const config = loadConfig(Schema, { DATABASE_URL: 'postgres://localhost/x', PORT: '' });
    expect(config.PORT).to.equal(3000);
  });

  it('stops with a message naming the bad variable and its value', () => {
    expect(() => loadConfig(Schema, { DATABASE_URL: 'postgres://localhost/x', PORT: 'eighty' }))
      .to.throw(ConfigError)
      .with.property('message')
      .that.matches(/PORT must be integer \(got "eighty"\)/);
  });

  it('names a missing required variable', () => {
    expect(() => loadConfig(Schema, {})).to.throw(ConfigError, /DATABASE_URL is required/);
  });

  it('reports every problem at once', () => {
    expect(() => loadConfig(Schema, { PORT: '70000', NODE_ENV: 'staging' }))
      .to.throw(ConfigError)
      .with.property('message')
      .that.matches(/PORT/)
      .and.matches(/NODE_ENV/)
      .and.matches(/DATABASE_URL/);
  });
});

describe('configuration: the database pool', () => {
  const PoolSchema = Type.Object(DatabaseConfig('payments_ledger', 'ledger'));

  it('bounds the pool as before by default, adds a 30 s statement timeout, names it after the service', () => {
    expect(loadConfig(PoolSchema, {})).to.include({
      DATABASE_POOL_MAX: 10,
      DATABASE_POOL_ACQUIRE_TIMEOUT_MS: 10_000,
      DATABASE_CONNECT_TIMEOUT_MS: 10_000,
      DATABASE_STATEMENT_TIMEOUT_MS: 30_000,
      DATABASE_APPLICATION_NAME: 'ledger',
    });
  });

  const refused: [variable: string, value: string, message: RegExp][] = [
    ['DATABASE_POOL_MAX', '0', /DATABASE_POOL_MAX must be >= 1 \(got "0"\)/],
    ['DATABASE_POOL_MAX', '500', /DATABASE_POOL_MAX must be <= 100 \(got "500"\)/],
    ['DATABASE_POOL_MAX', 'ten', /DATABASE_POOL_MAX must be integer/],
    ['DATABASE_POOL_ACQUIRE_TIMEOUT_MS', '10', /DATABASE_POOL_ACQUIRE_TIMEOUT_MS must be >= 100/],
    ['DATABASE_CONNECT_TIMEOUT_MS', '600000', /DATABASE_CONNECT_TIMEOUT_MS must be <= 120000/],
    ['DATABASE_STATEMENT_TIMEOUT_MS', '0', /DATABASE_STATEMENT_TIMEOUT_MS must be >= 100 \(got "0"\)/],
    ['DATABASE_STATEMENT_TIMEOUT_MS', '1.5', /DATABASE_STATEMENT_TIMEOUT_MS must be integer/],
    ['DATABASE_APPLICATION_NAME', 'ledger; drop', /DATABASE_APPLICATION_NAME must match pattern/],
    ['DATABASE_APPLICATION_NAME', 'x'.repeat(64), /DATABASE_APPLICATION_NAME must match pattern/],
  ];
  for (const [variable, value, message] of refused) {
    it(`refuses ${variable}=${value.length > 20 ? `${value.slice(0, 8)}…` : value}, naming it`, () => {
      expect(() => loadConfig(PoolSchema, { [variable]: value }))
        .to.throw(ConfigError)
        .with.property('message')
        .that.matches(message);
    });
  }
});
