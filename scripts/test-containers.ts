import { execFile, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { containerImages, TEST_RUN_LABEL } from '@payments/testkit';

// `pnpm test:containers [mocha files…]`: the integration suites against PostgreSQL and RabbitMQ in containers that
// testcontainers starts, even where local services answer (TEST_INFRASTRUCTURE=containers). Images: the official
// ones when present or pullable, else the offline stand-ins of infra/containers/ (base-images.sh builds what is
// missing, images.env names them); TEST_POSTGRES_IMAGE / TEST_RABBITMQ_IMAGE choose others. Without the Ryuk
// image, Ryuk is off and the test kit's root hook removes the containers; this runner then checks that none is
// left (and removes any). Exits non-zero when a test fails, no container started, or one was left behind.

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const SUITES = ['packages/*/test/**/*.test.ts', 'services/*/test/**/*.test.ts', 'e2e/**/*.test.ts'];
const BASE_IMAGES = path.join(ROOT, 'infra/containers/base-images.sh');
const IMAGES_ENV = path.join(ROOT, 'infra/containers/images.env');
/** The stand-ins' names, as infra/containers/images.env gives them (`NAME=${NAME:-default}`). */
function standIn(variable: string, fallback: string): string {
  const file = existsSync(IMAGES_ENV) ? readFileSync(IMAGES_ENV, 'utf8') : '';
  const line = new RegExp(`^${variable}=\\$\\{${variable}:-([^}]+)\\}`, 'm').exec(file);
  return process.env[variable] || line?.[1] || fallback;
}
const STAND_INS = {
  postgres: standIn('POSTGRES_STANDIN_IMAGE', 'payments-local/postgres:15-debian'),
  rabbitmq: standIn('RABBITMQ_STANDIN_IMAGE', 'payments-local/rabbitmq:3.10-debian'),
};
/** testcontainers 11's reaper, unless RYUK_CONTAINER_IMAGE names another. */
const RYUK_IMAGE = process.env.RYUK_CONTAINER_IMAGE || 'testcontainers/ryuk:0.14.0';
const docker = (args: string[], timeout = 30_000) =>
  promisify(execFile)('docker', args, { timeout, maxBuffer: 16 * 1024 * 1024 });
const say = (line: string) => console.log(`[test:containers] ${line}`);

const succeeds = (work: Promise<unknown>) =>
  work.then(
    () => true,
    () => false,
  );
const present = (image: string) => succeeds(docker(['image', 'inspect', image]));
/** Present, or pulled now; false when neither (no registry). */
const available = async (image: string) =>
  (await present(image)) || succeeds(docker(['pull', '--quiet', image], 600_000));

if (!(await succeeds(docker(['info'], 10_000)))) {
  console.error('pnpm test:containers needs a Docker engine (docker info fails).');
  process.exit(1);
}

const env: NodeJS.ProcessEnv = { ...process.env, TEST_INFRASTRUCTURE: 'containers' };
const images = containerImages();
const toBuild = [] as string[];
for (const kind of ['postgres', 'rabbitmq'] as const) {
  const variable = kind === 'postgres' ? 'TEST_POSTGRES_IMAGE' : 'TEST_RABBITMQ_IMAGE';
  if (process.env[variable] || (await available(images[kind]))) continue;
  say(`${images[kind]} is neither here nor pullable: the offline stand-in ${STAND_INS[kind]} instead`);
  images[kind] = STAND_INS[kind];
  if (!(await present(images[kind]))) toBuild.push(kind);
}
if (toBuild.length > 0) {
  if (!existsSync(BASE_IMAGES)) {
    console.error(`No ${toBuild.join(' or ')} image to test with, and no ${BASE_IMAGES} to build one.`);
    process.exit(1);
  }
  const build = spawn('bash', [BASE_IMAGES, ...toBuild], { stdio: 'inherit' });
  if ((await new Promise((resolve) => build.once('close', resolve))) !== 0) {
    console.error('infra/containers/base-images.sh failed: no images to test with.');
    process.exit(1);
  }
}
env.TEST_POSTGRES_IMAGE = images.postgres;
env.TEST_RABBITMQ_IMAGE = images.rabbitmq;
if (env.TESTCONTAINERS_RYUK_DISABLED !== 'true' && !(await available(RYUK_IMAGE))) {
  say(
    `${RYUK_IMAGE} is neither here nor pullable: Ryuk off, the test kit's root hook removes the containers`,
  );
  env.TESTCONTAINERS_RYUK_DISABLED = 'true';
}

const runId = randomBytes(6).toString('hex');
env.TEST_RUN_ID = runId;
const files = process.argv.slice(2);
say(`images ${images.postgres} and ${images.rabbitmq}; run ${TEST_RUN_LABEL}=${runId}`);
const startedAt = Date.now();
const label = `label=${TEST_RUN_LABEL}=${runId}`;
// Watched live: the engine keeps only its last 256 events, fewer than a long run sees on a busy engine.
const events = spawn(
  'docker',
  ['events', '--filter', label, '--filter', 'event=start', '--format', '{{.Actor.Attributes.image}}'],
  { stdio: ['ignore', 'pipe', 'inherit'] },
);
let eventLines = '';
events.stdout.on('data', (chunk: Buffer) => (eventLines += chunk.toString('utf8')));
await new Promise((resolve) => setTimeout(resolve, 500));
const mocha = spawn(path.join(ROOT, 'node_modules/.bin/mocha'), files.length > 0 ? files : SUITES, {
  cwd: ROOT,
  env,
  stdio: 'inherit',
});
// Interrupted: mocha stops, and the containers are still removed below.
let interrupted = false;
const forward = (signal: NodeJS.Signals) => () => {
  interrupted = true;
  mocha.kill(signal);
};
process.on('SIGINT', forward('SIGINT')).on('SIGTERM', forward('SIGTERM'));
const code = await new Promise<number>((resolve) =>
  mocha.once('close', (exitCode, signal) => resolve(exitCode ?? (signal ? 1 : 0))),
);
const seconds = Math.round((Date.now() - startedAt) / 1000);
events.kill();
const started = eventLines.split('\n').filter(Boolean);
const { stdout: leftLines } = await docker(['ps', '--all', '--quiet', '--filter', label]);
const left = leftLines.split('\n').filter(Boolean);
if (left.length > 0) await docker(['rm', '--force', '--volumes', ...left]);
say(
  `mocha exited ${code}${interrupted ? ' (interrupted)' : ''} after ${Math.floor(seconds / 60)} min ${seconds % 60} s; containers started: ` +
    `${started.length > 0 ? started.join(', ') : 'none'}; left behind: ${left.length}` +
    (left.length > 0 ? ' (removed now)' : ''),
);
if (started.length === 0)
  console.error('No container was started: the suites did not run against containers.');
process.exit(code !== 0 || interrupted || left.length > 0 || started.length === 0 ? 1 : 0);
