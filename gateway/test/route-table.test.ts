import { expect } from 'chai';
import { DEAD_LETTER_QUEUES, OPERATIONS } from '@payments/contracts/operations';
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
    ['/admin/overview', 'ledger'],
    ['/admin/chargeback-exposure', 'ledger'],
    ['/admin/dead-letters/ledger', 'ledger'],
    ['/admin/dead-letters/ledger/replay', 'ledger'],
    ['/admin/dead-letters/currency', 'currency'],
    ['/admin/dead-letters/webhook-delivery/replay', 'webhook-delivery'],
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

  // No service behind the gateway consumes the sandbox's queue, nor serves an /admin path nobody declared.
  for (const path of [
    '/internal/revocations',
    '/auth',
    '/webhook',
    '/webhook/',
    '/accountx',
    '/',
    '/foo',
    '/admin/dead-letters/provider-sandbox',
    '/admin/dead-letters/ledgerx',
    '/admin/nobody',
  ]) {
    it(`routes nothing for ${path}`, () => {
      expect(matchRoute(path)).to.equal(undefined);
    });
  }

  it('routes each declared operation to the service that owns it, and none the gateway answers itself', () => {
    for (const [operationId, { path, owner }] of Object.entries(OPERATIONS)) {
      const served: [string, string | undefined][] =
        owner === 'gateway'
          ? [[path, undefined]]
          : owner === 'consumer of {queue}'
            ? DEAD_LETTER_QUEUES.map((queue) => [path.replace('{queue}', queue), queue])
            : [[path, owner]];
      for (const [template, upstream] of served) {
        const concrete = template.replace(/\{[^}]+\}/g, 'x');
        expect(matchRoute(concrete)?.upstream, `${operationId}: ${concrete}`).to.equal(upstream);
      }
    }
  });

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
