import { execFile } from 'node:child_process';
import { access, mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { expect } from 'chai';
import { parse as parseYaml } from 'yaml';
import { SERVICE_NAMES, serviceCommand, serviceDirectory } from '@payments/infra';
import {
  buildWorkspace,
  eventually,
  testServiceToken,
  type TestSystem,
  useSystem,
  expectBooksBalance,
  pnpmCommand,
} from '@payments/testkit';
import { rawApi, signUp } from '@payments/test-support';

const run = promisify(execFile);
const ROOT = path.resolve(import.meta.dirname, '..');
/** Nothing inherited may bring tsx or the sources back (`--import`, `--conditions=development`). */
const PLAIN_NODE = { NODE_OPTIONS: '' };

/** A deposit through the gateway, confirmed by the sandbox's signed webhook, read back completed. */
async function depositToCompletion(system: TestSystem): Promise<void> {
  const { client } = await signUp(system.gatewayUrl);
  const account = await client.accounts.open({ currency: 'EUR' });
  const accepted = await client.money.deposit(account.id, { amount: '42.50', currency: 'EUR' });
  expect(accepted.status).to.equal('pending');
  const transaction = await eventually(
    () => client.transactions.get(accepted.id),
    (found) => found.status === 'completed',
    { timeoutMs: 20_000 },
  );
  expect(transaction).to.include({ status: 'completed', amount: 42.5, currency: 'EUR' });
  const balance = await client.balances.get(account.id);
  expect(balance).to.include({ balance: 42.5, currency: 'EUR' });
  await expectBooksBalance(system.urls.ledger);
}

/** What the code reads besides its own modules: the currency data files, the Swagger UI assets. */
async function expectAssetsServed(system: TestSystem): Promise<void> {
  const api = rawApi(system.gatewayUrl);
  const chf = await api.get('/api/currencies/chf');
  expect(chf.status, chf.text).to.equal(200);
  expect(chf.body).to.include({ code: 'CHF', name: 'Swiss Franc' });
  const docs = await api.get('/docs/assets/swagger-ui-bundle.js');
  expect(docs.status).to.equal(200);
  expect(docs.text.length).to.be.greaterThan(100_000);
  // The console's build travels with the gateway (@payments/console's dist/).
  const operatorConsole = await api.get('/console/users');
  expect(operatorConsole.status, operatorConsole.text).to.equal(200);
  const script = /src="(\/console\/assets\/[^"]+\.js)"/.exec(operatorConsole.text)?.[1];
  expect((await api.get(script ?? '/console/assets/none.js')).status).to.equal(200);
}

/** Packages of tests only, which nothing runs but mocha and no image holds: never built. */
const TESTS_ONLY = ['e2e', 'packages/test-support'];
/** Built by Vite, not tsc: a browser app whose package exports a small JS module naming its build. */
const BUILT_BY_VITE = ['console'];

/**
 * What `pnpm build` compiles: every workspace package but those of tests only, read from pnpm-workspace.yaml so
 * that a package added later is held to the same rules without editing a list here.
 */
const COMPILED_PACKAGES = await workspacePackages();

async function workspacePackages(): Promise<string[]> {
  const workspace = parseYaml(await readFile(path.join(ROOT, 'pnpm-workspace.yaml'), 'utf8')) as {
    packages: string[];
  };
  const directories: string[] = [];
  for (const pattern of workspace.packages) {
    if (!pattern.endsWith('/*')) {
      directories.push(pattern);
      continue;
    }
    const parent = pattern.slice(0, -2);
    for (const entry of await readdir(path.join(ROOT, parent), { withFileTypes: true })) {
      if (entry.isDirectory()) directories.push(`${parent}/${entry.name}`);
    }
  }
  return directories.filter(
    (directory) => !TESTS_ONLY.includes(directory) && !BUILT_BY_VITE.includes(directory),
  );
}

interface PackageJson {
  name: string;
  exports?: Record<string, unknown>;
  files?: string[];
  scripts?: Record<string, string>;
  dependencies?: Record<string, string>;
}

const readJson = async <T>(file: string): Promise<T> =>
  JSON.parse(await readFile(path.join(ROOT, file), 'utf8')) as T;

/** Every TypeScript file under a directory, skipping installed and built code. */
async function sourceFiles(directory: string): Promise<string[]> {
  const entries = await readdir(path.join(ROOT, directory), { withFileTypes: true });
  const found: string[] = [];
  for (const entry of entries) {
    const relative = path.join(directory, entry.name);
    if (entry.isDirectory() && !['node_modules', 'dist', '.data', '.git'].includes(entry.name)) {
      found.push(...(await sourceFiles(relative)));
    } else if (entry.isFile() && /\.(ts|js)$/.test(entry.name)) {
      found.push(relative);
    }
  }
  return found;
}

describe('the workspace stays buildable, and development keeps reading the sources (read from the files)', () => {
  it('gives every package a composite tsconfig in the build, referencing each workspace package it imports', async () => {
    const build = await readJson<{ references: { path: string }[] }>('tsconfig.build.json');
    expect(build.references.map((reference) => reference.path).sort()).to.deep.equal(
      [...COMPILED_PACKAGES].sort(),
    );
    const names = new Map<string, string>();
    for (const directory of COMPILED_PACKAGES) {
      names.set((await readJson<PackageJson>(`${directory}/package.json`)).name, directory);
    }
    for (const directory of COMPILED_PACKAGES) {
      const config = await readJson<{ extends: string; references?: { path: string }[] }>(
        `${directory}/tsconfig.json`,
      );
      expect(path.join(directory, config.extends), directory).to.equal('tsconfig.package.json');
      const referenced = (config.references ?? [])
        .map((reference) => path.join(directory, reference.path))
        .sort();
      const pkg = await readJson<PackageJson>(`${directory}/package.json`);
      const sources = (await sourceFiles(`${directory}/src`)).map((file) =>
        readFile(path.join(ROOT, file), 'utf8'),
      );
      const imported = new Set(
        (await Promise.all(sources)).flatMap((text) =>
          [...text.matchAll(/from '(@payments\/[a-z-]+)/g)].map((match) => match[1] as string),
        ),
      );
      // What src/ imports is a production dependency (else the deploy folder lacks it) and a reference.
      for (const name of imported) {
        expect(pkg.dependencies?.[name], `${directory} imports ${name}`).to.equal('workspace:*');
      }
      const compiled = [...imported].filter((name) => names.has(name));
      expect(referenced, directory).to.deep.equal(compiled.map((name) => names.get(name)).sort());
    }
  });

  it('exports every entry as its sources under `development` and its compiled file by default, and ships that file', async () => {
    for (const directory of COMPILED_PACKAGES) {
      const pkg = await readJson<PackageJson>(`${directory}/package.json`);
      const shipped = (file: string) =>
        (pkg.files ?? []).some((entry) => file === entry || file.startsWith(`${entry}/`));
      for (const [entry, target] of Object.entries(pkg.exports ?? {})) {
        // A published package also exports its manifest, for tools that read it: a file, not a module.
        if (entry === './package.json') {
          expect(target, `${directory} ${entry}`).to.equal('./package.json');
          continue;
        }
        const { development, default: compiled } = target as { development: string; default: string };
        expect(development, `${directory} ${entry}`).to.match(/^\.\/src\/.+\.ts$/);
        expect(compiled, `${directory} ${entry}`).to.equal(
          development.replace('./src/', './dist/').replace(/\.ts$/, '.js'),
        );
        expect(shipped(compiled.slice(2)), `${directory} ships ${compiled}`).to.equal(true);
        await access(path.join(ROOT, directory, development));
      }
    }
  });

  it('passes the development condition wherever tsx runs: scripts, mocha, spawned processes', async () => {
    const mocha = await readJson<{ 'node-option': string[] }>('.mocharc.json');
    expect(mocha['node-option']).to.include.members(['conditions=development', 'import=tsx']);
    for (const directory of ['.', ...COMPILED_PACKAGES]) {
      const { scripts = {} } = await readJson<PackageJson>(`${directory}/package.json`);
      for (const [name, command] of Object.entries(scripts)) {
        if (/\btsx\b/.test(command))
          expect(command, `${directory}: ${name}`).to.include('--conditions=development');
      }
    }
    const files = (
      await Promise.all(
        ['packages', 'services', 'gateway', 'cli', 'bench', 'scripts', 'e2e'].map(sourceFiles),
      )
    ).flat();
    for (const file of files) {
      const text = await readFile(path.join(ROOT, file), 'utf8');
      for (const match of text.matchAll(/'--import',\s*('tsx'|tsx\b)/g)) {
        const before = text.slice(Math.max(0, (match.index ?? 0) - 80), match.index);
        expect(before, `${file}: ${match[0]}`).to.include("'--conditions=development'");
      }
    }
  });
});

describe('the production build: pnpm build, then every service on plain node from dist/', function () {
  // A full `tsc -b` took 10–15 s on two busy cores here; after the global setup's build, an up-to-date tree ~3 s.
  this.timeout(300_000);
  let buildOutput: string;
  const system = useSystem(async () => {
    buildOutput = await buildWorkspace();
    return { runtime: 'compiled', env: PLAIN_NODE };
  });

  it('compiles every package without a diagnostic, into dist/ folders git ignores', async () => {
    expect(buildOutput).to.equal('');
    const untracked = await run('git', ['ls-files', '--others', '--exclude-standard'], { cwd: ROOT }).then(
      ({ stdout }) => stdout.split('\n'),
      () => null,
    );
    if (untracked) {
      expect(untracked.filter((file) => file.includes('/dist/'))).to.deep.equal([]);
    } else {
      // Not a git checkout (an unpacked archive): the ignore rule itself.
      expect(await readFile(path.join(ROOT, '.gitignore'), 'utf8')).to.match(/^dist\/$/m);
    }
  });

  it('starts each service as `node <package>/dist/main.js`: no tsx, no loader, no development condition', () => {
    for (const service of SERVICE_NAMES) {
      expect(serviceCommand(service, 'compiled').args).to.deep.equal([
        path.join(serviceDirectory(service), 'dist/main.js'),
      ]);
    }
    // The contrast: development runs the sources through tsx.
    expect(serviceCommand('ledger', 'sources').args).to.include('--conditions=development');
  });

  it('runs a deposit through the gateway to completion, confirmed by the sandbox, with the books balanced', async () => {
    await depositToCompletion(system);
  });

  it('finds what the code reads besides its own modules: the currency data files, the Swagger UI assets and the console', async () => {
    await expectAssetsServed(system);
  });
});

describe('the production images’ contents: per service, compiled code and production dependencies only', function () {
  // Seven `pnpm deploy` from the local store took ~15 s here, after the build above.
  this.timeout(300_000);
  const FOLDERS = [...SERVICE_NAMES, 'provision'];
  /** Development tools and test packages: none may reach an image. */
  const DEVELOPMENT_ONLY = [
    'typescript',
    'tsx',
    'esbuild',
    'mocha',
    'chai',
    'eslint',
    '@payments+testkit',
    '@payments+test-support',
    // The console's build tools and what it bundles: the gateway carries the bundle, not them.
    'vite',
    'rolldown',
    'react',
    'react-dom',
  ];
  let folders: string;
  const system = useSystem(async () => {
    folders = await mkdtemp(path.join(tmpdir(), 'payments-deploy-'));
    await run('bash', ['infra/deploy-folders.sh', folders], {
      cwd: ROOT,
      env: { ...process.env, PNPM: pnpmCommand().flat().join(' ') },
      timeout: 240_000,
    });
    return { runtime: { deployedAt: folders }, env: PLAIN_NODE };
  });

  after(async () => {
    if (folders) await rm(folders, { recursive: true, force: true });
  });

  it('holds per service only dist/, its production node_modules and package.json, under 60 MB', async () => {
    for (const name of FOLDERS) {
      const folder = path.join(folders, name);
      expect((await readdir(folder)).sort(), name).to.deep.equal(['dist', 'node_modules', 'package.json']);
      const installed = await readdir(path.join(folder, 'node_modules/.pnpm'));
      for (const tool of DEVELOPMENT_ONLY) {
        expect(
          installed.filter((entry) => entry.startsWith(`${tool}@`)),
          `${name} ships ${tool}`,
        ).to.deep.equal([]);
      }
      // The workspace packages come compiled, like any dependency.
      expect(
        installed.some((entry) => entry.startsWith('@payments+contracts@')),
        name,
      ).to.equal(true);
      const workspace = await readdir(path.join(folder, 'node_modules/@payments'));
      expect(workspace, name).not.to.deep.equal([]);
      for (const dependency of workspace) {
        const files = await readdir(path.join(folder, 'node_modules/@payments', dependency));
        expect(files, `${name}: ${dependency}`).to.include.members(['dist', 'package.json']);
        expect(
          files.filter((file) => file === 'src' || file === 'test'),
          `${name}: ${dependency}`,
        ).to.deep.equal([]);
      }
      const { stdout } = await run('du', ['-sk', folder]);
      // The image adds ~175 MB (Debian slim and the node binary); a development dependency would add far more.
      expect(Number(stdout.split('\t')[0]) / 1024, `${name} MB`).to.be.lessThan(60);
    }
  });

  it('starts each service with `node dist/main.js` in its folder and runs a deposit through the gateway', async () => {
    expect(serviceCommand('ledger', { deployedAt: folders })).to.deep.equal({
      args: ['dist/main.js'],
      cwd: path.join(folders, 'ledger'),
    });
    await depositToCompletion(system);
    await expectAssetsServed(system);
  });

  it('restarts each service alone, from its folder, to ready (reported, not asserted: the machine is shared)', async () => {
    const times: string[] = [];
    for (const service of SERVICE_NAMES) {
      await system.kill(service);
      const started = Date.now();
      await system.restart(service);
      const ready = await eventually(
        () =>
          rawApi(system.urls[service])
            .get('/ready', testServiceToken)
            .then((response) => response.status)
            .catch(() => 0),
        (status) => status === 200,
        { timeoutMs: 30_000, intervalMs: 20 },
      );
      expect(ready, `${service} /ready`).to.equal(200);
      times.push(`${service} ${((Date.now() - started) / 1000).toFixed(2)} s`);
    }
    console.log(`      start to ready, node dist/main.js: ${times.join(', ')}`);
    await depositToCompletion(system);
  });

  it('starts the provisioner from its folder (`node dist/bin/provision.js`), which names what it needs', async () => {
    const outcome = await run(process.execPath, ['dist/bin/provision.js'], {
      cwd: path.join(folders, 'provision'),
      env: { PATH: process.env.PATH ?? '' },
    }).then(
      () => ({ code: 0, stderr: '' }),
      (error: { code: number; stderr: string }) => error,
    );
    expect(outcome.code).to.equal(1);
    expect(outcome.stderr).to.match(/^pnpm provision: set DATABASE_URL, AMQP_URL, /);
  });
});
