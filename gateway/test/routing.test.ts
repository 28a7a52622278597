import { request as httpRequest } from 'node:http';
import { expect } from 'chai';
import { useStarted } from '@payments/testkit';
import { startGatewayUnderTest, lastRequest } from './harness.js';

interface ChunkedAnswer {
  status: number;
  body: string;
  connection?: string;
}

/** POSTs `chunks` with Transfer-Encoding: chunked (no Content-Length) and resolves with the answer. */
export function postChunked(
  url: string,
  chunks: string[],
  headers: Record<string, string> = {},
): Promise<ChunkedAnswer> {
  return new Promise((resolve, reject) => {
    const request = httpRequest(
      url,
      {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'transfer-encoding': 'chunked', ...headers },
      },
      (response) => {
        let body = '';
        response.on('data', (chunk: Buffer) => (body += chunk.toString()));
        response.on('end', () =>
          resolve({ status: response.statusCode ?? 0, body, connection: response.headers.connection }),
        );
      },
    );
    // The gateway may answer and close before the last chunks are written.
    request.on('error', (error: NodeJS.ErrnoException) => {
      if (error.code !== 'EPIPE' && error.code !== 'ECONNRESET') reject(error);
    });
    for (const chunk of chunks) request.write(chunk);
    request.end();
  });
}

describe('gateway routing and edge authentication', () => {
  const gw = useStarted(() => startGatewayUnderTest());

  const table = [
    ['POST', '/auth/login', 'identity', false],
    ['POST', '/login', 'identity', false],
    ['POST', '/user', 'identity', false],
    ['GET', '/user/5b0c', 'identity', true],
    ['GET', '/admin/users', 'identity', true],
    ['GET', '/.well-known/jwks.json', 'identity', false],
    ['POST', '/account', 'ledger', true],
    ['GET', '/account/5b0c/balance', 'ledger', true],
    ['GET', '/accounts?limit=5', 'ledger', true],
    ['GET', '/transactions', 'ledger', true],
    ['GET', '/transaction/5b0c', 'ledger', true],
    ['GET', '/api/currencies', 'currency', false],
    ['GET', '/api/currencies/search?q=euro', 'currency', false],
    ['POST', '/webhook/payment', 'webhook-ingest', false],
  ] as const;

  for (const [method, path, upstream, secured] of table) {
    it(`forwards ${method} ${path} to ${upstream}${secured ? ' with a token' : ' without one'}`, async () => {
      const response = await gw.fetch(path, { method, ...(secured ? { token: gw.token() } : {}) });
      expect(response.status).to.equal(200);
      expect(await response.json()).to.deep.equal({ upstream, path });
      expect(lastRequest(gw.upstreams[upstream]).url).to.equal(path);
    });
  }

  it('never routes /internal/*', async () => {
    const before = Object.values(gw.upstreams).reduce((n, u) => n + u.received.length, 0);
    const anonymous = await gw.fetch('/internal/revocations', { token: gw.token() });
    expect(anonymous.status).to.equal(401);
    const response = await gw.fetch('/internal/revocations', { service: true });
    expect(response.status).to.equal(404);
    expect(response.headers.get('content-type')).to.match(/^application\/problem\+json/);
    expect(await response.json()).to.include({
      code: 'RESOURCE_NOT_FOUND',
      instance: '/internal/revocations',
    });
    expect(Object.values(gw.upstreams).reduce((n, u) => n + u.received.length, 0)).to.equal(before);
  });

  it('answers 404 problem+json for a path no service owns', async () => {
    const response = await gw.fetch('/nowhere');
    expect(response.status).to.equal(404);
    expect(await response.json()).to.include({ code: 'RESOURCE_NOT_FOUND', status: 404 });
  });

  it('answers 401 AUTH_REQUIRED problem+json on a protected path without a token', async () => {
    const count = gw.upstreams.ledger.received.length;
    const response = await gw.fetch('/accounts');
    expect(response.status).to.equal(401);
    expect(response.headers.get('content-type')).to.match(/^application\/problem\+json/);
    const body = (await response.json()) as Record<string, unknown>;
    expect(body).to.include({ status: 401, code: 'AUTH_REQUIRED', instance: '/accounts' });
    expect(body).to.have.all.keys('type', 'title', 'status', 'detail', 'instance', 'code');
    expect(gw.upstreams.ledger.received.length).to.equal(count);
  });

  for (const [label, authorization] of [
    ['a malformed token', 'Bearer not-a-jwt'],
    ['a non-bearer scheme', 'Basic dXNlcjpwYXNz'],
  ] as const) {
    it(`answers 401 for ${label}`, async () => {
      const response = await gw.fetch('/accounts', { headers: { authorization } });
      expect(response.status).to.equal(401);
      expect(await response.json()).to.include({ code: 'AUTH_REQUIRED' });
    });
  }

  it('answers 401 for an expired token', async () => {
    const expired = gw.issuer.issue({ sub: '00000000-0000-4000-8000-000000000001', expiresIn: -60 });
    const response = await gw.fetch('/accounts', { token: expired });
    expect(response.status).to.equal(401);
    expect(await response.json()).to.include({ code: 'AUTH_REQUIRED' });
  });

  it('answers 401 for a token signed by another key', async () => {
    const { startTestIssuer } = await import('@payments/testkit');
    const stranger = await startTestIssuer();
    try {
      const forged = stranger.issue({ sub: '00000000-0000-4000-8000-000000000001' });
      const response = await gw.fetch('/accounts', { token: forged });
      expect(response.status).to.equal(401);
    } finally {
      await stranger.close();
    }
  });

  it('forwards the Authorization header so the service verifies again, and the verified user id', async () => {
    const token = gw.token('00000000-0000-4000-8000-0000000000aa');
    await gw.fetch('/accounts', { token, headers: { 'x-user-id': 'someone-else' } });
    const seen = lastRequest(gw.upstreams.ledger);
    expect(seen.headers.authorization).to.equal(`Bearer ${token}`);
    expect(seen.headers['x-user-id']).to.equal('00000000-0000-4000-8000-0000000000aa');
  });

  it("replaces X-Forwarded-For with the caller's address and drops hop-by-hop headers", async () => {
    await gw.fetch('/api/currencies', {
      headers: { 'x-forwarded-for': '203.0.113.9', 'proxy-authorization': 'Basic dXNlcjpwYXNz' },
    });
    const seen = lastRequest(gw.upstreams.currency).headers;
    // No trusted proxy: what the client wrote is not believed, nor passed on for a service to believe.
    expect(seen['x-forwarded-for']).to.equal('127.0.0.1');
    expect(seen).to.not.have.property('proxy-authorization');
  });

  it('sets the verified user and the client address on a request that expects 100-continue too', async () => {
    const user = '00000000-0000-4000-8000-0000000000bb';
    const status = await new Promise<number>((resolve, reject) => {
      const request = httpRequest(`${gw.url}/account`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${gw.token(user)}`,
          'content-type': 'application/json',
          'content-length': '2',
          expect: '100-continue',
          'x-user-id': 'someone-else',
          'x-forwarded-for': '203.0.113.9',
        },
      });
      request.on('continue', () => request.end('{}'));
      request.on('response', (response) => {
        response.resume();
        resolve(response.statusCode ?? 0);
      });
      request.on('error', reject);
    });
    expect(status).to.equal(200);
    const seen = lastRequest(gw.upstreams.ledger).headers;
    expect(seen['x-user-id']).to.equal(user);
    expect(seen['x-forwarded-for']).to.equal('127.0.0.1');
    expect(seen).to.not.have.property('expect');
  });

  it('forwards the client address it derived behind a trusted load balancer, as the one X-Forwarded-For value', async () => {
    const behind = await startGatewayUnderTest({ TRUSTED_PROXIES: '127.0.0.1' });
    try {
      await behind.fetch('/api/currencies', { headers: { 'x-forwarded-for': '10.9.9.9, 203.0.113.9' } });
      expect(lastRequest(behind.upstreams.currency).headers['x-forwarded-for']).to.equal('203.0.113.9');
    } finally {
      await behind.stop();
    }
  });

  it('keeps the connection to a service open for the next request', async () => {
    await gw.fetch('/api/currencies');
    const first = lastRequest(gw.upstreams.currency);
    await gw.fetch('/api/currencies');
    const second = lastRequest(gw.upstreams.currency);
    expect(second).to.not.equal(first);
    expect(second.remotePort).to.equal(first.remotePort);
    expect(second.headers.connection).to.equal('keep-alive');
  });

  it('passes a given X-Request-Id on and creates one otherwise', async () => {
    const given = await gw.fetch('/api/currencies', { headers: { 'x-request-id': 'trace-123' } });
    expect(given.headers.get('x-request-id')).to.equal('trace-123');
    expect(lastRequest(gw.upstreams.currency).headers['x-request-id']).to.equal('trace-123');
    const created = await gw.fetch('/api/currencies');
    const id = created.headers.get('x-request-id');
    expect(id).to.match(/^[0-9a-f-]{36}$/);
    expect(lastRequest(gw.upstreams.currency).headers['x-request-id']).to.equal(id);
  });

  it('passes a webhook body through byte for byte, with its signature header', async () => {
    // Odd spacing, key order, a trailing newline and non-ASCII bytes: anything re-serialised would differ.
    const raw = Buffer.concat([
      Buffer.from('{ "status":"completed",\t"payment_id" : "p-1", "note": "caf\u00e9 \u2713" }\n', 'utf8'),
    ]);
    const signature = 't=1700000000,v1=abc123';
    const response = await gw.fetch('/webhook/provider', {
      method: 'POST',
      body: raw,
      headers: { 'content-type': 'application/json', 'provider-signature': signature },
    });
    expect(response.status).to.equal(200);
    const seen = lastRequest(gw.upstreams['webhook-ingest']);
    expect(seen.body.equals(raw)).to.equal(true);
    expect(seen.headers['provider-signature']).to.equal(signature);
    expect(seen.headers['content-type']).to.equal('application/json');
  });

  it('streams a chunked request body to the service unchanged', async () => {
    const parts = ['{"payment_id":', '"p-2",', '"status":"completed"}'];
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        for (const part of parts) controller.enqueue(new TextEncoder().encode(part));
        controller.close();
      },
    });
    const response = await fetch(`${gw.url}/webhook/payment`, {
      method: 'POST',
      body,
      headers: { 'content-type': 'application/json' },
      duplex: 'half',
    } as RequestInit);
    expect(response.status).to.equal(200);
    expect(lastRequest(gw.upstreams['webhook-ingest']).body.toString()).to.equal(parts.join(''));
  });

  it('passes the service status, headers and body back untouched', async () => {
    gw.upstreams.identity.answer((_req, res) => {
      res
        .writeHead(201, { 'content-type': 'application/json', location: '/user/77', etag: '"v1"' })
        .end('{"id":"77"}');
    });
    const response = await gw.fetch('/user', { method: 'POST', body: '{}' });
    gw.upstreams.identity.answer((req, res) =>
      res.writeHead(200).end(JSON.stringify({ upstream: 'identity', path: req.url })),
    );
    expect(response.status).to.equal(201);
    expect(response.headers.get('location')).to.equal('/user/77');
    expect(response.headers.get('etag')).to.equal('"v1"');
    expect(await response.text()).to.equal('{"id":"77"}');
  });

  it("keeps the client's connection as the client asked, whatever Connection the service answered with", async () => {
    gw.upstreams.identity.answer((_req, res) => {
      res.writeHead(200, { connection: 'close', 'keep-alive': 'timeout=1' }).end('{}');
    });
    const headers = await new Promise<Record<string, unknown>>((resolve, reject) => {
      const request = httpRequest(`${gw.url}/user/77`, {
        headers: { authorization: `Bearer ${gw.token()}`, connection: 'keep-alive' },
      });
      request.on('response', (response) => {
        response.resume();
        resolve(response.headers);
      });
      request.on('error', reject).end();
    });
    gw.upstreams.identity.answer((req, res) =>
      res.writeHead(200).end(JSON.stringify({ upstream: 'identity', path: req.url })),
    );
    expect(headers.connection).to.equal('keep-alive');
    expect(headers['keep-alive']).to.not.equal('timeout=1');
  });

  it('streams a large answer back whole and relays each Set-Cookie line', async () => {
    const large = Buffer.alloc(3_000_000, 'x');
    gw.upstreams.identity.answer((_req, res) => {
      res.setHeader('set-cookie', ['a=1', 'b=2']);
      res.writeHead(200, { 'content-type': 'application/octet-stream' }).end(large);
    });
    const response = await gw.fetch('/user/77', { token: gw.token() });
    gw.upstreams.identity.answer((req, res) =>
      res.writeHead(200).end(JSON.stringify({ upstream: 'identity', path: req.url })),
    );
    expect(response.headers.getSetCookie()).to.deep.equal(['a=1', 'b=2']);
    expect(Buffer.from(await response.arrayBuffer()).equals(large)).to.equal(true);
  });

  it('refuses a body announced as larger than the limit with 413 problem+json', async () => {
    const small = await startGatewayUnderTest({ MAX_BODY_BYTES: 16 });
    try {
      const response = await small.fetch('/user', {
        method: 'POST',
        body: JSON.stringify({ username: 'a-long-name' }),
      });
      expect(response.status).to.equal(413);
      expect(await response.json()).to.include({ code: 'PAYLOAD_TOO_LARGE' });
      expect(small.upstreams.identity.received.filter((r) => r.url === '/user')).to.have.length(0);
    } finally {
      await small.stop();
    }
  });

  it('cuts off a chunked body past the limit with 413, and the service never gets a complete request', async () => {
    const small = await startGatewayUnderTest({ MAX_BODY_BYTES: 64 });
    try {
      const chunks = ['{"amount":1,"currency":"USD","padding":"', ...Array(8).fill('x'.repeat(32)), '"}'];
      const refused = await postChunked(
        `${small.url}/account/3b241101-e2bb-4255-8caf-4136c566a962/deposit`,
        chunks,
        { authorization: `Bearer ${small.token()}` },
      );
      expect(refused.status, refused.body).to.equal(413);
      expect(JSON.parse(refused.body)).to.include({ code: 'PAYLOAD_TOO_LARGE' });
      expect(refused.connection).to.equal('close');
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(small.upstreams.ledger.received).to.deep.equal([]);

      const within = await postChunked(`${small.url}/webhook/payment`, [
        '{"payment_id":',
        '"p","status":"completed"}',
      ]);
      expect(within.status).to.equal(200);
      expect(lastRequest(small.upstreams['webhook-ingest']).body.toString()).to.equal(
        '{"payment_id":"p","status":"completed"}',
      );
    } finally {
      await small.stop();
    }
  });

  it('sets security headers on every response', async () => {
    const response = await gw.fetch('/api/currencies');
    expect(response.headers.get('x-content-type-options')).to.equal('nosniff');
    expect(response.headers.get('x-powered-by')).to.equal(null);
  });

  it('sets on a proxied answer every security header it sets on its own answers, with the same values', async () => {
    // /health is the gateway's own answer; /accounts a service's answer, passed through the proxy.
    const own = await gw.fetch('/health');
    const proxied = await gw.fetch('/accounts', { token: gw.token() });
    expect(proxied.status).to.equal(200);
    const security = [
      'content-security-policy',
      'cross-origin-opener-policy',
      'cross-origin-resource-policy',
      'origin-agent-cluster',
      'referrer-policy',
      'strict-transport-security',
      'x-content-type-options',
      'x-dns-prefetch-control',
      'x-download-options',
      'x-frame-options',
      'x-permitted-cross-domain-policies',
      'x-xss-protection',
    ];
    for (const name of security) {
      expect(own.headers.get(name), name).to.be.a('string');
      expect(proxied.headers.get(name), name).to.equal(own.headers.get(name));
    }
    expect(proxied.headers.get('x-powered-by')).to.equal(null);
  });

  it('names the version on a proxied answer and varies it on Accept and X-API-Version', async () => {
    const response = await gw.fetch('/v1.1/accounts', { token: gw.token() });
    expect(response.status).to.equal(200);
    expect(response.headers.get('x-api-version')).to.equal('1.1');
    expect(response.headers.get('vary')).to.equal('Accept, X-API-Version');
    expect(lastRequest(gw.upstreams.ledger).headers['x-api-version']).to.equal('1.1');
  });

  it('answers an unsupported version on a routed path with 400 problem+json, without asking the service', async () => {
    const before = gw.upstreams.ledger.received.length;
    const response = await gw.fetch('/v2.0/accounts', { token: gw.token() });
    expect(response.status).to.equal(400);
    expect(response.headers.get('content-type')).to.equal('application/problem+json; charset=utf-8');
    expect(await response.json()).to.include({ code: 'VALIDATION_ERROR', instance: '/v2.0/accounts' });
    expect(gw.upstreams.ledger.received.length).to.equal(before);
  });

  it('sends no CORS headers unless origins are configured', async () => {
    const response = await gw.fetch('/api/currencies', { headers: { origin: 'https://evil.example' } });
    expect(response.headers.get('access-control-allow-origin')).to.equal(null);
  });

  it('allows configured CORS origins', async () => {
    const open = await startGatewayUnderTest({ CORS_ORIGINS: 'https://app.example' });
    try {
      const response = await open.fetch('/api/currencies', { headers: { origin: 'https://app.example' } });
      expect(response.headers.get('access-control-allow-origin')).to.equal('https://app.example');
      expect(response.headers.get('access-control-expose-headers')).to.include('Location');
    } finally {
      await open.stop();
    }
  });

  it('answers a CORS preflight for a proxied path itself, before the token check, and never forwards it', async () => {
    const open = await startGatewayUnderTest({ CORS_ORIGINS: 'https://app.example' });
    try {
      const response = await open.fetch('/accounts', {
        method: 'OPTIONS',
        headers: {
          origin: 'https://app.example',
          'access-control-request-method': 'GET',
          'access-control-request-headers': 'authorization',
        },
      });
      expect(response.status).to.equal(204);
      expect(response.headers.get('access-control-allow-origin')).to.equal('https://app.example');
      expect(response.headers.get('access-control-allow-headers')).to.equal('authorization');
      expect(response.headers.get('access-control-max-age')).to.equal('600');
      expect(response.headers.get('x-content-type-options')).to.equal('nosniff');
      expect(open.upstreams.ledger.received).to.have.length(0);
      const refused = await open.fetch('/accounts', { headers: { origin: 'https://app.example' } });
      expect(refused.status).to.equal(401);
      expect(refused.headers.get('access-control-allow-origin')).to.equal('https://app.example');
    } finally {
      await open.stop();
    }
  });

  it('stays ready on its own checks while a service is not, and never asks the services', async () => {
    gw.upstreams.currency.answer((_req, res) => res.writeHead(503).end());
    const before = gw.upstreams.currency.received.length;
    const response = await gw.fetch('/ready', { service: true });
    gw.upstreams.currency.answer((req, res) =>
      res.writeHead(200).end(JSON.stringify({ upstream: 'currency', path: req.url })),
    );
    expect(response.status).to.equal(200);
    expect(await response.json()).to.deep.equal({ status: 'ready', checks: { revocations: true } });
    expect(gw.upstreams.currency.received).to.have.length(before);
  });

  it('exposes Prometheus metrics with proxied requests by upstream and route', async () => {
    const text = await (await gw.fetch('/metrics', { service: true })).text();
    expect(text).to.match(
      /gateway_upstream_duration_seconds_count\{[^}]*upstream="ledger"[^}]*route="\/accounts"/,
    );
  });
});
