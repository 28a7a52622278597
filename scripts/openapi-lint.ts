import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildOpenApiDocument } from '../gateway/src/openapi/openapi-document.js';

// `pnpm openapi:lint`: the document the gateway serves at /openapi.json, written out and checked by Redocly.

const gateway = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../gateway');
const redoclyPackage = createRequire(path.join(gateway, 'package.json')).resolve('@redocly/cli/package.json');
const directory = mkdtempSync(path.join(tmpdir(), 'openapi-'));
const file = path.join(directory, 'openapi.json');
writeFileSync(file, JSON.stringify(buildOpenApiDocument(), null, 2));
const lint = spawnSync(
  process.execPath,
  [
    path.join(path.dirname(redoclyPackage), 'bin/cli.js'),
    'lint',
    file,
    '--config',
    path.join(gateway, 'redocly.yaml'),
  ],
  {
    stdio: 'inherit',
    env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' },
  },
);
rmSync(directory, { recursive: true, force: true });
process.exit(lint.status ?? 1);
