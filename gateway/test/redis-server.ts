import { spawn, type ChildProcess } from 'node:child_process';
import { answers, freePort } from '@payments/testkit';

export interface TestRedis {
  url: string;
  stop(): Promise<void>;
}

const HOW_TO_GET =
  'Install Redis (apt-get install redis-server), run one on 127.0.0.1:6379, or set TEST_REDIS_URL.';

/** Redis for the shared-limit test: TEST_REDIS_URL, a local one on 6379, or a private `redis-server` child. */
export async function findTestRedis(): Promise<TestRedis> {
  if (process.env.TEST_REDIS_URL) return { url: process.env.TEST_REDIS_URL, stop: async () => {} };
  if (await answers('127.0.0.1', 6379)) return { url: 'redis://127.0.0.1:6379', stop: async () => {} };
  const port = await freePort();
  let child: ChildProcess;
  try {
    child = spawn(
      'redis-server',
      ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
      {
        stdio: 'ignore',
      },
    );
    await new Promise<void>((resolve, reject) => {
      child.once('error', reject);
      child.once('spawn', resolve);
    });
  } catch {
    throw new Error(`No Redis for the shared rate-limit test. ${HOW_TO_GET}`);
  }
  for (let attempt = 0; attempt < 50 && !(await answers('127.0.0.1', port)); attempt++) {
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return {
    url: `redis://127.0.0.1:${port}`,
    stop: () =>
      new Promise((resolve) => {
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}
