import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { promisify } from 'node:util';
import { ensureConsoleBuilt, type ConsoleBuild } from '@payments/console/build';

const run = promisify(execFile);
const ROOT = path.resolve(import.meta.dirname, '../../..');

/**
 * Runs `pnpm build` (tsc in build mode: seconds when nothing changed) with this Node, not through pnpm, and
 * returns what tsc printed; rejects with it when the workspace does not compile.
 */
export async function buildWorkspace(): Promise<string> {
  const { scripts } = JSON.parse(await readFile(path.join(ROOT, 'package.json'), 'utf8')) as {
    scripts: Record<string, string>;
  };
  const [tool, ...args] = scripts.build?.split(' ') ?? [];
  if (tool !== 'tsc') throw new Error(`pnpm build runs ${tool}, not tsc`);
  const tsc = createRequire(path.join(ROOT, 'package.json')).resolve('typescript/bin/tsc');
  try {
    const built = await run(process.execPath, [tsc, ...args], { cwd: ROOT, timeout: 240_000 });
    return built.stdout + built.stderr;
  } catch (error) {
    const { stdout = '', stderr = '' } = error as { stdout?: string; stderr?: string };
    throw new Error(`pnpm build failed:\n${stdout}${stderr}`, { cause: error });
  }
}

/**
 * Builds the console (console/dist, which the gateway serves at /console) unless it is newer than its sources:
 * well under a second when it is, a few seconds when not. Rejects with Vite's output when it does not build.
 */
export async function buildConsoleIfStale(): Promise<ConsoleBuild> {
  return ensureConsoleBuilt();
}
