import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { SERVICE_NAMES } from '@payments/infra';
import {
  committedReference,
  formattedReference,
  REFERENCE_FILE,
  renderConfigurationReference,
} from '../configuration-reference.js';

const ROOT = path.dirname(path.dirname(REFERENCE_FILE));

describe('the configuration reference (docs/configuration.md)', function () {
  this.timeout(30_000);

  it('is what the config schemas say (run `pnpm docs:config` after changing one)', async () => {
    expect(await committedReference()).to.equal(await formattedReference());
  });

  it('has a table for the launcher and each service, every variable described', () => {
    const reference = renderConfigurationReference();
    for (const section of ['pnpm start', ...SERVICE_NAMES]) expect(reference).to.contain(`\n## ${section}\n`);
    expect(reference).to.match(
      /\| `WEBHOOK_SECRETS` \| string \| unset \| .+ \| required, each at least 32 bytes; the development secret is refused \|/,
    );
  });

  it('is the only place a variable is documented in a table', () => {
    const variables = new Set(
      [...renderConfigurationReference().matchAll(/^\| `([A-Z][A-Z0-9_]+)` \|/gm)].map((match) => match[1]),
    );
    const others = execFileSync(
      'git',
      ['ls-files', '--cached', '--others', '--exclude-standard', '--', '*.md'],
      {
        cwd: ROOT,
        encoding: 'utf8',
      },
    )
      .split('\n')
      .filter((file) => file !== '' && file !== 'docs/configuration.md' && existsSync(path.join(ROOT, file)));
    const rows = others.flatMap((file) => {
      const text = readFileSync(path.join(ROOT, file), 'utf8');
      return [...text.matchAll(/^\|\s*`?([A-Z][A-Z0-9_]+)`?\s*\|/gm)]
        .filter((match) => variables.has(match[1]))
        .map((match) => `${file}: ${match[0]}`);
    });
    expect(rows).to.deep.equal([]);
  });
});
