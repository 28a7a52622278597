import { expect } from 'chai';
import { Type } from '@sinclair/typebox';
import { CommonConfig, ConfigError, loadConfig, PortNumber, Url } from '../src/config.js';

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
