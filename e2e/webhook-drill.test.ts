import { createServer, type Server } from 'node:http';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import {
  runPayments,
  startTestReceiver,
  useStarted,
  useSystem,
  DELIVERY_TO_RECEIVER,
} from '@payments/testkit';
import { verifyWebhookEvent, type WebhookDrill } from '@payments/client';
import { rawApi, signUp, type TestUser } from '@payments/test-support';
import { loadOpenApiValidator, type OpenApiValidator } from './openapi-validator.js';

/**
 * A receiver as the docs tell integrators to write one: it verifies each delivery with the client's verifier on the
 * raw body, answers 400 to anything that fails, processes each event id once and says so in its answer.
 */
interface CarefulReceiver {
  url: string;
  /** The endpoint secret it verifies with from now on. */
  trust(secret: string): void;
  /** The ids it acted on, in order. */
  processed: string[];
  bodies: string[];
  close(): Promise<void>;
}

async function startCarefulReceiver(): Promise<CarefulReceiver> {
  const seen = new Set<string>();
  const state = { secret: '', processed: [] as string[], bodies: [] as string[] };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      state.bodies.push(raw);
      Promise.resolve()
        .then(() => verifyWebhookEvent(raw, req.headers['stripe-signature'], state.secret))
        .then(
          (event) => {
            const duplicate = seen.has(event.id);
            if (!duplicate) {
              seen.add(event.id);
              state.processed.push(event.id);
            }
            res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ duplicate }));
          },
          (error: Error) => res.writeHead(400).end(error.message),
        );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}/careful`,
    trust: (secret) => {
      state.secret = secret;
    },
    processed: state.processed,
    bodies: state.bodies,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

const outcomes = (drill: WebhookDrill) => Object.fromEntries(drill.cases.map((c) => [c.case, c.outcome]));

describe('webhook receiver drill, through the gateway', function () {
  this.timeout(180_000);
  let openapi: OpenApiValidator;

  const system = useSystem(
    { serviceEnv: { 'webhook-delivery': { ...DELIVERY_TO_RECEIVER, DELIVERY_TIMEOUT_MS: '2000' } } },
    { admin: true },
  );
  const api = rawApi(system);
  const naive = useStarted(startTestReceiver);
  const careful = useStarted(startCarefulReceiver);

  before(async () => {
    openapi = await loadOpenApiValidator(system.gatewayUrl);
  });

  const register = async (user: TestUser, url: string, events: string[]) => {
    const created = await api.post('/webhook-endpoints', { url, events }, user.token);
    expect(created.status, created.text).to.equal(201);
    return created.body as { id: string; secret: string };
  };

  const drill = async (token: string, endpointId: string) => {
    const path = `/webhook-endpoints/${endpointId}/drill`;
    const response = await api.post(path, undefined, token);
    openapi.check('POST', path, response);
    return response;
  };

  it('passes every case for a receiver that verifies with the client and processes each event once', async () => {
    const user = await signUp(system.gatewayUrl);
    const endpoint = await register(user, careful.url, ['transaction.completed', 'account.created']);
    careful.trust(endpoint.secret);
    // A real account.created reaches the receiver first: the user's most recent event type.
    await user.client.accounts.open({ currency: 'USD' });
    const realEvents = await (async () => {
      for (let i = 0; i < 100 && careful.processed.length === 0; i += 1) {
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
      return [...careful.processed];
    })();
    expect(realEvents).to.have.length(1);

    const response = await drill(user.token, endpoint.id);
    expect(response.status, response.text).to.equal(200);
    const report = response.body as WebhookDrill;
    expect(report.result, JSON.stringify(report.cases, null, 2)).to.equal('passed');
    expect(report.event_types[0]).to.equal('account.created');
    expect(outcomes(report)).to.deep.equal({
      valid: 'passed',
      duplicate: 'passed',
      out_of_order_later: 'passed',
      out_of_order_earlier: 'passed',
      stale_timestamp: 'passed',
      wrong_signature: 'passed',
    });
    const byCase = Object.fromEntries(report.cases.map((c) => [c.case, c]));
    expect(byCase.duplicate!.event_id).to.equal(byCase.valid!.event_id);
    expect(byCase.out_of_order_later!.created).to.be.greaterThan(byCase.out_of_order_earlier!.created);
    expect(byCase.stale_timestamp!.status_code).to.equal(400);
    expect(byCase.wrong_signature!.status_code).to.equal(400);

    // Acted on once each: the valid event and the two out of order; never the duplicate, the stale or the forged.
    const drilled = careful.processed.slice(1);
    expect(drilled).to.deep.equal([
      byCase.valid!.event_id,
      byCase.out_of_order_later!.event_id,
      byCase.out_of_order_earlier!.event_id,
    ]);
    // Every drill event says what it is and is nothing a handler of a real event would take.
    const sent = careful.bodies.slice(1).map((body) => JSON.parse(body) as Record<string, unknown>);
    expect(sent).to.have.length(6);
    for (const event of sent) {
      expect(event).to.include({ drill: true, livemode: false, object: 'event' });
      expect(event.id).to.match(/^evt_drill_[0-9a-f]{24}$/);
      expect(event.type).to.match(/^drill\.(account\.created|transaction\.completed)$/);
      expect((event.data as { object: { id: string } }).object.id).to.equal(report.id);
    }
    expect(sent[1]).to.deep.equal(sent[0]);
  });

  it('fails the stale and the forged event for a receiver that accepts everything', async () => {
    const user = await signUp(system.gatewayUrl);
    const endpoint = await register(user, `${naive.url}/naive`, ['transaction.completed', 'user.updated']);
    const response = await drill(user.token, endpoint.id);
    expect(response.status, response.text).to.equal(200);
    const report = response.body as WebhookDrill;
    expect(report.result).to.equal('failed');
    // Nothing delivered to this user yet: the endpoint's own event types.
    expect(report.event_types).to.deep.equal(['transaction.completed', 'user.updated']);
    expect(outcomes(report)).to.deep.equal({
      valid: 'passed',
      duplicate: 'unconfirmed',
      out_of_order_later: 'passed',
      out_of_order_earlier: 'passed',
      stale_timestamp: 'failed',
      wrong_signature: 'failed',
    });
    const stale = report.cases.find((c) => c.case === 'stale_timestamp')!;
    expect(stale.signed_at).to.be.at.most(Math.floor(Date.now() / 1000) - 2 * report.tolerance_seconds);
    expect(naive.calls('/naive')).to.have.length(6);
  });

  it("answers 404 for another user's endpoint and 403 to an admin, and sends nothing", async () => {
    const owner = await signUp(system.gatewayUrl);
    const stranger = await signUp(system.gatewayUrl);
    const endpoint = await register(owner, `${naive.url}/not-yours`, ['transaction.completed']);
    const refused = await drill(stranger.token, endpoint.id);
    expect(refused.status, refused.text).to.equal(404);
    expect(refused.body.code).to.equal('RESOURCE_NOT_FOUND');
    const byAdmin = await drill(system.admin.token, endpoint.id);
    expect(byAdmin.status, byAdmin.text).to.equal(403);
    expect((await drill(stranger.token, '00000000-0000-4000-8000-000000000000')).status).to.equal(404);
    expect(naive.calls('/not-yours')).to.have.length(0);
  });

  it('runs one drill per endpoint at a time: of two at once, one is 429 with Retry-After and sends nothing', async () => {
    const user = await signUp(system.gatewayUrl);
    const endpoint = await register(user, `${naive.url}/limited`, ['transaction.completed']);
    const [first, second] = await Promise.all([
      drill(user.token, endpoint.id),
      drill(user.token, endpoint.id),
    ]);
    const statuses = [first.status, second.status].sort();
    expect(statuses).to.deep.equal([200, 429]);
    const limited = first.status === 429 ? first : second;
    expect(limited.body.code).to.equal('RATE_LIMIT_EXCEEDED');
    expect(Number(limited.headers.get('retry-after'))).to.be.within(1, 60);
    const again = await drill(user.token, endpoint.id);
    expect(again.status).to.equal(429);
    expect(naive.calls('/limited')).to.have.length(6);
  });

  it('drills from the CLI and prints a row per case (`payments webhooks drill`)', async () => {
    const user = await signUp(system.gatewayUrl);
    const configHome = await mkdtemp(path.join(tmpdir(), 'payments-cli-'));
    const payments = async (...args: string[]) => {
      const run = await runPayments(args, {
        PAYMENTS_API_URL: system.gatewayUrl,
        XDG_CONFIG_HOME: configHome,
      });
      return { code: run.code, stdout: run.stdout.trim(), stderr: run.stderr.trim() };
    };
    try {
      const login = await payments('login', '--username', user.username, '--password', user.password);
      expect(login.code, login.stderr).to.equal(0);
      const endpoint = await register(user, `${naive.url}/cli-drill`, ['transaction.completed']);
      const run = await payments('webhooks', 'drill', endpoint.id);
      expect(run.code, run.stderr).to.equal(1);
      expect(run.stdout).to.match(/valid\W+evt_drill_\w+\W+2xx\W+200\W+passed/);
      expect(run.stdout).to.match(/stale_timestamp\W+evt_drill_\w+\W+non-2xx\W+200\W+failed/);
      expect(run.stdout).to.match(/wrong_signature\W+evt_drill_\w+\W+non-2xx\W+200\W+failed/);
      expect(run.stdout).to.match(/duplicate\W+evt_drill_\w+\W+2xx\W+200\W+unconfirmed/);
      expect(run.stderr).to.match(/failed/);

      const other = await register(user, careful.url, ['transaction.completed']);
      careful.trust(other.secret);
      const passing = await payments('webhook', 'drill', other.id, '--json');
      expect(passing.code, passing.stderr).to.equal(0);
      expect((JSON.parse(passing.stdout) as WebhookDrill).result).to.equal('passed');
      const limited = await payments('webhooks', 'drill', other.id);
      expect(limited.code).to.equal(6);
    } finally {
      await rm(configHome, { recursive: true, force: true });
    }
  });
});
