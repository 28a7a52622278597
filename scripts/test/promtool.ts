import { execFile } from 'node:child_process';
import { access, mkdir, mkdtemp, readdir, rename, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);
const ROOT = path.resolve(import.meta.dirname, '../..');
/** Where the project keeps the promtool it fetched, as it keeps its other tools: under node_modules. */
const CACHE = path.join(ROOT, 'node_modules/.cache/payments-promtool');
const CACHED = path.join(CACHE, 'usr/bin/promtool');

const answers = async (file: string) =>
  run(file, ['--version']).then(
    () => true,
    () => false,
  );

/**
 * A promtool to run: PROMTOOL, else one on PATH, else the one the project fetched before, else fetched now from
 * Debian's `prometheus` package (`apt-get download`, unpacked into node_modules/.cache, nothing installed on the
 * machine), so the tests need no system package. Throws saying what is missing when none can be had.
 */
export async function findPromtool(): Promise<string> {
  if (process.env.PROMTOOL) return process.env.PROMTOOL;
  if (await answers('promtool')) return 'promtool';
  if (await answers(CACHED)) return CACHED;
  const work = await mkdtemp(path.join(tmpdir(), 'promtool-'));
  try {
    await run('apt-get', ['download', 'prometheus'], { cwd: work }).catch(async (error: unknown) => {
      // A machine whose package lists were never fetched knows no package yet; root may fetch them.
      if (process.getuid?.() !== 0) throw error;
      await run('apt-get', ['update']);
      await run('apt-get', ['download', 'prometheus'], { cwd: work });
    });
    const deb = (await readdir(work)).find((name) => name.endsWith('.deb'));
    if (!deb) throw new Error('apt-get download prometheus left no package');
    const unpacked = path.join(work, 'unpacked');
    await run('dpkg-deb', ['-x', path.join(work, deb), unpacked]);
    await access(path.join(unpacked, 'usr/bin/promtool'));
    await mkdir(path.dirname(CACHE), { recursive: true });
    await rm(CACHE, { recursive: true, force: true });
    await rename(unpacked, CACHE);
    return CACHED;
  } catch (error) {
    throw new Error(
      'promtool is needed and could not be fetched from Debian’s prometheus package (apt-get download ' +
        `prometheus; dpkg-deb): ${error instanceof Error ? error.message : String(error)}. ` +
        'Install it (apt-get install prometheus) or set PROMTOOL to one',
      { cause: error },
    );
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}
