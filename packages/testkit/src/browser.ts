import { createReadStream, createWriteStream } from 'node:fs';
import { access, mkdir, readFile, rename, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { createBrotliDecompress } from 'node:zlib';
import AxeBuilder from '@axe-core/playwright';
import { chromium, type Browser, type BrowserContext, type Page, type Response } from 'playwright-core';

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

/** A page opened in a browser context of its own (no storage shared with another), and what it did since. */
export interface Visit {
  context: BrowserContext;
  page: Page;
  /** Uncaught page errors, and console errors but those the browser was told to ignore. */
  problems: string[];
  /** Every URL the page requested. */
  requested: string[];
  /** The answer to the address opened (200, or the visit fails). */
  response: Response;
}

export interface TestBrowserOptions {
  /** Console errors that are no problem here, e.g. the browser's own line for each 4xx it was answered. */
  ignoreConsoleError?: (text: string) => boolean;
  /** Run on each of a test's visits once it ends, before its context closes: e.g. that it had no problems. */
  checkVisit?: (visit: Visit) => void;
}

/**
 * In a mocha suite: one Chromium for its tests (launched before them, closed after), and `visit`, which opens an
 * address in a fresh context, closed once the test ends. `visits` are the current test's, in order.
 */
export function useTestBrowser(options: TestBrowserOptions = {}): {
  /** `prepare` runs on the new context before the page opens, e.g. to route requests (`context.route`). */
  visit(url: string, prepare?: (context: BrowserContext) => Promise<void>): Promise<Visit>;
  readonly visits: readonly Visit[];
} {
  let browser: Browser | undefined;
  const visits: Visit[] = [];
  before(async () => {
    browser = await launchTestBrowser();
  });
  afterEach(async () => {
    const ended = visits.splice(0);
    try {
      for (const visit of ended) options.checkVisit?.(visit);
    } finally {
      for (const visit of ended) await visit.context.close();
    }
  });
  after(async () => {
    await browser?.close();
  });
  return {
    visits,
    async visit(url, prepare) {
      if (!browser) throw new Error('useTestBrowser: visit() is for tests, once the browser has launched');
      const context = await browser.newContext();
      await prepare?.(context);
      const page = await context.newPage();
      const problems: string[] = [];
      const requested: string[] = [];
      page.on('console', (message) => {
        if (message.type() === 'error' && !options.ignoreConsoleError?.(message.text()))
          problems.push(message.text());
      });
      page.on('pageerror', (error) => problems.push(error.message));
      page.on('request', (request) => requested.push(request.url()));
      const opening = { context, page, problems, requested };
      visits.push(opening as Visit);
      const response = await page.goto(url);
      if (response?.status() !== 200) throw new Error(`${url} answered ${response?.status() ?? 'nothing'}`);
      return Object.assign(opening, { response });
    },
  };
}

/** Signs in on the sign-in form the console and the payment page share, by its labels. */
export async function signIn(page: Page, who: { username: string; password: string }): Promise<void> {
  await page.getByLabel('Username').fill(who.username);
  await page.getByLabel('Password').fill(who.password);
  await page.getByRole('button', { name: 'Sign in' }).click();
}

/** Pays on the payment page's card form, by its labels: `number`, a valid expiry and CVC, then "Pay". */
export async function payByCard(page: Page, number: string): Promise<void> {
  await page.getByLabel('Card number').fill(number);
  await page.getByLabel('Expiry').fill('12 / 34');
  await page.getByLabel('CVC').fill('123');
  await page.getByRole('button', { name: 'Pay' }).click();
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
