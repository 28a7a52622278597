import { execFile } from 'node:child_process';
import { readdir, rename, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const here = path.dirname(fileURLToPath(import.meta.url));
const dist = path.join(here, 'dist');
/** What the bundle is made of: the console's own files and the workspace sources it bundles. */
const SOURCES = [
  here,
  path.join(here, '..', 'packages', 'client', 'src'),
  path.join(here, '..', 'packages', 'contracts', 'src'),
];
const SKIPPED = new Set(['node_modules', 'dist']);

async function newestIn(directory) {
  let newest = 0;
  for (const entry of await readdir(directory, { withFileTypes: true })) {
    if (SKIPPED.has(entry.name) || entry.name.startsWith('dist.')) continue;
    const file = path.join(directory, entry.name);
    if (entry.isDirectory()) newest = Math.max(newest, await newestIn(file));
    else if (entry.isFile()) newest = Math.max(newest, (await stat(file)).mtimeMs);
  }
  return newest;
}

export async function ensureConsoleBuilt({ onBuild } = {}) {
  const builtAt = await stat(path.join(dist, 'index.html')).then(
    (file) => file.mtimeMs,
    () => null,
  );
  if (builtAt !== null) {
    const newest = Math.max(...(await Promise.all(SOURCES.map(newestIn))));
    if (newest <= builtAt) return { built: false, reason: 'up to date' };
  }
  const reason = builtAt === null ? 'it was not built' : 'its sources changed';
  onBuild?.(reason);
  await buildConsole();
  return { built: true, reason };
}

export async function buildConsole() {
  try {
    await promisify(execFile)(process.execPath, [fileURLToPath(import.meta.url)], {
      cwd: here,
      timeout: 240_000,
    });
  } catch (error) {
    throw new Error(`The console's build failed:\n${error.stdout ?? ''}${error.stderr ?? ''}`, {
      cause: error,
    });
  }
}

/**
 * Run as a script: builds into a folder of its own and then swaps it in, so a gateway serving dist/ meanwhile (or
 * a second build racing this one) never sees half a build. The config is passed in, not loaded from a file: Vite
 * would bundle a config file into node_modules, which a checkout owned by another user may not let us write.
 */
async function main() {
  const { build } = await import('vite');
  const { default: config } = await import('./vite.config.js');
  const partial = `${dist}.${process.pid}.partial`;
  const old = `${dist}.${process.pid}.old`;
  try {
    await build({ ...config, configFile: false, build: { ...config.build, outDir: partial } });
    await rename(dist, old).catch((error) => {
      if (error.code !== 'ENOENT') throw error;
    });
    await rename(partial, dist);
  } finally {
    await rm(partial, { recursive: true, force: true });
    await rm(old, { recursive: true, force: true });
  }
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main().catch((error) => {
    console.error(error);
    process.exitCode = 1;
  });
}
