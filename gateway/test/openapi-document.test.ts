import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import {
  HistoryQuery,
  DepositBody,
  MoneyBody,
  NewUserBody,
  PaymentWebhookBody,
  PROBLEM_CONTENT_TYPE,
} from '@payments/contracts';
import { DEAD_LETTER_QUEUES } from '@payments/contracts/operations';
import { isPublicRoute, matchRoute, ROUTES } from '../src/domain/route-table.js';
import { buildOpenApiDocument } from '../src/openapi/openapi-document.js';
import { startGatewayUnderTest, type GatewayUnderTest } from './harness.js';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- a parsed document

const GATEWAY_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
/** Served by the gateway itself rather than routed to a service. */
const GATEWAY_PATHS = ['/', '/openapi.json', '/docs', '/health', '/ready', '/metrics'];

/** Every endpoint SPEC.md names, and the ones ARCHITECTURE.md adds. */
const SPECIFIED = [
  'post /auth/login',
  'post /login',
  'post /auth/refresh',
  'post /auth/logout',
  'post /user',
  'get /user/{id}',
  'put /user/{id}',
  'delete /user/{id}',
  'post /account',
  'get /account/{id}',
  'get /accounts',
  'get /account/{id}/balance',
  'get /account/{id}/transactions',
  'post /account/{id}/deposit',
  'post /account/{id}/withdraw',
  'post /account/{id}/transfer',
  'get /transactions',
  'get /transaction/{id}',
  'get /api/currencies',
  'get /api/currencies/{code}',
  'get /api/currencies/supported',
  'get /api/currencies/{code}/supported',
  'get /api/currencies/search',
  'get /api/currencies/region/{region}',
  'get /api/currencies/statistics',
  'get /api/currencies/default',
  'post /webhook/payment',
  'post /webhook/payment-status',
  'post /webhook/provider',
  'get /',
  'get /openapi.json',
  'get /docs',
];

const plain = (value: unknown) => JSON.parse(JSON.stringify(value)) as unknown;

function operations(document: Json): { method: string; path: string; operation: Json }[] {
  return Object.entries(document.paths as Json).flatMap(([template, item]) =>
    Object.entries(item as Json)
      .filter(([method]) => method !== 'parameters')
      .map(([method, operation]) => ({ method, path: template, operation: operation as Json })),
  );
}

describe('the OpenAPI document', () => {
  let gw: GatewayUnderTest;
  let document: Json;
  before(async () => {
    gw = await startGatewayUnderTest();
    const response = await gw.fetch('/openapi.json');
    expect(response.status).to.equal(200);
    expect(response.headers.get('content-type')).to.match(/^application\/json/);
    document = (await response.json()) as Json;
  });
  after(() => gw.stop());

  it('is served without a token at /openapi.json, as OpenAPI 3.1, and is the one the gateway builds', () => {
    expect(document.openapi).to.equal('3.1.0');
    expect(document).to.deep.equal(plain(buildOpenApiDocument()));
  });

  it('documents every endpoint of the specification', () => {
    const documented = operations(document).map(({ method, path }) => `${method} ${path}`);
    expect(documented).to.include.members(SPECIFIED);
  });

  it('documents only paths the gateway serves, and every routed prefix', () => {
    const paths = Object.keys(document.paths as Json);
    // A queue is one of a few names, each routed to its consumer; any other parameter stands for anything.
    const concrete = (template: string) =>
      (template.includes('{queue}') ? DEAD_LETTER_QUEUES : ['x']).map((queue) =>
        template.replace('{queue}', queue).replace(/\{[^}]+\}/g, 'x'),
      );
    for (const template of paths) {
      for (const path of concrete(template)) {
        expect(GATEWAY_PATHS.includes(template) || matchRoute(path) !== undefined, path).to.equal(true);
      }
    }
    for (const route of ROUTES) {
      const documented = paths.some((template) =>
        concrete(template).some((path) => matchRoute(path) === route),
      );
      expect(documented, route.pattern).to.equal(true);
    }
  });

  it('marks as public exactly the operations the gateway lets through without a token', () => {
    const SERVICE_ONLY = ['/ready', '/metrics'];
    for (const { method, path, operation } of operations(document)) {
      if (SERVICE_ONLY.includes(path)) {
        expect(operation.security, path).to.deep.equal([{ serviceToken: [] }]);
        continue;
      }
      const expected = isPublicRoute(method.toUpperCase(), path) && path !== '/auth/refresh';
      expect(operation.security === undefined ? 'bearer' : 'public', `${method} ${path}`).to.equal(
        expected ? 'public' : 'bearer',
      );
    }
    expect(document.security).to.deep.equal([{ bearerAuth: [] }]);
    expect(document.components.securitySchemes.bearerAuth).to.include({ type: 'http', scheme: 'bearer' });
  });

  it('uses the very schemas the services validate requests with', () => {
    const schemas = document.components.schemas as Json;
    expect(schemas.MoneyRequest).to.deep.equal(plain(MoneyBody));
    expect(schemas.NewUser).to.deep.equal(plain(NewUserBody));
    expect(schemas.PaymentWebhook).to.deep.equal(plain(PaymentWebhookBody));
    // A new e-mail or password needs the current one, so the documented request must accept it.
    expect(schemas.UserUpdate.properties).to.have.property('current_password');
    const deposit = document.paths['/account/{id}/deposit'].post as Json;
    expect(deposit.requestBody.content['application/json'].schema).to.deep.equal({
      $ref: '#/components/schemas/DepositRequest',
    });
    expect(schemas.DepositRequest).to.deep.equal(plain(DepositBody));
    const query = (document.paths['/transactions'].get.parameters as Json[]).filter(
      (parameter) => parameter.in === 'query',
    );
    // `metadata[key]=value`, a pattern property of the same schema, is one deepObject parameter.
    expect(query.map((parameter) => parameter.name)).to.deep.equal([
      ...Object.keys(HistoryQuery.properties),
      'metadata',
    ]);
    expect(query.at(-1)).to.deep.include({ style: 'deepObject', explode: true });
  });

  it('describes the version header, Idempotency-Key and the problem body of errors', () => {
    const deposit = document.paths['/account/{id}/deposit'] as Json;
    expect(deposit.parameters).to.deep.equal([{ $ref: '#/components/parameters/ApiVersion' }]);
    expect(deposit.post.parameters).to.deep.include({ $ref: '#/components/parameters/IdempotencyKey' });
    expect(Object.keys(deposit.post.responses)).to.include.members([
      '202',
      '400',
      '401',
      '404',
      '422',
      '429',
      '500',
    ]);
    const unprocessable = document.components.responses.UnprocessableEntity as Json;
    expect(unprocessable.content[PROBLEM_CONTENT_TYPE].schema).to.deep.equal({
      $ref: '#/components/schemas/Problem',
    });
    const webhookError = document.components.responses.WebhookBadRequest as Json;
    expect(webhookError.content['application/json'].schema).to.deep.equal({
      $ref: '#/components/schemas/WebhookError',
    });
    expect(document.paths['/webhook/payment'].post.responses['400']).to.deep.equal({
      $ref: '#/components/responses/WebhookBadRequest',
    });
  });

  it('passes redocly lint', function () {
    this.timeout(60_000);
    const directory = mkdtempSync(path.join(tmpdir(), 'openapi-'));
    try {
      const file = path.join(directory, 'openapi.json');
      writeFileSync(file, JSON.stringify(document));
      const cli = path.join(
        path.dirname(
          createRequire(path.join(GATEWAY_DIR, 'package.json')).resolve('@redocly/cli/package.json'),
        ),
        'bin/cli.js',
      );
      const lint = spawnSync(
        process.execPath,
        [cli, 'lint', file, '--config', path.join(GATEWAY_DIR, 'redocly.yaml'), '--format', 'summary'],
        {
          encoding: 'utf8',
          env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' },
        },
      );
      expect(lint.status, `${lint.stdout}\n${lint.stderr}`).to.equal(0);
      expect(`${lint.stdout}${lint.stderr}`).to.not.match(/^\s*(warning|error) /m);
    } finally {
      rmSync(directory, { recursive: true, force: true });
    }
  });
});
