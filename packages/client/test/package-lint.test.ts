import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { expect } from 'chai';
import { publint } from 'publint';
import { formatMessage } from 'publint/utils';
import { signWebhookPayload } from '@payments/service-kit';
import { CLIENT_PACKAGE, packClient } from './support/pack.js';

const run = promisify(execFile);
const PACKAGE = CLIENT_PACKAGE;
/** Nothing inherited may bring tsx or the workspace's sources back (`--import`, `--conditions=development`). */
const PLAIN_NODE = { ...process.env, NODE_OPTIONS: '' };

/**
 * The packed tarball as the tools integrators' bundlers and TypeScript trust judge it: publint (the manifest's
 * `exports`, `main`, `types` and the files they name) and Are the Types Wrong (what each module resolution finds),
 * and its bundle run where there is no Node: a module context holding only the web platform's globals.
 */
describe('@payments/client’s packed tarball, checked by publint and Are the Types Wrong', function () {
  // pnpm pack builds and bundles the declarations (~30 s).
  this.timeout(180_000);
  let scratch: string;
  let tarball: string;

  before(async () => {
    scratch = await mkdtemp(path.join(tmpdir(), 'payments-client-lint-'));
    tarball = await packClient(scratch, PLAIN_NODE);
    await mkdir(path.join(scratch, 'unpacked'));
    await run('tar', ['-xzf', tarball, '-C', path.join(scratch, 'unpacked')]);
  });

  after(async () => {
    if (scratch) await rm(scratch, { recursive: true, force: true });
  });

  const unpacked = (file: string) => path.join(scratch, 'unpacked/package', file);

  it('publint finds nothing to say, suggestions included', async () => {
    const bytes = await readFile(tarball);
    const { messages, pkg } = await publint({
      pack: { tarball: bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) },
      level: 'suggestion',
      strict: true,
    });
    expect(
      messages.map((message) => `${message.type} ${message.code}: ${formatMessage(message, pkg)}`),
    ).to.deep.equal([]);
  });

  it('Are the Types Wrong finds no problem in any resolution an ESM-only package serves', async () => {
    // The esm-only profile leaves out node10 and CommonJS `require` under node16: a CommonJS caller imports() an
    // ESM-only package (or requires it, where Node allows that: 20.19 and 22.12 onwards). attw exits non-zero on any
    // other problem; its JSON lists all of them, the ones the profile ignores too.
    const attw = path.join(PACKAGE, 'node_modules/@arethetypeswrong/cli/dist/index.js');
    const { stdout } = await run(
      process.execPath,
      [attw, tarball, '--profile', 'esm-only', '--format', 'json', '--no-color'],
      { env: PLAIN_NODE, timeout: 60_000 },
    );
    const report = JSON.parse(stdout) as {
      problems?: Record<string, { kind: string; entrypoint?: string; resolutionKind?: string }[]>;
      analysis: { types: { kind: string }; entrypoints: Record<string, unknown> };
    };
    const problems = Object.values(report.problems ?? {})
      .flat()
      .filter((problem) => !['node10', 'node16-cjs'].includes(problem.resolutionKind ?? ''));
    expect(problems).to.deep.equal([]);
    expect(report.analysis.types.kind).to.equal('included');
    expect(Object.keys(report.analysis.entrypoints)).to.deep.equal(['.', './package.json']);
  });

  it('names types, main and exports (types first), and ships the CHANGELOG', async () => {
    const manifest = JSON.parse(await readFile(unpacked('package.json'), 'utf8')) as Record<string, unknown>;
    expect(manifest).to.include({ main: './dist/index.js', types: './dist/index.d.ts', type: 'module' });
    expect(JSON.stringify(manifest.exports)).to.equal(
      JSON.stringify({
        '.': { types: './dist/index.d.ts', default: './dist/index.js' },
        './package.json': './package.json',
      }),
    );
    const changelog = await readFile(unpacked('CHANGELOG.md'), 'utf8');
    expect(changelog).to.contain(`## ${manifest.version as string}`);
  });

  it('type-checks for a browser or a worker: the DOM lib and no @types/node', async () => {
    const project = path.join(scratch, 'browser');
    await mkdir(path.join(project, 'node_modules/@payments'), { recursive: true });
    await symlink(
      path.join(scratch, 'unpacked/package'),
      path.join(project, 'node_modules/@payments/client'),
    );
    await writeFile(
      path.join(project, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          strict: true,
          noEmit: true,
          skipLibCheck: false,
          target: 'ES2022',
          lib: ['ES2022', 'DOM'],
          types: [],
          module: 'ESNext',
          moduleResolution: 'Bundler',
        },
        files: ['worker.ts'],
      }),
    );
    await writeFile(
      path.join(project, 'worker.ts'),
      `import { createPaymentsClient, verifyWebhookEvent, type WebhookEvent } from '@payments/client';
export async function handle(request: Request, secret: string, apiKey: string): Promise<Response> {
  const event: WebhookEvent = await verifyWebhookEvent(await request.arrayBuffer(), request.headers.get('stripe-signature'), secret);
  const client = createPaymentsClient({ baseUrl: 'https://api.example', apiKey });
  const account = await client.accounts.get(event.id);
  return new Response(account.currency);
}
`,
    );
    const tsc = path.resolve(PACKAGE, '../../node_modules/typescript/bin/tsc');
    const checked = await run(process.execPath, [tsc, '-p', project], {
      env: PLAIN_NODE,
      timeout: 60_000,
    }).catch((error: { stdout?: string; stderr?: string }) => ({
      stdout: error.stdout ?? '',
      stderr: error.stderr ?? 'failed',
    }));
    expect(checked.stdout + checked.stderr).to.equal('');
  });

  it('bundles everything into dist/index.js, importing nothing (no node: module either)', async () => {
    const bundle = await readFile(unpacked('dist/index.js'), 'utf8');
    expect(bundle).to.not.match(/^\s*import\s[^(]/m);
    expect(bundle).to.not.match(/\bimport\s*\(|\brequire\s*\(|["']node:/);
    expect(bundle).to.not.match(/\bprocess\.env\b|\bBuffer\./);
  });

  it('verifies and signs webhooks where there is no Node: a context with only web globals', async () => {
    const secret = 'whsec_edge';
    const now = Math.floor(Date.now() / 1000);
    const body = JSON.stringify({
      id: 'evt_1',
      object: 'event',
      type: 'account.created',
      data: { object: {} },
    });
    const serviceHeader = signWebhookPayload(body, secret, now);
    // A runtime like an edge worker's: the bundle is evaluated in a fresh V8 context given WebCrypto, the encoders,
    // fetch's classes and timers, and nothing else: no process, Buffer, require or module to import.
    const edge = path.join(scratch, 'edge.mjs');
    await writeFile(
      edge,
      `import { readFile } from 'node:fs/promises';
import vm from 'node:vm';
const [bundlePath, body, secret, header] = process.argv.slice(2);
const globals = { crypto, TextEncoder, TextDecoder, atob, btoa, URL, URLSearchParams, Headers, Request, Response,
  AbortController, AbortSignal, setTimeout, clearTimeout, console, navigator: { userAgent: 'Cloudflare-Workers' } };
const context = vm.createContext(globals);
const module = new vm.SourceTextModule(await readFile(bundlePath, 'utf8'), { context });
await module.link(() => { throw new Error('the bundle imports a module'); });
await module.evaluate();
context.exports = module.namespace;
context.input = { body, secret, header };
const report = await new vm.Script(\`(async () => {
  const { verifyWebhookEvent, generateTestHeaderString, createPaymentsClient } = exports;
  const event = await verifyWebhookEvent(input.body, input.header, input.secret);
  const refusals = [];
  for (const [label, run] of [
    ['tampered', () => verifyWebhookEvent(input.body.replace('evt_1', 'evt_2'), input.header, input.secret)],
    ['stale', () => verifyWebhookEvent(input.body, input.header, input.secret, { now: Date.now() + 3600000 })],
    ['wrong secret', () => verifyWebhookEvent(input.body, input.header, 'whsec_other')],
  ]) {
    try { await run(); refusals.push(label + ': accepted'); } catch (error) { refusals.push(label + ': ' + error.reason); }
  }
  const own = await generateTestHeaderString({ payload: input.body, secret: input.secret,
    timestamp: Number(input.header.slice(2, input.header.indexOf(','))) });
  const sent = [];
  const client = createPaymentsClient({ baseUrl: 'https://api.example', apiKey: 'sk_test_edge',
    fetch: async (url, init) => { sent.push(new Headers(init.headers)); return new Response('{"data":[],"pagination":{"limit":10,"offset":0,"total":0}}', { status: 200 }); } });
  await client.accounts.listPage();
  return JSON.stringify({ type: event.type, refusals, sameHeader: own === input.header,
    userAgent: sent[0].get('user-agent'), authorization: sent[0].get('authorization'),
    requestId: /^[0-9a-f-]{36}$/.test(sent[0].get('x-request-id')), hasProcess: typeof process, hasBuffer: typeof Buffer });
})()\`).runInContext(context);
console.log(report);
`,
    );
    const { stdout } = await run(
      process.execPath,
      [
        '--experimental-vm-modules',
        '--no-warnings',
        edge,
        unpacked('dist/index.js'),
        body,
        secret,
        serviceHeader,
      ],
      { env: PLAIN_NODE, timeout: 30_000 },
    );
    const manifest = JSON.parse(await readFile(unpacked('package.json'), 'utf8')) as { version: string };
    expect(JSON.parse(stdout)).to.deep.equal({
      type: 'account.created',
      refusals: ['tampered: mismatch', 'stale: stale', 'wrong secret: mismatch'],
      sameHeader: true,
      userAgent: `payments-client/${manifest.version} Cloudflare-Workers`,
      authorization: 'Bearer sk_test_edge',
      requestId: true,
      hasProcess: 'undefined',
      hasBuffer: 'undefined',
    });
  });
});
