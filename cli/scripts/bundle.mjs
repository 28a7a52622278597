// Bundles the CLI for its tarball: dist/payments.js holds the CLI and the workspace packages it uses
// (@payments/client, @payments/contracts), unpublished, so that an install needs only the registry's packages,
// which stay imports (the manifest's other dependencies). `pnpm pack` runs it (prepack).
import { readFile } from 'node:fs/promises';
import { build } from 'esbuild';

const manifest = JSON.parse(await readFile(new URL('../package.json', import.meta.url), 'utf8'));
const external = Object.keys(manifest.dependencies ?? {}).filter((name) => !name.startsWith('@payments/'));

await build({
  entryPoints: [new URL('../src/main.ts', import.meta.url).pathname],
  outfile: new URL('../dist/payments.js', import.meta.url).pathname,
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  // The workspace packages' sources (their `development` export), so no build of theirs must be current.
  conditions: ['development'],
  external,
  legalComments: 'none',
  logLevel: 'warning',
});
