import { createReadStream, createWriteStream } from 'node:fs';
import { access, mkdir, readFile, rename, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { createBrotliDecompress } from 'node:zlib';
import AxeBuilder from '@axe-core/playwright';
import { chromium, type Browser, type Page } from 'playwright-core';

// The flags the /docs test has always used. Not @sparticuz/chromium's own `args`: those suit AWS Lambda
// (--single-process, --disable-web-security, SwiftShader), and a test of a page's CSP needs web security on.
const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
];

const repositoryRoot = path.resolve(import.meta.dirname, '..', '..', '..');

/**
 * The headless Chromium inside the `@sparticuz/chromium` package (installed from the npm registry like any
 * dependency), unpacked once per package version under node_modules/.cache. CHROMIUM_PATH names another browser
 * instead, e.g. on a machine the package has no binary for (it ships linux-x64 only).
 */
export async function chromiumExecutable(): Promise<string> {
  if (process.env.CHROMIUM_PATH) return process.env.CHROMIUM_PATH;
  // The package exports only its entry point (build/cjs/index.cjs); its bin/ folder sits two levels above that.
  const packageDir = path.resolve(
    path.dirname(createRequire(import.meta.url).resolve('@sparticuz/chromium')),
    '..',
    '..',
  );
  const { version } = JSON.parse(await readFile(path.join(packageDir, 'package.json'), 'utf8')) as {
    version: string;
  };
  const directory = path.join(repositoryRoot, 'node_modules', '.cache', 'sparticuz-chromium', version);
  const executable = path.join(directory, 'chromium');
  if (await exists(executable)) return executable;
  await mkdir(directory, { recursive: true });
  // Unpacked beside and renamed into place, so a concurrent run or an interrupted one never sees half a binary.
  const partial = `${executable}.${process.pid}.partial`;
  try {
    await pipeline(
      createReadStream(path.join(packageDir, 'bin', 'chromium.br')),
      createBrotliDecompress(),
      createWriteStream(partial, { mode: 0o755 }),
    );
    await rename(partial, executable);
  } finally {
    await rm(partial, { force: true });
  }
  return executable;
}

export async function launchTestBrowser(): Promise<Browser> {
  return chromium.launch({ executablePath: await chromiumExecutable(), args: CHROMIUM_ARGS });
}

const exists = (file: string) =>
  access(file).then(
    () => true,
    () => false,
  );

/**
 * Runs axe-core (WCAG 2.x A and AA rules) on the page as it is now and fails, listing each, when it finds a
 * violation of serious or critical impact.
 */
export async function expectNoSeriousViolations(page: Page, what = page.url()): Promise<void> {
  const results = await new AxeBuilder({ page })
    .withTags(['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'])
    .analyze();
  const serious = results.violations.filter(
    (violation) => violation.impact === 'serious' || violation.impact === 'critical',
  );
  if (serious.length > 0) {
    const lines = serious.map(
      (violation) =>
        `${violation.impact} ${violation.id}: ${violation.help} (${violation.nodes
          .map((node) => node.target.join(' '))
          .slice(0, 5)
          .join('; ')})`,
    );
    throw new Error(`Accessibility violations on ${what}:\n${lines.join('\n')}`);
  }
}
