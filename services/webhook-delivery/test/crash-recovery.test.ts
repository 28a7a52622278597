import { spawn, type ChildProcess } from 'node:child_process';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import { eventually, freePort, useStarted } from '@payments/testkit';
import { completedDeposit, startDeliveryHarness } from './support/delivery-harness.js';

const MAIN = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../src/main.ts');
const TSX = createRequire(import.meta.url).resolve('tsx');

interface Child {
  process: ChildProcess;
  url: string;
  output: string[];
  exited: Promise<void>;
}

async function startChild(env: Record<string, string>): Promise<Child> {
  const port = await freePort();
  const child = spawn(process.execPath, ['--conditions=development', '--import', TSX, MAIN], {
    env: { ...process.env, ...env, PORT: String(port), LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const output: string[] = [];
  child.stdout?.on('data', (chunk: Buffer) => output.push(chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => output.push(chunk.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const url = `http://127.0.0.1:${port}`;
  const ready = await eventually(
    () =>
      fetch(`${url}/ready`)
        .then((r) => r.status)
        .catch(() => 0),
    (status) => status === 200,
    { timeoutMs: 30_000, intervalMs: 100 },
  );
  if (ready !== 200) throw new Error(`webhook-delivery did not get ready:\n${output.join('')}`);
  return { process: child, url, output, exited };
}

describe('webhook delivery across a crash (SIGKILL of the delivery process)', function () {
  this.timeout(90_000);
  let child: Child | null = null;

  const harness = useStarted(() => startDeliveryHarness({ transport: 'amqp', noService: true }), {
    beforeStop: async () => {
      child?.process.kill('SIGKILL');
      await child?.exited;
    },
  });

  it('loses no event and no delivery when the process dies mid-flight', async () => {
    child = await startChild(harness.env);
    const user = harness.newUser();
    const created = await fetch(`${child.url}/webhook-endpoints`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${user.token}` },
      body: JSON.stringify({ url: `${harness.receiver.url}/crash`, events: ['transaction.completed'] }),
    });
    expect(created.status).to.equal(201);
    const endpoint = (await created.json()) as { id: string };
    // The first attempt is held open: the process dies while it is in flight.
    harness.receiver.on('/crash', (n) => (n === 1 ? 'hang' : { status: 200 }));

    const events = [];
    for (let i = 0; i < 25; i += 1) {
      events.push(await harness.publish('TransactionCompleted', completedDeposit(user.id)));
    }
    await eventually(
      async () => harness.receiver.calls('/crash'),
      (calls) => calls.length >= 1,
      {
        timeoutMs: 15_000,
      },
    );
    child.process.kill('SIGKILL');
    await child.exited;

    child = await startChild(harness.env);
    const expected = new Set(events.map((event) => event.id));
    const received = await eventually(
      async () =>
        new Set(harness.receiver.calls('/crash').map((call) => (JSON.parse(call.body) as { id: string }).id)),
      (ids) => [...expected].every((id) => ids.has(id)),
      { timeoutMs: 40_000, intervalMs: 200 },
    );
    expect(
      [...expected].filter((id) => !received.has(id)),
      'events never delivered',
    ).to.deep.equal([]);

    const rows = await harness.db('webhook_deliveries').where({ endpoint_id: endpoint.id });
    expect(rows).to.have.length(25);
    await eventually(
      () =>
        harness
          .db('webhook_deliveries')
          .where({ endpoint_id: endpoint.id, status: 'succeeded' })
          .count({ n: '*' }),
      (result) => Number((result as { n: string }[])[0]!.n) === 25,
      { timeoutMs: 15_000 },
    );
    const hung = harness.receiver.calls('/crash')[0]!;
    const hungId = (JSON.parse(hung.body) as { id: string }).id;
    const again = harness.receiver
      .calls('/crash')
      .filter((call) => (JSON.parse(call.body) as { id: string }).id === hungId);
    expect(again.length, 'the delivery in flight at the crash was sent again').to.be.at.least(2);
  });
});
