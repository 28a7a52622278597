import { spawn } from 'node:child_process';
import { request as httpRequest } from 'node:http';
import path from 'node:path';
import { expect } from 'chai';
import { serviceDirectory, type ServiceName } from '@payments/infra';
import { closedPort, eventually, freePort, useSystem } from '@payments/testkit';
import {
  rawApi,
  signUp,
  signedProviderEvent,
  signUpWithAccount,
  type Customer,
} from '@payments/test-support';

const ROOT = path.resolve(import.meta.dirname, '..');
const MAX_BODY_BYTES = 4096;
const INTERNAL_CALLS = (userId: string) => [
  { method: 'GET', path: '/internal/audit' },
  // Would remove the victim's accounts if the ledger acted on it.
  { method: 'POST', path: `/internal/users/${userId}/removal` },
  { method: 'GET', path: '/internal/revocations' },
  // One nobody serves yet: the guard covers every /internal path, whatever a service adds later.
  { method: 'GET', path: '/internal/added-later' },
];

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

/** POSTs `chunks` with Transfer-Encoding: chunked, so the gateway sees no Content-Length to refuse up front. */
function postChunked(url: string, chunks: string[], headers: Record<string, string>) {
  return new Promise<{ status: number; body: string }>((resolve, reject) => {
    const request = httpRequest(
      url,
      {
        method: 'POST',
        headers: { ...headers, 'content-type': 'application/json', 'transfer-encoding': 'chunked' },
      },
      (response) => {
        let body = '';
        response.on('data', (chunk: Buffer) => (body += chunk.toString()));
        response.on('end', () => resolve({ status: response.statusCode ?? 0, body }));
      },
    );
    // The gateway answers and closes once the limit is passed, maybe before the last chunk is written.
    request.on('error', (error: NodeJS.ErrnoException) => {
      if (error.code !== 'EPIPE' && error.code !== 'ECONNRESET') reject(error);
    });
    for (const chunk of chunks) request.write(chunk);
    request.end();
  });
}

describe('what a stranger can reach: internal endpoints, probes, the unsigned webhook, chunked bodies', function () {
  this.timeout(120_000);
  let victim: Customer;

  const balanceOf = async (owner: typeof victim) =>
    (await owner.client.balances.get(owner.accountId)).balance;
  const historyOf = async (owner: typeof victim) =>
    (await owner.client.transactions.historyPage(owner.accountId)).data;
  const openAccount = () => signUpWithAccount(system.gatewayUrl);

  // Default settings but two: no sandbox (nothing confirms a deposit by itself) and a small body limit.
  const system = useSystem(
    {
      serviceEnv: {
        'provider-sandbox': { SANDBOX_ENABLED: 'false' },
        gateway: { MAX_BODY_BYTES: String(MAX_BODY_BYTES) },
      },
    },
    { booksBalance: true },
  );
  const api = rawApi(system);

  before(async () => {
    victim = await openAccount();
    const deposit = await victim.client.money.deposit(victim.accountId, { amount: 50, currency: 'USD' });
    expect(deposit.status).to.equal('pending');
    const confirmation = signedProviderEvent(
      'payment_intent.succeeded',
      deposit.id,
      5000,
      system.webhookSecret,
    );
    const webhook = await api.request('POST', '/webhook/provider', {
      raw: confirmation.body,
      headers: confirmation.headers,
    });
    expect(webhook.status).to.equal(200);
    await eventually(
      () => balanceOf(victim),
      (balance) => balance === 50,
    );
  });

  it("refuses every /internal path on every service's own port without the service credential", async () => {
    for (const [service, url] of Object.entries(system.urls)) {
      for (const { method, path: internal } of INTERNAL_CALLS(victim.userId)) {
        for (const headers of [
          {},
          bearer('guessed'),
          bearer(victim.token),
          bearer(`${system.serviceToken}x`),
        ]) {
          const response = await rawApi(url).request(method, internal, { headers });
          expect(response.status, `${service} ${internal} ${JSON.stringify(headers)}`).to.equal(401);
          // Nothing about the books or the victim leaks into the refusal: it is the same for every path.
          // webhook-ingest answers every error as { error }, as its callers expect.
          const problem = response.body as Record<string, unknown>;
          if (service === 'webhook-ingest') {
            expect(problem).to.deep.equal({ error: 'This endpoint needs the service credential' });
            continue;
          }
          expect(problem).to.include({
            code: 'AUTH_REQUIRED',
            detail: 'This endpoint needs the service credential',
          });
          expect(Object.keys(problem).sort()).to.deep.equal([
            'code',
            'detail',
            'instance',
            'status',
            'title',
            'type',
          ]);
        }
      }
    }
  });

  it('answers the internal endpoints to a caller with the service credential', async () => {
    const ledger = rawApi(system.urls.ledger);
    const audit = await ledger.get('/internal/audit', system.serviceToken);
    expect(audit.status).to.equal(200);
    expect(audit.body).to.include({ ok: true });
    // The credential lets a caller ask; the ledger still refuses to remove a user who holds money.
    const removal = await ledger.post(
      `/internal/users/${victim.userId}/removal`,
      undefined,
      system.serviceToken,
    );
    expect(removal.status).to.equal(422);
    const revocations = await rawApi(system.urls.identity).get('/internal/revocations', system.serviceToken);
    expect(revocations.status).to.equal(200);
    expect(revocations.body).to.have.property('data');
  });

  it("answers /metrics on the services' ports only with the service credential", async () => {
    for (const [service, url] of Object.entries(system.urls)) {
      const own = rawApi(url);
      expect((await own.get('/metrics')).status, service).to.equal(401);
      const metrics = await own.get('/metrics', system.serviceToken);
      expect(metrics.status, service).to.equal(200);
      expect(metrics.text, service).to.match(/^# HELP /m);
    }
  });

  it("keeps the gateway's /ready and /metrics for the service credential, /health public", async () => {
    expect((await api.get('/health')).status).to.equal(200);
    for (const probe of ['/ready', '/metrics', '/v1.1/ready']) {
      for (const token of [undefined, victim.token]) {
        const refused = await api.get(probe, token);
        expect(refused.status, probe).to.equal(401);
        expect(refused.body).to.include({ code: 'AUTH_REQUIRED' });
      }
      const answered = await api.request('GET', probe, { headers: bearer(system.serviceToken) });
      expect(answered.status, probe).to.equal(200);
    }
  });

  it('does not let anyone complete their own pending deposit through the unsigned webhook', async () => {
    const attacker = await openAccount();
    const deposit = await attacker.client.money.deposit(attacker.accountId, {
      amount: 1000,
      currency: 'USD',
    });
    expect(deposit.status).to.equal('pending');

    const webhook = await api.post('/webhook/payment', { payment_id: deposit.id, status: 'completed' });
    expect(webhook.status).to.equal(404);
    expect(webhook.body).to.deep.equal({ error: 'not found' });

    await new Promise((resolve) => setTimeout(resolve, 1000));
    expect(await balanceOf(attacker)).to.equal(0);
    expect((await attacker.client.transactions.get(deposit.id)).status).to.equal('pending');
  });

  it('cuts off a chunked body past MAX_BODY_BYTES with 413, and the ledger records nothing', async () => {
    const owner = await openAccount();
    const url = `${system.gatewayUrl}/account/${owner.accountId}/deposit`;
    const headers = bearer(owner.token);
    // A valid deposit request, padded with whitespace past the gateway's limit but far under the ledger's own.
    const padded = ['{"amount": 25, "currency": "USD"', ...Array(10).fill(' '.repeat(1024)), '}'];
    const refused = await postChunked(url, padded, headers);
    expect(refused.status, refused.body).to.equal(413);
    expect(JSON.parse(refused.body)).to.include({ code: 'PAYLOAD_TOO_LARGE' });

    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(await historyOf(owner)).to.deep.equal([]);
    expect(await balanceOf(owner)).to.equal(0);

    // The control: the same request in chunks within the limit is accepted.
    const accepted = await postChunked(url, ['{"amount": 25,', ' "currency": "USD"}'], headers);
    expect(accepted.status, accepted.body).to.equal(202);
    expect(await historyOf(owner)).to.have.length(1);
  });

  it('refuses webhook endpoints that point inside the system: loopback, the services’ own ports, metadata addresses', async () => {
    const attacker = await signUp(system.gatewayUrl);
    const ledgerPort = new URL(system.urls.ledger).port;
    const targets = [
      `http://127.0.0.1:${ledgerPort}/internal/audit`,
      `http://localhost:${ledgerPort}/internal/audit`,
      `http://[::ffff:127.0.0.1]:${ledgerPort}/internal/audit`,
      `http://2130706433:${ledgerPort}/`,
      'http://169.254.169.254/latest/meta-data/iam/security-credentials/',
      'http://10.0.0.1/',
      'file:///etc/passwd',
    ];
    for (const url of targets) {
      const response = await api.post(
        '/webhook-endpoints',
        { url, events: ['transaction.completed'] },
        attacker.token,
      );
      expect(response.status, `${url}: ${response.text}`).to.equal(400);
      expect(response.body.code).to.equal('VALIDATION_ERROR');
    }
    const listed = await attacker.client.webhookEndpoints.listPage();
    expect(listed.pagination.total).to.equal(0);
  });
});

/** Starts one service's process as a deployment would and resolves with how it ended and what it printed. */
function runService(service: ServiceName, env: Record<string, string>) {
  return new Promise<{ code: number | null; output: string }>((resolve) => {
    const child = spawn(
      process.execPath,
      ['--conditions=development', '--import', 'tsx', path.join(serviceDirectory(service), 'src/main.ts')],
      {
        cwd: ROOT,
        env: { PATH: process.env.PATH ?? '', LOG_LEVEL: 'warn', ...env },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    // A service that got past its checks would wait for PostgreSQL and RabbitMQ that are not there. Seven of them
    // start at once here, beside the other test files' systems: on a slow machine one took over 30 s to refuse.
    const timer = setTimeout(() => child.kill('SIGKILL'), 90_000);
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, output });
    });
  });
}

describe('services refuse to start unsafely', function () {
  this.timeout(120_000);
  const SERVICES: ServiceName[] = [
    'identity',
    'ledger',
    'currency',
    'webhook-ingest',
    'provider-sandbox',
    'gateway',
    'webhook-delivery',
  ];
  let nowhere: Record<string, string>;

  before(async () => {
    const closed = await closedPort();
    nowhere = {
      PORT: String(await freePort()),
      DATABASE_URL: `postgres://postgres@127.0.0.1:${closed}/nowhere`,
      AMQP_URL: `amqp://guest:guest@127.0.0.1:${closed}`,
      IDENTITY_URL: `http://127.0.0.1:${closed}`,
    };
  });

  it('each service exits 1 with one clear message when it would listen beyond loopback with a development secret', async () => {
    const results = await Promise.all(
      SERVICES.map((service) =>
        runService(service, { ...nowhere, HOST: '0.0.0.0', SANDBOX_ENABLED: 'true' }),
      ),
    );
    results.forEach(({ code, output }, i) => {
      expect(code, `${SERVICES[i]}: ${output}`).to.equal(1);
      expect(output, SERVICES[i]).to.match(
        /Refusing to start: HOST=0\.0\.0\.0 listens beyond loopback, but .*SERVICE_TOKEN.* public development value/,
      );
    });
    expect(results[0]?.output).to.contain('JWT_PRIVATE_KEY');
    expect(results[3]?.output).to.contain('WEBHOOK_SECRETS');
    expect(results[4]?.output).to.contain('SANDBOX_WEBHOOK_SECRET');
    expect(results[6]?.output).to.contain('WEBHOOK_ENDPOINT_SECRETS_KEYS');
  });

  it('production refuses the unsigned webhook, the sandbox, a missing service token, private webhook URLs and unencrypted endpoint secrets', async () => {
    const production = {
      ...nowhere,
      NODE_ENV: 'production',
      SERVICE_TOKEN: 'p'.repeat(64),
      WEBHOOK_SECRETS: `whsec_${'q'.repeat(40)}`,
    };
    const [unsigned, sandbox, tokenless, privateUrls, keyless] = await Promise.all([
      runService('webhook-ingest', { ...production, UNSIGNED_WEBHOOK_ENABLED: 'true' }),
      runService('provider-sandbox', { ...production, SANDBOX_ENABLED: 'true' }),
      runService('ledger', { ...production, SERVICE_TOKEN: '' }),
      runService('webhook-delivery', {
        ...production,
        WEBHOOK_ENDPOINT_SECRETS_KEYS: 'k'.repeat(40),
        WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
      }),
      runService('webhook-delivery', production),
    ]);
    expect(privateUrls.code, privateUrls.output).to.equal(1);
    expect(privateUrls.output).to.contain(
      'WEBHOOK_ALLOW_PRIVATE_URLS=true is refused when NODE_ENV=production',
    );
    expect(keyless.code, keyless.output).to.equal(1);
    expect(keyless.output).to.contain('WEBHOOK_ENDPOINT_SECRETS_KEYS is required when NODE_ENV=production');
    expect(unsigned.code, unsigned.output).to.equal(1);
    expect(unsigned.output).to.contain('UNSIGNED_WEBHOOK_ENABLED=true is refused when NODE_ENV=production');
    expect(sandbox.code, sandbox.output).to.equal(1);
    expect(sandbox.output).to.contain('SANDBOX_ENABLED=true is refused when NODE_ENV=production');
    expect(tokenless.code, tokenless.output).to.equal(1);
    expect(tokenless.output).to.contain('SERVICE_TOKEN is required when NODE_ENV=production');
  });
});
