import { expect } from 'chai';
import type express from 'express';
import {
  createHttpApp,
  createLogger,
  createMetrics,
  listen,
  resolveServiceCredential,
  type HttpServer,
} from '@payments/service-kit';
import { versioning } from '../src/http/versioning.js';
import { useStarted } from '@payments/testkit';
import { lastRequest, startGatewayUnderTest } from './harness.js';

const DISCOVERY = { versions: ['1.0', '1.1'], current_version: '1.1', min_supported_version: '1.0' };
const VENDOR_11 = 'application/vnd.service.v1.1+json';

describe('gateway versioning', () => {
  const gw = useStarted(() => startGatewayUnderTest());

  for (const path of ['/', '/v1.0/', '/v1.1/', '/v1.1']) {
    it(`answers GET ${path} with the discovery body exactly`, async () => {
      const response = await gw.fetch(path);
      expect(response.status).to.equal(200);
      expect(await response.json()).to.deep.equal(DISCOVERY);
    });
  }

  it('answers GET / without a token', async () => {
    expect((await gw.fetch('/')).status).to.equal(200);
  });

  const sources: [string, string, RequestInit & { token?: string }, string][] = [
    ['no version', '/accounts', {}, '1.0'],
    ['the path prefix', '/v1.1/accounts', {}, '1.1'],
    ['the 1.0 path prefix', '/v1.0/accounts', {}, '1.0'],
    ['the Accept media type', '/accounts', { headers: { accept: VENDOR_11 } }, '1.1'],
    ['X-API-Version 1.1', '/accounts', { headers: { 'x-api-version': '1.1' } }, '1.1'],
    ['X-API-Version v1.1', '/accounts', { headers: { 'x-api-version': 'v1.1' } }, '1.1'],
    [
      'a path that beats Accept and the header',
      '/v1.0/accounts',
      { headers: { accept: VENDOR_11, 'x-api-version': '1.1' } },
      '1.0',
    ],
    [
      'Accept that beats the header',
      '/accounts',
      { headers: { accept: 'application/vnd.service.v1.0+json', 'x-api-version': '1.1' } },
      '1.0',
    ],
    [
      'the header when Accept names no version',
      '/accounts',
      { headers: { accept: 'application/json', 'x-api-version': '1.1' } },
      '1.1',
    ],
  ];
  for (const [label, path, init, version] of sources) {
    it(`serves ${version} for ${label}, forwarding and echoing it`, async () => {
      const response = await gw.fetch(path, { ...init, token: gw.token() });
      expect(response.status).to.equal(200);
      expect(response.headers.get('x-api-version')).to.equal(version);
      const seen = lastRequest(gw.upstreams.ledger);
      expect(seen.url).to.equal('/accounts');
      expect(seen.headers['x-api-version']).to.equal(version);
    });
  }

  it('strips the prefix, keeps the query and tells the service the prefix', async () => {
    await gw.fetch('/v1.1/accounts?limit=5&offset=10', { token: gw.token() });
    const seen = lastRequest(gw.upstreams.ledger);
    expect(seen.url).to.equal('/accounts?limit=5&offset=10');
    expect(seen.headers['x-forwarded-prefix']).to.equal('/v1.1');
  });

  it('drops an X-Forwarded-Prefix the client made up', async () => {
    await gw.fetch('/accounts', { token: gw.token(), headers: { 'x-forwarded-prefix': '/evil' } });
    expect(lastRequest(gw.upstreams.ledger).headers).not.to.have.property('x-forwarded-prefix');
  });

  it('echoes the version on gateway errors too', async () => {
    const response = await gw.fetch('/v1.1/accounts');
    expect(response.status).to.equal(401);
    expect(response.headers.get('x-api-version')).to.equal('1.1');
    expect(await response.json()).to.include({ instance: '/v1.1/accounts' });
  });

  const invalid: [string, string, Record<string, string>, string][] = [
    ['/v2.0/ in the path', '/v2.0/accounts', {}, 'path'],
    ['/v1/ in the path', '/v1/accounts', {}, 'path'],
    ['Accept v1.7', '/accounts', { accept: 'application/vnd.service.v1.7+json' }, 'Accept'],
    ['X-API-Version 1.7', '/accounts', { 'x-api-version': '1.7' }, 'X-API-Version'],
    ['X-API-Version abc', '/accounts', { 'x-api-version': 'abc' }, 'X-API-Version'],
    ['X-API-Version 2.0', '/accounts', { 'x-api-version': '2.0' }, 'X-API-Version'],
  ];
  for (const [label, path, headers, field] of invalid) {
    it(`answers 400 listing the supported versions for ${label}`, async () => {
      const count = gw.upstreams.ledger.received.length;
      const response = await gw.fetch(path, { headers, token: gw.token() });
      expect(response.status).to.equal(400);
      expect(response.headers.get('content-type')).to.match(/^application\/problem\+json/);
      const body = (await response.json()) as {
        code: string;
        detail: string;
        instance: string;
        errors: unknown[];
      };
      expect(body.code).to.equal('VALIDATION_ERROR');
      expect(body.detail).to.include('Supported versions: 1.0, 1.1');
      expect(body.instance).to.equal(path);
      expect(body.errors).to.deep.equal([{ field, message: 'must be one of 1.0, 1.1' }]);
      expect(gw.upstreams.ledger.received.length).to.equal(count);
    });
  }

  it('rejects an unsupported version even on the discovery path', async () => {
    expect((await gw.fetch('/v2.0/')).status).to.equal(400);
  });

  it('rewrites a relative Location to carry the prefix the client used', async () => {
    gw.upstreams.ledger.answer((_req, res) => {
      res.writeHead(202, { location: '/transaction/7a1c', 'content-type': 'application/json' }).end('{}');
    });
    try {
      const prefixed = await gw.fetch('/v1.1/account/1/deposit', { method: 'POST', token: gw.token() });
      expect(prefixed.status).to.equal(202);
      expect(prefixed.headers.get('location')).to.equal('/v1.1/transaction/7a1c');
      const plain = await gw.fetch('/account/1/deposit', { method: 'POST', token: gw.token() });
      expect(plain.headers.get('location')).to.equal('/transaction/7a1c');
      const byHeader = await gw.fetch('/account/1/deposit', {
        method: 'POST',
        token: gw.token(),
        headers: { 'x-api-version': '1.1' },
      });
      expect(byHeader.headers.get('location')).to.equal('/transaction/7a1c');
    } finally {
      gw.upstreams.ledger.answer((req, res) =>
        res.writeHead(200).end(JSON.stringify({ upstream: 'ledger', path: req.url })),
      );
    }
  });

  it('marks a retiring version with Deprecation and Sunset headers', async () => {
    const logger = createLogger('test', 'silent');
    const serviceCredential = resolveServiceCredential({ NODE_ENV: 'test' });
    const app = createHttpApp(
      { logger, metrics: createMetrics('test'), serviceCredential, bodyParser: 'none' },
      (a) => {
        a.use(
          versioning({
            '1.0': {
              deprecatedAt: new Date('2030-01-01T00:00:00Z'),
              sunsetAt: new Date('2031-01-01T00:00:00Z'),
            },
          }),
        );
        a.get('/thing', (_req: express.Request, res: express.Response) => void res.json({}));
      },
    );
    const server: HttpServer = await listen(app, 0, '127.0.0.1');
    try {
      const old = await fetch(`http://127.0.0.1:${server.port}/v1.0/thing`);
      expect(old.headers.get('deprecation')).to.equal('@1893456000');
      expect(old.headers.get('sunset')).to.equal('Wed, 01 Jan 2031 00:00:00 GMT');
      const current = await fetch(`http://127.0.0.1:${server.port}/v1.1/thing`);
      expect(current.headers.get('deprecation')).to.equal(null);
    } finally {
      await server.close();
    }
  });
});
