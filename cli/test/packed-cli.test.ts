import { execFile } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdir, mkdtemp, readdir, readFile, rm, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { expect } from 'chai';
import { publint } from 'publint';
import { formatMessage } from 'publint/utils';
import { pnpmCommand } from '@payments/testkit';

const run = promisify(execFile);
const CLI = path.resolve(import.meta.dirname, '..');
const ROOT = path.resolve(CLI, '..');
/** Nothing inherited may bring tsx or the workspace's sources back (`--import`, `--conditions=development`). */
const PLAIN_NODE = { ...process.env, NODE_OPTIONS: '' };

const versionOf = async (file: string) =>
  (JSON.parse(await readFile(file, 'utf8')) as { version: string }).version;

/**
 * What someone outside the repository gets: `pnpm pack` of the CLI, installed with `npm install -g` into a prefix of
 * its own, and `payments` run from there on a PATH that holds node and nothing of the workspace (no pnpm, no tsx).
 */
describe('payments CLI as a packed tarball, installed with npm install -g', function () {
  // The pack bundles the CLI (~5 s); npm fetches its dependencies (yargs, ora, …) from the registry.
  this.timeout(300_000);
  let scratch: string;
  let tarball: string;
  let prefix: string;
  /** A PATH with the installed `payments` and `node`, and nothing else. */
  let bareEnv: Record<string, string>;

  before(async () => {
    scratch = await mkdtemp(path.join(tmpdir(), 'payments-cli-pack-'));
    const [command, args] = pnpmCommand();
    await run(command, [...args, 'pack', '--pack-destination', scratch], {
      cwd: CLI,
      env: PLAIN_NODE,
      timeout: 120_000,
    });
    const [packed] = (await readdir(scratch)).filter((file) => file.endsWith('.tgz'));
    tarball = path.join(scratch, packed as string);
    prefix = path.join(scratch, 'prefix');
    await run('npm', ['install', '--global', '--prefix', prefix, '--no-audit', '--no-fund', tarball], {
      cwd: scratch,
      env: PLAIN_NODE,
      timeout: 240_000,
    });
    const nodeOnly = path.join(scratch, 'node-only');
    await mkdir(nodeOnly);
    await symlink(process.execPath, path.join(nodeOnly, 'node'));
    await mkdir(path.join(scratch, 'home'));
    bareEnv = {
      PATH: [path.join(prefix, 'bin'), nodeOnly].join(path.delimiter),
      HOME: path.join(scratch, 'home'),
      XDG_CONFIG_HOME: path.join(scratch, 'home/.config'),
      NO_COLOR: '1',
    };
  });

  after(async () => {
    if (scratch) await rm(scratch, { recursive: true, force: true });
  });

  const installed = () => path.join(prefix, 'lib/node_modules/@payments/cli');

  it('ships the bin, one bundle, the README and CHANGELOG, and depends on the registry’s packages only', async () => {
    const { stdout } = await run('tar', ['-tzf', tarball]);
    expect(stdout.split('\n').filter(Boolean).sort()).to.deep.equal([
      'package/CHANGELOG.md',
      'package/README.md',
      'package/bin/payments.js',
      'package/dist/payments.js',
      'package/package.json',
    ]);
    const manifest = JSON.parse(await readFile(path.join(installed(), 'package.json'), 'utf8')) as {
      dependencies: Record<string, string>;
      private?: boolean;
    };
    expect(manifest.private).to.equal(undefined);
    // The source manifest's dependencies but the workspace's own, which the bundle holds.
    const source = JSON.parse(await readFile(path.join(CLI, 'package.json'), 'utf8')) as {
      dependencies: Record<string, string>;
    };
    const fromRegistry = Object.keys(source.dependencies).filter((name) => !name.startsWith('@payments/'));
    expect(fromRegistry).to.include('yargs');
    expect(Object.keys(manifest.dependencies).sort()).to.deep.equal(fromRegistry.sort());
    expect(Object.values(manifest.dependencies).join(' ')).to.not.include('workspace:');
    const modules = await readdir(path.join(installed(), 'node_modules'));
    expect(modules).to.not.include.members(['@payments', 'tsx']);
  });

  it('publint finds nothing to say about the tarball', async () => {
    const bytes = await readFile(tarball);
    const { messages, pkg } = await publint({
      pack: { tarball: bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) },
      level: 'suggestion',
      strict: true,
    });
    expect(messages.map((message) => `${message.code}: ${formatMessage(message, pkg)}`)).to.deep.equal([]);
  });

  it('payments --version runs from the install with only node on PATH', async () => {
    const { stdout } = await run('payments', ['--version'], { env: bareEnv, timeout: 30_000 });
    const cli = await versionOf(path.join(CLI, 'package.json'));
    const client = await versionOf(path.join(ROOT, 'packages/client/package.json'));
    expect(stdout).to.equal(
      `payments ${cli} (@payments/client ${client}, API 1.1, node ${process.versions.node})\n`,
    );
  });

  it('the installed CLI calls the API with its profile’s URL and says who it is', async () => {
    const seen: { url: string; userAgent: string | undefined }[] = [];
    const server: Server = createServer((request, response) => {
      seen.push({ url: request.url ?? '', userAgent: request.headers['user-agent'] });
      response.writeHead(200, { 'content-type': 'application/json' }).end(
        JSON.stringify({
          data: [{ code: 'USD', name: 'US Dollar', symbol: '$', exponent: 2, supported: true }],
        }),
      );
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      await run('payments', ['--profile', 'local', 'config', 'set', 'api-url', url], { env: bareEnv });
      const listed = await run('payments', ['currencies', 'list', '--json'], {
        env: { ...bareEnv, PAYMENTS_PROFILE: 'local' },
        timeout: 30_000,
      });
      expect(listed.stdout).to.include('"USD"');
      expect(seen.map((request) => request.url.split('?')[0])).to.include('/v1.1/api/currencies');
      const cli = await versionOf(path.join(CLI, 'package.json'));
      expect(seen[0]?.userAgent).to.match(
        new RegExp(`^payments-cli/${cli} payments-client/[\\d.]+ node/[\\d.]+$`),
      );
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });
});
