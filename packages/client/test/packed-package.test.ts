import { execFile } from 'node:child_process';
import { copyFile, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { expect } from 'chai';
import { useSystem } from '@payments/testkit';
import { CLIENT_PACKAGE, packClient } from './support/pack.js';

const run = promisify(execFile);
const PACKAGE = CLIENT_PACKAGE;
const ROOT = path.resolve(PACKAGE, '../..');
/** Nothing inherited may bring tsx or the workspace's sources back (`--import`, `--conditions=development`). */
const PLAIN_NODE = { ...process.env, NODE_OPTIONS: '' };

const versionIn = async (file: string) =>
  (JSON.parse(await readFile(path.join(ROOT, file), 'utf8')) as { version: string }).version;

/**
 * What an integrator gets: the tarball `pnpm pack` makes, installed with npm into a project outside the workspace
 * (where no @payments package but the client can be found), its examples type-checked with `tsc --strict` against
 * the tarball's bundled declarations, and the quickstart run with plain node against a started system.
 */
describe('@payments/client as a packed tarball, outside the workspace', function () {
  // pnpm pack builds and bundles the declarations (~30 s); npm installs TypeScript and @types/node.
  this.timeout(300_000);
  let scratch: string;
  let tarball: string;

  // Packed and installed first: the system is started once the project is ready.
  const system = useSystem(async () => {
    scratch = await mkdtemp(path.join(tmpdir(), 'payments-client-pack-'));
    tarball = await packClient(scratch, PLAIN_NODE);
    const project = path.join(scratch, 'project');
    await mkdir(path.join(project, 'src'), { recursive: true });
    await writeFile(
      path.join(project, 'package.json'),
      JSON.stringify({ name: 'integrator', private: true, type: 'module' }),
    );
    await writeFile(
      path.join(project, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          strict: true,
          skipLibCheck: false,
          target: 'ES2022',
          module: 'NodeNext',
          moduleResolution: 'NodeNext',
          types: ['node'],
          rootDir: 'src',
          outDir: 'out',
        },
        include: ['src'],
      }),
    );
    for (const example of await readdir(path.join(PACKAGE, 'examples'))) {
      await copyFile(path.join(PACKAGE, 'examples', example), path.join(project, 'src', example));
    }
    const typescript = await versionIn('node_modules/typescript/package.json');
    const nodeTypes = await versionIn('node_modules/@types/node/package.json');
    await run(
      'npm',
      [
        'install',
        '--no-audit',
        '--no-fund',
        '--no-package-lock',
        tarball,
        `typescript@${typescript}`,
        `@types/node@${nodeTypes}`,
      ],
      { cwd: project, env: PLAIN_NODE, timeout: 240_000 },
    );
    return {
      serviceEnv: {
        'webhook-delivery': { WEBHOOK_ALLOW_PRIVATE_URLS: 'true', DELIVERY_POLL_INTERVAL_MS: '100' },
      },
    };
  });

  after(async () => {
    if (scratch) await rm(scratch, { recursive: true, force: true });
  });

  const project = () => path.join(scratch, 'project');

  it('ships compiled ESM, one bundled declaration file, the README and CHANGELOG, and depends on nothing', async () => {
    const { stdout } = await run('tar', ['-tzf', tarball]);
    const files = stdout.split('\n').filter(Boolean);
    expect(files).to.include.members([
      'package/package.json',
      'package/README.md',
      'package/CHANGELOG.md',
      'package/dist/index.js',
    ]);
    expect(files.filter((file) => file.endsWith('.d.ts'))).to.deep.equal(['package/dist/index.d.ts']);
    expect(files.filter((file) => file.includes('/src/') || file.endsWith('.tsbuildinfo'))).to.deep.equal([]);
    const installed = path.join(project(), 'node_modules/@payments/client');
    const manifest = JSON.parse(await readFile(path.join(installed, 'package.json'), 'utf8')) as Record<
      string,
      unknown
    >;
    expect(manifest).to.include({ name: '@payments/client', type: 'module' });
    expect(manifest).to.not.have.any.keys('dependencies', 'devDependencies', 'scripts');
    expect(manifest.exports).to.deep.equal({
      '.': { types: './dist/index.d.ts', default: './dist/index.js' },
      './package.json': './package.json',
    });
    const declarations = await readFile(path.join(installed, 'dist/index.d.ts'), 'utf8');
    expect(declarations).to.not.match(/from ['"]@payments\/|from ['"]@sinclair\//);
    const installedPackages = await readdir(path.join(project(), 'node_modules/@payments'));
    expect(installedPackages).to.deep.equal(['client']);
  });

  it('type-checks the examples with tsc --strict against the tarball’s declarations', async () => {
    const tsc = path.join(project(), 'node_modules/typescript/bin/tsc');
    const checked = await run(process.execPath, [tsc, '-p', '.'], { cwd: project(), env: PLAIN_NODE }).catch(
      (error: { stdout?: string; stderr?: string }) => ({
        stdout: error.stdout ?? '',
        stderr: error.stderr ?? 'failed',
      }),
    );
    expect(checked.stdout + checked.stderr).to.equal('');
  });

  it('runs the compiled quickstart with plain node against the system', async () => {
    const { stdout } = await run(process.execPath, ['out/quickstart.js'], {
      cwd: project(),
      env: { ...PLAIN_NODE, PAYMENTS_URL: system.gatewayUrl },
      timeout: 60_000,
    });
    const lines = stdout.split('\n');
    expect(lines[0]).to.match(/^Deposit [0-9a-f-]{36}: completed, fee 0$/);
    expect(lines).to.include('  deposit 100 USD completed');
    expect(stdout).to.match(/Refused: INSUFFICIENT_FUNDS \(.+\), request [0-9a-f-]{36}/);
    expect(lines).to.include('In 1.0: without a fee field');
    expect(stdout).to.match(/Verified transaction\.completed for [0-9a-f-]{36}/);
  });
});
