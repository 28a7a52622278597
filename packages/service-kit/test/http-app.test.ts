import { expect } from 'chai';
import { Type } from '@sinclair/typebox';
import {
  AppError,
  bodyValidator,
  createHttpApp,
  createLogger,
  createMetrics,
  listen,
  resolveServiceCredential,
  type HttpServer,
} from '@payments/service-kit';

const serviceCredential = resolveServiceCredential({
  NODE_ENV: 'test',
  SERVICE_TOKEN: 'kit-test-token-new,kit-test-token-old',
});

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- bodies are asserted field by field
const json = async (response: Response): Promise<any> => response.json();

describe('HTTP app factory', () => {
  let http: HttpServer;
  let base: string;
  const logLines: Record<string, unknown>[] = [];

  before(async () => {
    const readDeposit = bodyValidator(
      Type.Object({ amount: Type.Number() }, { additionalProperties: false }),
    );
    const app = createHttpApp(
      {
        logger: createLogger('http-test', 'info', {
          write: (line: string) => logLines.push(JSON.parse(line)),
        }),
        metrics: createMetrics('http-test'),
        serviceCredential,
        readiness: [{ name: 'database', check: () => false }],
      },
      (routes) => {
        routes.post('/deposit', (req, res) => {
          res.json(readDeposit(req));
        });
        routes.get('/broken', () => {
          throw new Error('relation "secret_table" does not exist at /srv/app.ts:12');
        });
        routes.get('/logged', (req, res) => {
          req.log.info('handling');
          res.json({});
        });
        routes.get('/items/:id', (req, res) => {
          req.auth = { userId: 'user-7', role: 'user', jti: 'j', issuedAt: 0, expiresAt: 0, authTime: 0 };
          res.json({ id: req.params.id });
        });
        routes.post('/confirm', (req, res) => {
          res.json({ body: req.body ?? null });
        });
        routes.get('/poor', () => {
          throw new AppError('INSUFFICIENT_FUNDS', 'Not enough money');
        });
        routes.get('/internal/report', (_req, res) => {
          res.json({ internal: true });
        });
      },
    );
    http = await listen(app, 0, '127.0.0.1');
    base = `http://127.0.0.1:${http.port}`;
  });

  after(() => http.close());

  const post = (path: string, body: string, type = 'application/json') =>
    fetch(base + path, { method: 'POST', body, headers: { 'content-type': type } });

  it('answers problem+json with the code for a domain error', async () => {
    const response = await fetch(`${base}/poor`);
    expect(response.status).to.equal(422);
    expect(response.headers.get('content-type')).to.match(/^application\/problem\+json/);
    expect(await json(response)).to.deep.equal({
      type: '/problems/insufficient-funds',
      title: 'Not enough balance',
      status: 422,
      detail: 'Not enough money',
      instance: '/poor',
      code: 'INSUFFICIENT_FUNDS',
    });
  });

  it('turns an unexpected error into a 500 that reveals nothing inside', async () => {
    const response = await fetch(`${base}/broken`);
    const text = await response.text();
    expect(response.status).to.equal(500);
    expect(JSON.parse(text).code).to.equal('INTERNAL_ERROR');
    expect(text).to.not.match(/secret_table|srv|at /);
  });

  it('answers invalid JSON with 400 VALIDATION_ERROR', async () => {
    const response = await post('/deposit', '{"amount": ');
    expect(response.status).to.equal(400);
    expect((await json(response)).code).to.equal('VALIDATION_ERROR');
  });

  it('names each invalid field in errors[]', async () => {
    const response = await post('/deposit', JSON.stringify({ amount: 'x', extra: 1 }));
    const body = await json(response);
    expect(response.status).to.equal(400);
    expect(body.errors).to.deep.include({ field: 'extra', message: 'is not allowed' });
    expect(body.errors.map((e: { field: string }) => e.field)).to.include('amount');
  });

  it('answers an oversized body with 413', async () => {
    const response = await post('/deposit', JSON.stringify({ amount: 1, pad: 'x'.repeat(200_000) }));
    expect(response.status).to.equal(413);
    expect((await json(response)).code).to.equal('PAYLOAD_TOO_LARGE');
  });

  it('answers an unknown route with 404 problem+json', async () => {
    const response = await fetch(`${base}/nowhere`);
    expect(response.status).to.equal(404);
    expect((await json(response)).code).to.equal('RESOURCE_NOT_FOUND');
  });

  it('echoes a given X-Request-Id and creates one otherwise', async () => {
    const echoed = await fetch(`${base}/health`, { headers: { 'x-request-id': 'req-42' } });
    expect(echoed.headers.get('x-request-id')).to.equal('req-42');
    const created = await fetch(`${base}/health`);
    expect(created.headers.get('x-request-id')).to.match(/^[0-9a-f-]{36}$/);
  });

  it('puts the request id on every line logged for the request', async () => {
    await fetch(`${base}/logged`, { headers: { 'x-request-id': 'req-log-1' } });
    const lines = logLines.filter((line) => line.request_id === 'req-log-1');
    expect(lines.map((line) => line.msg)).to.deep.equal(['handling', 'request completed']);
  });

  it('answers a body that is not JSON with 415 UNSUPPORTED_MEDIA_TYPE', async () => {
    for (const type of ['text/plain', 'application/x-www-form-urlencoded']) {
      const response = await post('/deposit', 'amount=1', type);
      expect(response.status, type).to.equal(415);
      expect(await json(response)).to.include({
        code: 'UNSUPPORTED_MEDIA_TYPE',
        status: 415,
        instance: '/deposit',
      });
    }
    const untyped = await fetch(`${base}/deposit`, { method: 'POST', body: new Uint8Array([123, 125]) });
    expect(untyped.status).to.equal(415);
  });

  it('accepts a body-less POST and JSON media types other than application/json', async () => {
    expect((await fetch(`${base}/confirm`, { method: 'POST' })).status).to.equal(200);
    const merged = await post('/confirm', '{"a":1}', 'application/merge-patch+json');
    expect(await json(merged)).to.deep.equal({ body: { a: 1 } });
  });

  it('logs the route template and the caller on the access line', async () => {
    await fetch(`${base}/items/42`, { headers: { 'x-request-id': 'req-log-2' } });
    const line = logLines.find(
      (entry) => entry.request_id === 'req-log-2' && entry.msg === 'request completed',
    );
    expect(line).to.include({ route: '/items/:id', user_id: 'user-7' });
    expect(line?.res).to.deep.equal({ statusCode: 200 });
    expect(line?.responseTime).to.be.a('number');
  });

  it('answers /internal/* and /metrics only with the service credential, any of a rotation', async () => {
    const bearer = (token: string) => ({ headers: { authorization: `Bearer ${token}` } });
    for (const path of ['/internal/report', '/internal/added-later', '/INTERNAL/report/', '/metrics']) {
      for (const init of [
        {},
        bearer('wrong'),
        bearer('kit-test-token-new-but-longer'),
        { headers: { authorization: 'kit-test-token-new' } },
      ]) {
        const refused = await fetch(`${base}${path}`, init);
        expect(refused.status, `${path} ${JSON.stringify(init)}`).to.equal(401);
        expect(refused.headers.get('www-authenticate')).to.equal('Bearer realm="service"');
        expect(await json(refused)).to.deep.include({
          code: 'AUTH_REQUIRED',
          detail: 'This endpoint needs the service credential',
        });
      }
    }
    for (const token of ['kit-test-token-new', 'kit-test-token-old']) {
      expect(await json(await fetch(`${base}/internal/report`, bearer(token)))).to.deep.equal({
        internal: true,
      });
      expect((await fetch(`${base}/metrics`, bearer(token))).status).to.equal(200);
    }
    expect((await fetch(`${base}/internal/added-later`, bearer('kit-test-token-old'))).status).to.equal(404);
    expect((await fetch(`${base}/health`)).status).to.equal(200);
  });

  it('reports not ready while a dependency is down', async () => {
    const response = await fetch(`${base}/ready`);
    expect(response.status).to.equal(503);
    expect(await json(response)).to.deep.equal({ status: 'not ready', checks: { database: false } });
  });
});

describe('HTTP app factory logging at warn', () => {
  let http: HttpServer;
  let base: string;
  const logLines: Record<string, unknown>[] = [];

  before(async () => {
    const logger = createLogger('http-test', 'warn', {
      write: (line: string) => logLines.push(JSON.parse(line)),
    });
    const app = createHttpApp(
      { logger, metrics: createMetrics('http-test'), serviceCredential },
      (routes) => {
        routes.get('/quiet', (req, res) => {
          req.log.info('below the level');
          res.json({});
        });
        routes.get('/broken', (req) => {
          req.log.warn('about to fail');
          throw new Error('boom');
        });
      },
    );
    http = await listen(app, 0, '127.0.0.1');
    base = `http://127.0.0.1:${http.port}`;
  });

  after(() => http.close());

  it('writes no line for a request that succeeds', async () => {
    const response = await fetch(`${base}/quiet`, { headers: { 'x-request-id': 'warn-ok' } });
    expect(response.status).to.equal(200);
    expect(logLines.filter((line) => line.request_id === 'warn-ok')).to.deep.equal([]);
  });

  it('still writes every line of a failed request, each with its request id', async () => {
    const response = await fetch(`${base}/broken?x=1`, { headers: { 'x-request-id': 'warn-failed' } });
    expect(response.status).to.equal(500);
    const lines = logLines.filter((line) => line.request_id === 'warn-failed');
    expect(lines.map((line) => line.msg)).to.deep.equal([
      'about to fail',
      'request failed',
      'request errored',
    ]);
    for (const line of lines) expect(line.req).to.deep.equal({ method: 'GET', url: '/broken?x=1' });
    expect(lines[2]).to.include({ level: 50, route: '/broken' });
    expect(lines[2]?.res).to.deep.equal({ statusCode: 500 });
  });
});

describe('HTTP server from listen()', () => {
  it("makes requests and responses with the app's prototypes, so Express need not move them per request", async () => {
    const app = createHttpApp(
      { logger: createLogger('http-test', 'silent'), metrics: createMetrics('http-test'), serviceCredential },
      () => {},
    );
    const http = await listen(app, 0, '127.0.0.1');
    const onArrival: boolean[] = [];
    http.server.prependListener('request', (req, res) => {
      onArrival.push(Object.getPrototypeOf(req) === app.request, Object.getPrototypeOf(res) === app.response);
    });
    try {
      expect((await fetch(`http://127.0.0.1:${http.port}/health`)).status).to.equal(200);
      expect(onArrival).to.deep.equal([true, true]);
    } finally {
      await http.close();
    }
  });
});
