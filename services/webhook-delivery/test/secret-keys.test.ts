import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import Stripe from 'stripe';
import { createLogger, loadConfig, type RunningService } from '@payments/service-kit';
import { eventually, useStarted } from '@payments/testkit';
import { startWebhookDelivery, WebhookDeliveryConfigSchema } from '../src/index.js';
import {
  completedDeposit,
  startDeliveryHarness,
  type ApiResponse,
  type TestUser,
} from './support/delivery-harness.js';

const RESEAL = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../src/reseal-secrets.ts');
const TSX = createRequire(import.meta.url).resolve('tsx');
const stripe = new Stripe('sk_test_unused');

const OLD_KEY = 'old-endpoint-secrets-key-0123456789abcdef';
const NEW_KEY = 'new-endpoint-secrets-key-0123456789abcdef';
const LOST_KEY = 'lost-endpoint-secrets-key-0123456789abcdef';

interface Service {
  call(method: string, path: string, user: TestUser, body?: unknown): Promise<ApiResponse>;
  stop(): Promise<void>;
}

describe('retiring an endpoint secrets key (HTTP, RabbitMQ, Postgres)', function () {
  this.timeout(90_000);
  let running: Service | null = null;

  const harness = useStarted(() => startDeliveryHarness({ transport: 'amqp', noService: true }));
  afterEach(async () => {
    await running?.stop();
    running = null;
  });

  /** The service on the harness's database and queue, with these keys (the first seals). */
  const startWith = async (...keys: string[]): Promise<Service> => {
    await running?.stop();
    const env = { ...harness.env, WEBHOOK_ENDPOINT_SECRETS_KEYS: keys.join(',') };
    const service: RunningService = await startWebhookDelivery(loadConfig(WebhookDeliveryConfigSchema, env), {
      logger: createLogger('webhook-delivery-keys-test', 'silent'),
    });
    running = {
      async call(method, path, user, body) {
        const response = await fetch(`${service.url}${path}`, {
          method,
          headers: {
            authorization: `Bearer ${user.token}`,
            ...(body === undefined ? {} : { 'content-type': 'application/json' }),
          },
          body: body === undefined ? undefined : JSON.stringify(body),
        });
        return { status: response.status, headers: response.headers, body: await response.json() };
      },
      stop: () => service.stop(),
    };
    return running;
  };

  const register = async (service: Service, user: TestUser, path: string) => {
    const created = await service.call('POST', '/webhook-endpoints', user, {
      url: `${harness.receiver.url}${path}`,
      events: ['transaction.completed'],
    });
    expect(created.status, JSON.stringify(created.body)).to.equal(201);
    return created.body as { id: string; secret: string };
  };

  /** Runs the package's `reseal-secrets` entry as an operator would, with these keys. */
  const reseal = (...keys: string[]) =>
    new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve, reject) => {
      const child = spawn(process.execPath, ['--conditions=development', '--import', TSX, RESEAL], {
        env: {
          ...process.env,
          ...harness.env,
          WEBHOOK_ENDPOINT_SECRETS_KEYS: keys.join(','),
          LOG_LEVEL: 'warn',
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      const out = { stdout: '', stderr: '' };
      child.stdout.on('data', (chunk: Buffer) => (out.stdout += chunk.toString()));
      child.stderr.on('data', (chunk: Buffer) => (out.stderr += chunk.toString()));
      child.once('error', reject);
      child.once('exit', (code) => resolve({ code, ...out }));
    });

  /** Each stored secret's key id (`enc:v1:<key id>:…`), current and previous. */
  const keyIdsOf = async (endpointIds: string[]) =>
    (
      (await harness
        .db('webhook_endpoints')
        .whereIn('id', endpointIds)
        .select('secret', 'previous_secret')) as { secret: string; previous_secret: string | null }[]
    )
      .flatMap((row) => [row.secret, row.previous_secret])
      .filter((value): value is string => value !== null)
      .map((value) => value.split(':')[2]);

  it('re-seals every secret, current and previous, under the newest key; then the old key is dropped and nothing breaks', async () => {
    const owner = harness.newUser();
    const other = harness.newUser();
    const before = await startWith(OLD_KEY);
    const rotating = await register(before, owner, '/rotating');
    const rotated = await before.call('POST', `/webhook-endpoints/${rotating.id}/rotate-secret`, owner, {
      grace_period_seconds: 3600,
    });
    expect(rotated.status).to.equal(200);
    const plain = await register(before, other, '/plain');
    await before.stop();
    running = null;
    const [oldId] = await keyIdsOf([rotating.id]);
    expect(await keyIdsOf([rotating.id, plain.id])).to.deep.equal([oldId, oldId, oldId]);

    const resealed = await reseal(NEW_KEY, OLD_KEY);
    expect(resealed.code, resealed.stderr).to.equal(0);
    expect(resealed.stdout).to.match(/Re-sealed the secrets of \d+ endpoint\(s\)/);
    const ids = await keyIdsOf([rotating.id, plain.id]);
    expect(ids).to.have.length(3);
    expect(new Set(ids).size, 'one key seals them all').to.equal(1);
    expect(ids[0]).to.not.equal(oldId);
    const again = await reseal(NEW_KEY, OLD_KEY);
    expect(again.code).to.equal(0);
    expect(again.stdout).to.match(/Re-sealed the secrets of 0 endpoint\(s\)/);

    // The old key is gone from the configuration: every endpoint still reads and signs.
    const after = await startWith(NEW_KEY);
    const listed = await after.call('GET', '/webhook-endpoints', owner);
    expect(listed.status).to.equal(200);
    expect(listed.body.data.map((e: { id: string }) => e.id)).to.deep.equal([rotating.id]);
    expect((await after.call('GET', `/webhook-endpoints/${plain.id}`, other)).status).to.equal(200);
    await harness.publish('TransactionCompleted', completedDeposit(owner.id));
    const [call] = await harness.receiver.waitForCalls('/rotating');
    const header = call!.headers['stripe-signature'] as string;
    for (const secret of [rotating.secret, rotated.body.secret as string]) {
      expect(() => stripe.webhooks.constructEvent(call!.body, header, secret)).to.not.throw();
    }
  });

  it("fails only the endpoint no configured key opens: the owner's list shows the others, its GET and its deliveries say why, rotating mends it", async () => {
    const owner = harness.newUser();
    const lost = await register(await startWith(LOST_KEY), owner, '/lost');
    const kept = await register(await startWith(OLD_KEY), owner, '/kept');

    const listed = await running!.call('GET', '/webhook-endpoints', owner);
    expect(listed.status).to.equal(200);
    expect(listed.body.data.map((e: { id: string }) => e.id).sort()).to.deep.equal([lost.id, kept.id].sort());
    expect((await running!.call('GET', `/webhook-endpoints/${kept.id}`, owner)).status).to.equal(200);
    const broken = await running!.call('GET', `/webhook-endpoints/${lost.id}`, owner);
    expect(broken.status).to.equal(500);
    expect(broken.headers.get('content-type')).to.match(/^application\/problem\+json/);
    expect(broken.body.code).to.equal('INTERNAL_ERROR');
    expect(broken.body.detail)
      .to.match(/cannot sign its deliveries, which wait/)
      .and.to.match(/WEBHOOK_ENDPOINT_SECRETS_KEYS no longer holds/);

    // The command, with the service's keys, names it and fails; the other is sealed under the first key already.
    const resealed = await reseal(OLD_KEY);
    expect(resealed.code).to.equal(1);
    expect(resealed.stderr).to.include(`webhook endpoint ${lost.id}: Its signing secret is sealed under key`);
    expect(resealed.stderr).to.not.include(kept.id);
    expect(resealed.stdout).to.match(
      /of 0 endpoint\(s\) under the first key; \d+ already were; \d+ could not be/,
    );

    await harness.publish('TransactionCompleted', completedDeposit(owner.id));
    await harness.receiver.waitForCalls('/kept', (calls) => calls.length === 1);
    const [waiting] = await eventually(
      async () =>
        (await running!.call('GET', `/webhook-endpoints/${lost.id}/deliveries`, owner)).body.data as {
          attempts: number;
          last_error: string | null;
        }[],
      (data) => data.length === 1 && data[0]!.attempts >= 1,
      { timeoutMs: 10_000 },
    );
    expect(waiting).to.include({ status: 'pending', last_status_code: null });
    expect(waiting?.last_error).to.match(/^not sent: the endpoint cannot sign it\. .*no longer holds/);
    expect(harness.receiver.calls('/lost')).to.deep.equal([]);

    const rotated = await running!.call('POST', `/webhook-endpoints/${lost.id}/rotate-secret`, owner);
    expect(rotated.status).to.equal(200);
    // The secret nobody can open signs nothing, so no grace period keeps it.
    expect(rotated.body.previous_secret_expires_at).to.equal(null);
    expect((await running!.call('GET', `/webhook-endpoints/${lost.id}`, owner)).status).to.equal(200);
    const [call] = await harness.receiver.waitForCalls('/lost', (calls) => calls.length > 0, {
      timeoutMs: 15_000,
    });
    const header = call!.headers['stripe-signature'] as string;
    expect(header.match(/v1=/g)).to.have.length(1);
    expect(() => stripe.webhooks.constructEvent(call!.body, header, rotated.body.secret)).to.not.throw();
  });
});
