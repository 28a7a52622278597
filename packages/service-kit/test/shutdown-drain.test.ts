import { spawn, type ChildProcess } from 'node:child_process';
import { Agent, get as httpGet } from 'node:http';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import { eventually } from '@payments/testkit';

const SERVICE = fileURLToPath(new URL('./support/draining-service.ts', import.meta.url));

interface Started {
  child: ChildProcess;
  url: string;
  exited: Promise<{ code: number | null; at: number }>;
}

/** Runs the draining service as its own process, as a deployment would, and resolves once it listens. */
function startProcess(drainSeconds: number): Promise<Started> {
  const child = spawn(process.execPath, ['--conditions=development', '--import', 'tsx', SERVICE], {
    env: {
      PATH: process.env.PATH ?? '',
      NODE_ENV: 'test',
      LOG_LEVEL: 'info',
      SHUTDOWN_DRAIN_SECONDS: String(drainSeconds),
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const exited = new Promise<{ code: number | null; at: number }>((resolve) =>
    child.once('exit', (code) => resolve({ code, at: Date.now() })),
  );
  return new Promise((resolve, reject) => {
    let output = '';
    child.stdout?.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      const url = /"url":"(http:[^"]+)"/.exec(output)?.[1];
      if (url) resolve({ child, url, exited });
    });
    void exited.then(({ code }) => reject(new Error(`exited ${code} before listening: ${output}`)));
  });
}

/** A GET over a keep-alive agent, as the gateway's upstream calls are; resolves with the Connection header. */
const keptAliveConnection = (url: string, agent: Agent) =>
  new Promise<string | undefined>((resolve, reject) => {
    httpGet(url, { agent }, (response) => {
      response.resume();
      response.on('end', () => resolve(response.headers.connection));
    }).on('error', reject);
  });

/** A request on a connection of its own, as a new client's would be. */
const get = (url: string) =>
  fetch(url, { headers: { connection: 'close' }, signal: AbortSignal.timeout(2000) }).then(
    async (response) => ({
      status: response.status,
      body: (await response.json()) as Record<string, unknown>,
    }),
  );

describe('shutdown drain', function () {
  this.timeout(30_000);
  let started: Started | undefined;

  afterEach(() => {
    if (started?.child.exitCode === null) started.child.kill('SIGKILL');
  });

  it('answers /ready 503 at once on SIGTERM, serves requests through the drain, then exits 0', async () => {
    started = await startProcess(2);
    const { child, url, exited } = started;
    expect((await get(`${url}/ready`)).status).to.equal(200);
    const before = new Agent({ keepAlive: true });
    expect(await keptAliveConnection(`${url}/work`, before)).to.equal('keep-alive');
    before.destroy();

    const signalled = Date.now();
    child.kill('SIGTERM');
    const ready = await eventually(
      () => get(`${url}/ready`),
      (answer) => answer.status === 503,
      { timeoutMs: 1000, intervalMs: 20 },
    );
    expect(ready.body).to.deep.include({ status: 'stopping' });
    expect(Date.now() - signalled).to.be.below(1000);

    const agent = new Agent({ keepAlive: true });
    expect(await keptAliveConnection(`${url}/work`, agent), 'told to reconnect elsewhere').to.equal('close');
    agent.destroy();

    for (let i = 0; i < 3; i++) {
      expect(await get(`${url}/work`)).to.deep.equal({ status: 200, body: { done: true } });
      await new Promise((resolve) => setTimeout(resolve, 400));
    }
    expect(child.exitCode, 'still running during the drain').to.equal(null);

    const { code, at } = await exited;
    expect(code).to.equal(0);
    expect(at - signalled).to.be.within(2000, 10_000);
  });

  it('exits at once on SIGTERM without a drain (the default in development and tests)', async () => {
    started = await startProcess(0);
    const signalled = Date.now();
    started.child.kill('SIGTERM');
    const { code, at } = await started.exited;
    expect(code).to.equal(0);
    expect(at - signalled).to.be.below(2000);
  });
});
