import { Session } from 'node:inspector';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';

/**
 * Preloaded into a service with NODE_OPTIONS="--import tsx --import <this file>" (Node 20 refuses --cpu-prof in
 * NODE_OPTIONS): profiles the whole process and writes a .cpuprofile into BENCH_CPU_PROFILE_DIR when it exits.
 */
const directory = process.env.BENCH_CPU_PROFILE_DIR;
if (directory) {
  const session = new Session();
  session.connect();
  session.post('Profiler.enable', () => session.post('Profiler.start'));
  process.once('exit', () => {
    // A session on the same thread answers synchronously, so this completes before the process is gone.
    session.post('Profiler.stop', (error, result) => {
      if (error) return;
      mkdirSync(directory, { recursive: true });
      writeFileSync(path.join(directory, `${process.pid}.cpuprofile`), JSON.stringify(result.profile));
    });
  });
}
