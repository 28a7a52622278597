import { expect } from 'chai';
import { OPERATIONS, type Operation } from '@payments/contracts/operations';
import { requiredScope, scopeOf } from '../src/domain/api-key-scopes.js';

describe('the scope a restricted API key needs', () => {
  const id = '6801acf0-ffe0-43d8-a7b8-59978d3ccabf';

  it('reads need read; money, account and transaction writes need money', () => {
    expect(requiredScope('GET', '/accounts')).to.equal('read');
    expect(requiredScope('HEAD', `/account/${id}/balance`)).to.equal('read');
    expect(requiredScope('GET', `/transaction/${id}`)).to.equal('read');
    expect(requiredScope('POST', `/account/${id}/deposit`)).to.equal('money');
    expect(requiredScope('POST', `/account/${id}/transfer`)).to.equal('money');
    expect(requiredScope('POST', '/account')).to.equal('money');
  });

  it('endpoint writes need webhook_endpoints, admin routes the admin scopes', () => {
    expect(requiredScope('POST', '/webhook-endpoints')).to.equal('webhook_endpoints');
    expect(requiredScope('DELETE', `/webhook-endpoints/${id}`)).to.equal('webhook_endpoints');
    expect(requiredScope('GET', '/admin/users')).to.equal('admin_read');
    expect(requiredScope('PATCH', `/admin/users/${id}/status`)).to.equal('admin_write');
    expect(requiredScope('POST', '/admin/dead-letters/ledger/replay')).to.equal('admin_write');
  });

  it('grants no restricted key the user, sessions, keys or anything undeclared', () => {
    for (const [method, path] of [
      ['PUT', `/user/${id}`],
      ['DELETE', `/user/${id}`],
      ['POST', '/auth/logout'],
      ['POST', '/api-keys'],
      ['GET', '/api-keys'],
      ['DELETE', `/api-keys/${id}`],
      ['POST', '/accounts'],
      ['GET', '/nothing-here'],
    ] as const) {
      expect(requiredScope(method, path), `${method} ${path}`).to.equal(undefined);
    }
  });

  it('names a scope, or refuses, for every declared operation a user calls', () => {
    const operations = Object.values(OPERATIONS as Record<string, Operation>).filter(
      (o) => o.access === 'user',
    );
    const unscoped = operations.filter((o) => scopeOf(o) === undefined).map((o) => `${o.method} ${o.path}`);
    // Only these stay out of every restricted key's reach.
    expect(unscoped).to.have.members([
      'put /user/{id}',
      'delete /user/{id}',
      'post /auth/logout',
      'post /api-keys',
      'get /api-keys',
      'delete /api-keys/{id}',
    ]);
  });
});
