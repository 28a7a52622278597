import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';

const repo = path.resolve(import.meta.dirname, '..', '..', '..');
/** `pnpm@<version>`, as the root package.json pins it. */
export const PINNED_PNPM = (
  JSON.parse(readFileSync(path.join(repo, 'package.json'), 'utf8')) as { packageManager: string }
).packageManager;

/**
 * pnpm run by this node from its entry script, never one looked up on PATH (a fresh machine has none): the tests'
 * own (`npm_execpath`, when pnpm runs them), else the pinned version the README runs through npx. Not npx itself:
 * npx ends by the signal on Ctrl-C, where the tests check how `pnpm start` ends.
 */
export function pnpmCommand(): [string, string[]] {
  return [process.execPath, [runningPnpm() ?? pinnedPnpm()]];
}

let pinned: string | undefined;
/** The entry script of the pinned pnpm, fetched into npx's cache on first use (`mocha FILE` runs no pnpm). */
function pinnedPnpm(): string {
  pinned ??= execFileSync(
    'npx',
    [
      '--yes',
      '-p',
      PINNED_PNPM,
      'node',
      '-e',
      "const { execSync } = require('node:child_process'); const { realpathSync } = require('node:fs');" +
        "process.stdout.write(realpathSync(execSync('command -v pnpm', { encoding: 'utf8' }).trim()))",
    ],
    { encoding: 'utf8' },
  );
  return pinned;
}

/** The entry script of the pnpm running these tests (`pnpm test` names itself in npm_execpath), if pnpm does. */
export function runningPnpm(): string | undefined {
  const execPath = process.env.npm_execpath;
  return execPath && path.basename(execPath).startsWith('pnpm') ? execPath : undefined;
}
