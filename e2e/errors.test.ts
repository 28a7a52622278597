import { randomBytes, randomUUID } from 'node:crypto';
import { expect } from 'chai';
import pg from 'pg';
import { ERRORS, problemType, type ErrorCode } from '@payments/contracts';
import {
  eventually,
  findInfrastructure,
  startTcpProxy,
  viaProxy,
  type TcpProxy,
  useSystem,
} from '@payments/testkit';
import { rawApi, signUp, type ApiResponse, type TestUser } from '@payments/test-support';
import { loadOpenApiValidator, type OpenApiValidator } from './openapi-validator.js';

const LOGIN_MAX_FAILURES = 3;

describe('every error reaches the client in one shape, through the gateway', function () {
  this.timeout(120_000);
  let openapi: OpenApiValidator;
  let line: TcpProxy;
  let ledgerDatabase: URL;
  let owner: TestUser;
  let stranger: TestUser;
  let accountId: string;
  const walked = new Set<ErrorCode>();

  const system = useSystem(async () => {
    const { postgresUrl } = await findInfrastructure();
    const server = new URL(postgresUrl);
    // The ledger reaches PostgreSQL through a hop the test can cut, so its database can fail for real.
    line = await startTcpProxy({ host: server.hostname, port: Number(server.port || 5432) });
    ledgerDatabase = new URL(viaProxy(postgresUrl, line));
    ledgerDatabase.pathname = `/payments_ledger_errors_${randomBytes(4).toString('hex')}`;
    return {
      serviceEnv: {
        'provider-sandbox': { SANDBOX_ENABLED: 'false' },
        'webhook-ingest': { UNSIGNED_WEBHOOK_ENABLED: 'true' },
        // Exchange rates kept 1 s, and served stale 1 s more while the currency service is down.
        ledger: {
          // A database of its own, through the proxy, which the ledger creates and migrates as that URL's role.
          DATABASE_URL: ledgerDatabase.toString(),
          MIGRATION_DATABASE_URL: '',
          RATE_CACHE_TTL_SECONDS: '1',
          RATE_STALE_GRACE_SECONDS: '1',
        },
        identity: { LOGIN_MAX_FAILURES: String(LOGIN_MAX_FAILURES) },
      },
    };
  });
  const api = rawApi(system);

  before(async () => {
    openapi = await loadOpenApiValidator(system.gatewayUrl);
    // Every login happens here: the failed-login test below locks this address out of logging in.
    owner = await signUp(system.gatewayUrl);
    stranger = await signUp(system.gatewayUrl);
    accountId = (await owner.client.accounts.open({ currency: 'USD' })).id;
  });

  // After the system has stopped: its ledger's database was its own, through the hop.
  after(async () => {
    await line?.close();
    const admin = new pg.Client({ connectionString: (await findInfrastructure()).postgresUrl });
    await admin.connect();
    await admin.query(`DROP DATABASE IF EXISTS "${ledgerDatabase.pathname.slice(1)}" WITH (FORCE)`);
    await admin.end();
  });

  /** The exact problem+json shape, as documented, for `code`; `instance` is the path the client used. */
  const expectProblem = (
    response: ApiResponse,
    code: ErrorCode,
    instance: string,
    options: { errors?: boolean; method?: string; versioned?: boolean } = {},
  ) => {
    const { status, title } = ERRORS[code];
    walked.add(code);
    expect(response.status, response.text).to.equal(status);
    expect(response.headers.get('content-type')).to.match(/^application\/problem\+json/);
    expect(response.headers.get('x-request-id')).to.be.a('string');
    if (options.versioned !== false) expect(response.headers.get('x-api-version')).to.match(/^1\.[01]$/);
    const keys = ['type', 'title', 'status', 'detail', 'instance', 'code'];
    expect(response.body).to.have.all.keys(options.errors ? [...keys, 'errors'] : keys);
    expect(response.body).to.include({ type: problemType(code), title, status, instance, code });
    expect(response.body.detail).to.be.a('string').with.length.greaterThan(0);
    if (options.errors) {
      expect(response.body.errors).to.be.an('array').with.length.greaterThan(0);
      for (const error of response.body.errors) {
        expect(error).to.have.all.keys('field', 'message');
        expect(error.field).to.be.a('string');
        expect(error.message).to.be.a('string');
      }
    }
    expect(response.text).to.not.match(/ at .*\.ts:|node_modules|ECONN|127\.0\.0\.1|localhost/);
    if (options.method) openapi.check(options.method, instance, response);
  };

  it('AUTH_REQUIRED: a protected path without a token, instance with the version prefix', async () => {
    const response = await api.get('/v1.1/accounts');
    expectProblem(response, 'AUTH_REQUIRED', '/v1.1/accounts', { method: 'GET' });
    expect(response.headers.get('x-api-version')).to.equal('1.1');
  });

  it('AUTH_REQUIRED: a token that is not one', async () => {
    expectProblem(await api.get('/accounts', 'not.a.token'), 'AUTH_REQUIRED', '/accounts', { method: 'GET' });
  });

  it('INVALID_CREDENTIALS: a wrong password', async () => {
    const response = await api.post('/auth/login', {
      username: owner.username,
      password: 'not-the-password',
    });
    expectProblem(response, 'INVALID_CREDENTIALS', '/auth/login', { method: 'POST' });
  });

  it('ACCESS_DENIED: another user’s account', async () => {
    const response = await api.get(`/account/${accountId}`, stranger.token);
    expectProblem(response, 'ACCESS_DENIED', `/account/${accountId}`, { method: 'GET' });
  });

  it('RESOURCE_NOT_FOUND: a transaction that does not exist, and a malformed id', async () => {
    const missing = randomUUID();
    const response = await api.get(`/transaction/${missing}`, owner.token);
    expectProblem(response, 'RESOURCE_NOT_FOUND', `/transaction/${missing}`, { method: 'GET' });
    const malformed = await api.get('/v1.0/account/not-a-uuid', owner.token);
    expectProblem(malformed, 'RESOURCE_NOT_FOUND', '/v1.0/account/not-a-uuid', { method: 'GET' });
  });

  it('DUPLICATE_ENTRY: a username that is taken, naming the field', async () => {
    const response = await api.post('/user', {
      username: owner.username,
      email: `other-${owner.username}@example.com`,
      password: 'long-enough-password',
    });
    expectProblem(response, 'DUPLICATE_ENTRY', '/user', { errors: true, method: 'POST' });
    expect(response.body.errors).to.deep.include({ field: 'username', message: 'is already taken' });
  });

  it('INSUFFICIENT_FUNDS: a withdrawal the balance does not cover', async () => {
    const response = await api.post(
      `/account/${accountId}/withdraw`,
      { amount: 10, currency: 'USD' },
      owner.token,
    );
    expectProblem(response, 'INSUFFICIENT_FUNDS', `/account/${accountId}/withdraw`, { method: 'POST' });
  });

  it('INVALID_CURRENCY: an account in an unsupported currency, listing the supported ones', async () => {
    const response = await api.post('/account', { currency: 'XYZ' }, owner.token);
    expectProblem(response, 'INVALID_CURRENCY', '/account', { errors: true, method: 'POST' });
    expect(response.body.detail).to.include('USD').and.include('EUR');
  });

  it('INVALID_CURRENCY: a deposit in another currency than the account’s', async () => {
    const response = await api.post(
      `/account/${accountId}/deposit`,
      { amount: 10, currency: 'EUR' },
      owner.token,
    );
    expectProblem(response, 'INVALID_CURRENCY', `/account/${accountId}/deposit`, {
      errors: true,
      method: 'POST',
    });
  });

  it('VALIDATION_ERROR: invalid fields, each named in errors[]', async () => {
    const response = await api.post('/v1.1/user', { username: 'a', email: 'not-an-email' });
    expectProblem(response, 'VALIDATION_ERROR', '/v1.1/user', { errors: true, method: 'POST' });
    const fields = (response.body.errors as { field: string }[]).map((error) => error.field);
    expect(fields).to.include.members(['username', 'email', 'password']);
  });

  it('VALIDATION_ERROR: an invalid query parameter', async () => {
    const response = await api.get('/transactions?limit=0', owner.token);
    expectProblem(response, 'VALIDATION_ERROR', '/transactions', { errors: true, method: 'GET' });
  });

  it('VALIDATION_ERROR: an unsupported API version, listing the supported ones', async () => {
    const response = await api.get('/v2.0/accounts', owner.token);
    expectProblem(response, 'VALIDATION_ERROR', '/v2.0/accounts', { errors: true, versioned: false });
    expect(response.body.detail).to.include('1.0, 1.1');
  });

  it('400 for a body that is not valid JSON', async () => {
    const response = await api.request('POST', '/account', {
      raw: '{"currency": ',
      token: owner.token,
      headers: { 'content-type': 'application/json' },
    });
    expectProblem(response, 'VALIDATION_ERROR', '/account', { method: 'POST' });
  });

  it('413 for a body that is too large', async () => {
    const response = await api.post(
      '/account',
      { currency: 'USD', metadata: { pad: 'x'.repeat(300_000) } },
      owner.token,
    );
    expectProblem(response, 'PAYLOAD_TOO_LARGE', '/account', { method: 'POST' });
  });

  it('415 for a body that is not JSON on a JSON endpoint', async () => {
    const response = await api.request('POST', `/v1.1/account/${accountId}/deposit`, {
      raw: 'amount=10&currency=USD',
      token: owner.token,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    expectProblem(response, 'UNSUPPORTED_MEDIA_TYPE', `/v1.1/account/${accountId}/deposit`, {
      method: 'POST',
    });
  });

  it('404 for a route nobody serves', async () => {
    expectProblem(await api.get('/v1.1/nothing/here'), 'RESOURCE_NOT_FOUND', '/v1.1/nothing/here');
    // Not routed even for a caller with the service credential (without it, a 401 says nothing more).
    const internal = await api.request('GET', '/internal/audit', {
      headers: { authorization: `Bearer ${system.serviceToken}` },
    });
    expectProblem(internal, 'RESOURCE_NOT_FOUND', '/internal/audit');
  });

  it('webhooks keep the { error } body', async () => {
    const response = await api.post('/webhook/payment', { payment_id: 'x', status: 'teleported' });
    expect(response.status).to.equal(400);
    expect(response.body).to.deep.equal({ error: 'invalid payload' });
    openapi.check('POST', '/webhook/payment', response);
  });

  it('RATE_LIMIT_EXCEEDED: too many failed logins, with Retry-After', async () => {
    const answers: ApiResponse[] = [];
    for (let attempt = 0; attempt <= LOGIN_MAX_FAILURES; attempt += 1) {
      answers.push(
        await api.post('/auth/login', { username: stranger.username, password: `wrong-${attempt}` }),
      );
      if (answers.at(-1)?.status === 429) break;
    }
    const refused = answers.at(-1) as ApiResponse;
    expect(answers.slice(0, -1).map((answer) => answer.status)).to.satisfy((statuses: number[]) =>
      statuses.every((status) => status === 401),
    );
    expectProblem(refused, 'RATE_LIMIT_EXCEEDED', '/auth/login', { method: 'POST' });
    expect(Number(refused.headers.get('retry-after'))).to.be.greaterThan(0);
    const correct = await api.post('/auth/login', {
      username: stranger.username,
      password: stranger.password,
    });
    expectProblem(correct, 'RATE_LIMIT_EXCEEDED', '/auth/login', { method: 'POST' });
  });

  it('INTERNAL_ERROR: the ledger’s database fails (a table it needs is gone), and nothing internal leaks', async () => {
    // Straight to the database, not through the hop: renamed away, the table fails every query on it (42P01).
    const direct = new URL(ledgerDatabase);
    const server = new URL((await findInfrastructure()).postgresUrl);
    direct.hostname = server.hostname;
    direct.port = server.port;
    const admin = new pg.Client({ connectionString: direct.toString() });
    await admin.connect();
    try {
      await admin.query('ALTER TABLE accounts RENAME TO accounts_away');
      const response = await api.get('/v1.1/accounts', owner.token);
      expectProblem(response, 'INTERNAL_ERROR', '/v1.1/accounts', { method: 'GET' });
      expect(response.body.detail).to.equal('An unexpected error occurred');
      expect(response.text).not.to.match(/accounts_away|relation|42P01|SELECT/i);
    } finally {
      await admin.query('ALTER TABLE accounts_away RENAME TO accounts');
      await admin.end();
    }
    const recovered = await api.get('/accounts', owner.token);
    expect(recovered.status, recovered.text).to.equal(200);
  });

  it('SERVICE_UNAVAILABLE: the ledger’s database goes away (a failover), with Retry-After, nothing internal leaked', async () => {
    line.cut();
    try {
      const response = await api.get('/v1.1/accounts', owner.token);
      expectProblem(response, 'SERVICE_UNAVAILABLE', '/v1.1/accounts', { method: 'GET' });
      expect(response.headers.get('retry-after')).to.equal('1');
      expect(response.text).not.to.match(/terminated|ECONN|SELECT|127\.0\.0\.1/i);
    } finally {
      line.restore();
    }
    // The pool may still hold connections the cut ended: each answers 503 once, then the ledger serves again.
    let recovered = await api.get('/accounts', owner.token);
    for (let tries = 0; recovered.status === 503 && tries < 20; tries += 1)
      recovered = await api.get('/accounts', owner.token);
    expect(recovered.status, recovered.text).to.equal(200);
  });

  it('503 SERVICE_UNAVAILABLE with Retry-After, at once, when a service is down', async () => {
    // A conversion quoted while the currency service is up: the ledger caches the rate (and the account is empty).
    const euros = await owner.client.accounts.open({ currency: 'EUR' });
    const transfer = () =>
      api.post(
        `/v1.1/account/${accountId}/transfer`,
        { amount: 900_000, currency: 'USD', to_account_id: euros.id },
        owner.token,
      );
    const quoted = await transfer();
    expect(quoted.body.code, quoted.text).to.equal('INSUFFICIENT_FUNDS');

    await system.kill('currency');
    const started = Date.now();
    const response = await api.get('/v1.1/api/currencies/USD');
    expect(Date.now() - started).to.be.lessThan(5000);
    expectProblem(response, 'SERVICE_UNAVAILABLE', '/v1.1/api/currencies/USD', { method: 'GET' });
    expect(response.headers.get('retry-after')).to.match(/^\d+$/);

    // Nobody converts money at a rate the currency service stopped vouching for: past its grace, a 503.
    const stale = await eventually(transfer, (answer) => answer.status !== 422, {
      timeoutMs: 10_000,
      intervalMs: 200,
      what: 'the ledger refusing a conversion at a stale rate',
    });
    expectProblem(stale, 'SERVICE_UNAVAILABLE', `/v1.1/account/${accountId}/transfer`, { method: 'POST' });
  });

  it('walked every error code of the specification', () => {
    expect([...walked]).to.include.members([
      'AUTH_REQUIRED',
      'INVALID_CREDENTIALS',
      'ACCESS_DENIED',
      'RESOURCE_NOT_FOUND',
      'DUPLICATE_ENTRY',
      'INSUFFICIENT_FUNDS',
      'INVALID_CURRENCY',
      'VALIDATION_ERROR',
      'RATE_LIMIT_EXCEEDED',
      'INTERNAL_ERROR',
    ]);
  });
});
