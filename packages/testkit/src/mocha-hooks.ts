import path from 'node:path';
import { buildConsoleIfStale, buildWorkspace } from './build.js';
import { findInfrastructure, RUN_CONTAINERS_ENV, stopContainers } from './infrastructure.js';
import { TEST_RUNTIME_ENV } from './system.js';

/**
 * Mocha global fixtures (`require` in .mocharc.json), run once in mocha's main process, before and after every
 * file, in serial and in parallel mode alike (`pnpm test` runs the files in parallel worker processes).
 *
 * Setup looks for the infrastructure once. Where that started containers, their URLs go into TEST_DATABASE_URL /
 * TEST_AMQP_URL / TEST_AMQP_MANAGEMENT_URL, which the test files and the workers (forked after setup) find: every
 * file and worker uses the same two containers instead of starting its own, with TEST_INFRASTRUCTURE=containers
 * too. A failure here is not reported here: each test that needs the infrastructure looks again and fails saying
 * what to start; a test that needs none still runs.
 */
export async function mochaGlobalSetup(): Promise<void> {
  shadowToolsAgain();
  await compileForTestSystems();
  // The gateway of every system a test starts serves the console from its build, in either runtime.
  await buildConsoleIfStale();
  const infrastructure = await findInfrastructure().catch(() => null);
  if (infrastructure?.source !== 'containers') return;
  process.env.TEST_DATABASE_URL = infrastructure.postgresUrl;
  process.env.TEST_AMQP_URL = infrastructure.amqpUrl;
  if (infrastructure.amqpManagementUrl)
    process.env.TEST_AMQP_MANAGEMENT_URL = infrastructure.amqpManagementUrl;
  // Without this, under TEST_INFRASTRUCTURE=containers, a parallel worker, or a second instance of the test kit's
  // modules in this process (e2e/production-build.test.ts gets one), would start a pair of its own that nothing
  // removes.
  process.env[RUN_CONTAINERS_ENV] = '1';
}

/**
 * `.ci/run` puts failing stand-ins for pnpm, tsx and mocha first on PATH (SHADOWED_TOOLS names their directory), as
 * on a machine with only Node and npm. npx and pnpm put their own directories ahead of it on the way here, so it
 * goes first again: a test that starts one of them by name fails in CI, as it would there.
 */
function shadowToolsAgain(): void {
  const standIns = process.env.SHADOWED_TOOLS;
  if (standIns) process.env.PATH = [standIns, process.env.PATH].join(path.delimiter);
}

/**
 * Builds the workspace once, before any file runs, so that the systems the tests start run plain node on `dist/`
 * (what production runs) instead of compiling every service through tsx at each start. When it does not build, no
 * test runs: the build's errors are the news. TEST_RUNTIME=sources skips the build and runs the sources.
 */
async function compileForTestSystems(): Promise<void> {
  if (process.env[TEST_RUNTIME_ENV] === 'sources') return;
  await buildWorkspace();
  process.env[TEST_RUNTIME_ENV] = 'compiled';
}

/** The containers the run started are removed when it ends. */
export async function mochaGlobalTeardown(): Promise<void> {
  await stopContainers();
}
