import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdir, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import { pnpmCommand } from '@payments/testkit';

const run = promisify(execFile);
export const CLIENT_PACKAGE = path.resolve(import.meta.dirname, '../..');

/**
 * `pnpm pack` of the client into `destination`, returning the tarball's path. Its `prepack` rewrites dist/, so two
 * test files packing at once (mocha --parallel) could tar each other's half-written files: a lock directory, one
 * per checkout, lets one pack at a time, across processes.
 */
export async function packClient(destination: string, env: NodeJS.ProcessEnv): Promise<string> {
  await withLock(
    `payments-client-pack-${createHash('sha256').update(CLIENT_PACKAGE).digest('hex').slice(0, 12)}`,
    () => {
      const [command, args] = pnpmCommand();
      return run(command, [...args, 'pack', '--pack-destination', destination], {
        cwd: CLIENT_PACKAGE,
        env,
        timeout: 240_000,
      });
    },
  );
  const [packed] = (await readdir(destination)).filter((file) => file.endsWith('.tgz'));
  if (!packed) throw new Error(`pnpm pack left no tarball in ${destination}`);
  return path.join(destination, packed);
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
};

async function withLock<T>(name: string, work: () => Promise<T>): Promise<T> {
  const lock = path.join(tmpdir(), `${name}.lock`);
  const deadline = Date.now() + 600_000;
  for (;;) {
    try {
      await mkdir(lock);
      await writeFile(path.join(lock, 'pid'), String(process.pid));
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      const holder = Number(await readFile(path.join(lock, 'pid'), 'utf8').catch(() => '0'));
      const since = await stat(lock).then(
        (info) => info.mtimeMs,
        () => Date.now(),
      );
      // Its holder has gone (or never wrote its pid and has held it for minutes): the lock is stale.
      if ((holder > 0 && !alive(holder)) || (holder === 0 && Date.now() - since > 300_000)) {
        await rm(lock, { recursive: true, force: true });
        continue;
      }
      if (Date.now() > deadline) throw new Error(`Waited 10 minutes for ${lock}`, { cause: error });
      await sleep(500);
    }
  }
  try {
    return await work();
  } finally {
    await rm(lock, { recursive: true, force: true });
  }
}
