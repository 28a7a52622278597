import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { createEvent } from '@payments/contracts';
import {
  authRequired,
  createHttpApp,
  createLogger,
  createMemoryBus,
  createMetrics,
  deadLetterRoutes,
  listen,
  PermanentEventError,
  requireAuth,
  resolveServiceCredential,
  type AdminAction,
  type AuthClaims,
  type Consumer,
  type EventBus,
  type HttpServer,
} from '@payments/service-kit';
import { eventually } from '@payments/testkit';

const ADMIN_ID = randomUUID();
const claims = (role: 'admin' | 'user'): AuthClaims => ({
  userId: role === 'admin' ? ADMIN_ID : randomUUID(),
  role,
  jti: randomUUID(),
  issuedAt: 0,
  expiresAt: 0,
  authTime: 0,
});
const verifier = {
  async verify(token: string) {
    if (token === 'admin-token') return claims('admin');
    if (token === 'user-token') return claims('user');
    throw authRequired();
  },
};

const confirmation = () => {
  const id = randomUUID();
  return createEvent(
    'PaymentProcessed',
    { transaction_id: id, payment_id: id, status: 'completed', source: 'payment' },
    { id: randomUUID(), correlationId: randomUUID() },
  );
};

describe('dead-letter routes of the service kit (in-memory bus)', () => {
  const logLines: Record<string, unknown>[] = [];
  let bus: EventBus;
  let consumer: Consumer;
  let http: HttpServer;
  let base: string;
  /** What the ledger's handler does: refuse for good until the bug is "fixed", then take the event. */
  let broken = true;
  const handled: string[] = [];
  /** The trail of admin actions: what it kept, and whether it takes more (a broker that refuses, say). */
  const recorded: AdminAction[] = [];
  let trailDown = false;
  const trail = {
    async record(action: AdminAction) {
      if (trailDown) throw new Error('the trail cannot be reached');
      recorded.push(action);
    },
  };

  before(async () => {
    const logger = createLogger('dlq-test', 'info', {
      write: (line: string) => logLines.push(JSON.parse(line)),
    });
    bus = createMemoryBus(logger);
    consumer = await bus.consume('ledger', {
      PaymentProcessed: async (event) => {
        if (broken) throw new PermanentEventError('a bug refused it');
        handled.push(event.id);
      },
    });
    const app = createHttpApp(
      {
        logger,
        metrics: createMetrics('dlq-test'),
        serviceCredential: resolveServiceCredential({ NODE_ENV: 'test', SERVICE_TOKEN: 'kit-test-token' }),
      },
      (routes) =>
        routes.use(deadLetterRoutes({ bus, queues: ['ledger'], auth: requireAuth(verifier), trail })),
    );
    http = await listen(app, 0, '127.0.0.1');
    base = `http://127.0.0.1:${http.port}`;
  });
  after(async () => {
    await consumer.stop();
    await http.close();
    await bus.close();
  });

  const call = async (method: string, path: string, token?: string, body?: unknown) => {
    const response = await fetch(`${base}${path}`, {
      method,
      headers: {
        ...(token ? { authorization: `Bearer ${token}` } : {}),
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    // eslint-disable-next-line @typescript-eslint/no-explicit-any -- bodies are asserted field by field
    return { status: response.status, body: (await response.json()) as any };
  };

  const events = [confirmation(), confirmation(), confirmation()];

  it('lists what a consumer dead-lettered, as event envelopes, oldest first, without removing any', async () => {
    for (const event of events) await bus.publish(event);
    await eventually(
      () => bus.countDeadLetters('ledger'),
      (n) => n === 3,
    );
    const listed = await call('GET', '/admin/dead-letters/ledger', 'admin-token');
    expect(listed.status).to.equal(200);
    expect(listed.body.queue).to.equal('ledger');
    expect(listed.body.count).to.equal(3);
    expect(listed.body.data.map((letter: { event: { id: string } }) => letter.event.id)).to.deep.equal(
      events.map((event) => event.id),
    );
    const first = await call('GET', '/admin/dead-letters/ledger?limit=1', 'admin-token');
    expect(first.body.data).to.have.length(1);
    expect(first.body.count).to.equal(3);
    expect(await bus.countDeadLetters('ledger')).to.equal(3);
  });

  it('refuses a user (403) and a caller without a token (401), and answers 404 for a queue it does not own', async () => {
    for (const [method, path] of [
      ['GET', '/admin/dead-letters/ledger'],
      ['POST', '/admin/dead-letters/ledger/replay'],
    ] as const) {
      expect((await call(method, path, 'user-token')).body.code, path).to.equal('ACCESS_DENIED');
      expect((await call(method, path)).status, path).to.equal(401);
    }
    const foreign = await call('GET', '/admin/dead-letters/currency', 'admin-token');
    expect(foreign.status).to.equal(404);
    expect(foreign.body.code).to.equal('RESOURCE_NOT_FOUND');
    expect((await call('POST', '/admin/dead-letters/nothing/replay', 'admin-token')).status).to.equal(404);
    expect(await bus.countDeadLetters('ledger')).to.equal(3);
  });

  it('answers 400 for a limit out of bounds or an unknown field', async () => {
    expect((await call('GET', '/admin/dead-letters/ledger?limit=0', 'admin-token')).status).to.equal(400);
    expect((await call('GET', '/admin/dead-letters/ledger?limit=101', 'admin-token')).status).to.equal(400);
    const replay = await call('POST', '/admin/dead-letters/ledger/replay', 'admin-token', { limit: 0 });
    expect(replay.status).to.equal(400);
    const unknown = await call('POST', '/admin/dead-letters/ledger/replay', 'admin-token', { all: true });
    expect(unknown.status).to.equal(400);
    expect(await bus.countDeadLetters('ledger')).to.equal(3);
    expect(recorded).to.deep.equal([]);
  });

  it('replays nothing when the trail of admin actions cannot record the replay (5xx)', async () => {
    broken = false;
    trailDown = true;
    try {
      const refused = await call('POST', '/admin/dead-letters/ledger/replay', 'admin-token', { limit: 1 });
      expect(refused.status).to.equal(500);
    } finally {
      trailDown = false;
      broken = true;
    }
    expect(await bus.countDeadLetters('ledger')).to.equal(3);
    expect(handled).to.deep.equal([]);
  });

  it('replays up to the limit onto the queue, where the consumer takes them, and logs who did it', async () => {
    broken = false;
    const some = await call('POST', '/admin/dead-letters/ledger/replay', 'admin-token', {
      limit: 2,
      reason: 'the settlement bug is fixed',
    });
    expect(some.status).to.equal(200);
    expect(some.body).to.deep.equal({ queue: 'ledger', replayed: 2 });
    await eventually(
      async () => handled.length,
      (n) => n === 2,
    );
    expect(handled).to.deep.equal([events[0]?.id, events[1]?.id]);
    // Without a body: every one left.
    const rest = await call('POST', '/admin/dead-letters/ledger/replay', 'admin-token');
    expect(rest.body).to.deep.equal({ queue: 'ledger', replayed: 1 });
    await eventually(
      async () => handled.length,
      (n) => n === 3,
    );
    expect((await call('GET', '/admin/dead-letters/ledger', 'admin-token')).body).to.deep.equal({
      queue: 'ledger',
      count: 0,
      data: [],
    });
    const replays = logLines.filter((line) => line.msg === 'replayed dead letters');
    expect(
      replays.map(({ admin_id, queue, limit, replayed }) => ({ admin_id, queue, limit, replayed })),
    ).to.deep.equal([
      { admin_id: ADMIN_ID, queue: 'ledger', limit: 2, replayed: 2 },
      { admin_id: ADMIN_ID, queue: 'ledger', limit: null, replayed: 1 },
    ]);
    expect(recorded).to.deep.equal([
      {
        actor: ADMIN_ID,
        action: 'dead_letters.replay',
        subject: 'dead_letter_queue:ledger',
        owner: null,
        reason: 'the settlement bug is fixed',
        detail: { queue: 'ledger', limit: 2 },
      },
      {
        actor: ADMIN_ID,
        action: 'dead_letters.replay',
        subject: 'dead_letter_queue:ledger',
        owner: null,
        reason: null,
        detail: { queue: 'ledger', limit: null },
      },
    ]);
  });

  it('answers 503 while the bus cannot be reached', async () => {
    await bus.close();
    const listed = await call('GET', '/admin/dead-letters/ledger', 'admin-token');
    expect(listed.status).to.equal(503);
    expect(listed.body.code).to.equal('SERVICE_UNAVAILABLE');
  });
});
