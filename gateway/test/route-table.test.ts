import { expect } from 'chai';
import { isPublicRoute, matchRoute } from '../src/domain/route-table.js';

describe('gateway route table', () => {
  for (const [path, upstream] of [
    ['/auth/login', 'identity'],
    ['/auth/logout', 'identity'],
    ['/login', 'identity'],
    ['/user', 'identity'],
    ['/user/8d3a', 'identity'],
    ['/admin/users', 'identity'],
    ['/admin/reconciliation', 'ledger'],
    ['/admin/reconciliation/cases/x', 'ledger'],
    ['/admin/overdrawn-accounts', 'ledger'],
    ['/admin/dead-letters/ledger', 'ledger'],
    ['/admin/dead-letters/ledger/replay', 'ledger'],
    ['/admin/dead-letters/currency', 'currency'],
    ['/admin/dead-letters/webhook-delivery/replay', 'webhook-delivery'],
    // No upstream consumes it: identity's 404, like any /admin path nobody serves.
    ['/admin/dead-letters/provider-sandbox', 'identity'],
    ['/admin/dead-letters/ledgerx', 'identity'],
    ['/.well-known/jwks.json', 'identity'],
    ['/account', 'ledger'],
    ['/account/8d3a/deposit', 'ledger'],
    ['/accounts', 'ledger'],
    ['/transactions', 'ledger'],
    ['/transaction/8d3a', 'ledger'],
    ['/api/currencies', 'currency'],
    ['/api/currencies/region/europe', 'currency'],
    ['/webhook/payment', 'webhook-ingest'],
  ] as const) {
    it(`sends ${path} to ${upstream}`, () => {
      expect(matchRoute(path)?.upstream).to.equal(upstream);
    });
  }

  for (const path of ['/internal/revocations', '/auth', '/webhook', '/webhook/', '/accountx', '/', '/foo']) {
    it(`routes nothing for ${path}`, () => {
      expect(matchRoute(path)).to.equal(undefined);
    });
  }

  it('refuses dot segments that could climb out of a routed prefix', () => {
    expect(matchRoute('/account/../internal/revocations')).to.equal(undefined);
    expect(matchRoute('/account/%2e%2e/internal/revocations')).to.equal(undefined);
    expect(matchRoute('/account/./x')).to.equal(undefined);
  });

  it('makes registration, login, refresh, currencies, jwks and webhooks public', () => {
    expect(isPublicRoute('POST', '/user')).to.equal(true);
    expect(isPublicRoute('POST', '/auth/login')).to.equal(true);
    expect(isPublicRoute('POST', '/login')).to.equal(true);
    expect(isPublicRoute('POST', '/auth/refresh')).to.equal(true);
    expect(isPublicRoute('GET', '/.well-known/jwks.json')).to.equal(true);
    expect(isPublicRoute('GET', '/api/currencies/EUR')).to.equal(true);
    expect(isPublicRoute('POST', '/webhook/provider')).to.equal(true);
  });

  it('protects everything else, including other methods on public paths', () => {
    expect(isPublicRoute('GET', '/user/1')).to.equal(false);
    expect(isPublicRoute('DELETE', '/user')).to.equal(false);
    expect(isPublicRoute('POST', '/auth/logout')).to.equal(false);
    expect(isPublicRoute('POST', '/api/currencies')).to.equal(false);
    expect(isPublicRoute('GET', '/accounts')).to.equal(false);
  });
});
