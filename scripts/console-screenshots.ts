import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Page } from 'playwright-core';
import { createPaymentsClient } from '@payments/client';
import { buildConsoleIfStale, eventually, startSystem, type TestSystem } from '@payments/testkit';
import { launchTestBrowser } from '@payments/testkit/browser';
import { signUpWithAccount, type Customer } from '@payments/test-support';

/**
 * Takes the screenshots docs/console.md shows: starts a whole system as the tests do (real PostgreSQL and
 * RabbitMQ), makes a little activity through the API, signs an admin in to the console and saves each page as a
 * PNG in docs/console/. Run: node --conditions=development --import tsx scripts/console-screenshots.ts
 */

const OUT = fileURLToPath(new URL('../docs/console/', import.meta.url));
const ADMIN = { username: 'operator', email: 'operator@example.com', password: 'screenshots-only-password' };

/** One entry a page: its file and how to bring the page to what the screenshot shows. */
interface Shot {
  file: string;
  open: (page: Page, context: Shots) => Promise<void>;
}
interface Shots {
  gatewayUrl: string;
  depositId: string;
}

const nav = async (page: Page, name: string) => {
  await page.getByRole('navigation').getByRole('link', { name, exact: true }).click();
  await page.getByRole('heading', { level: 1, name, exact: true }).waitFor();
};

const SHOTS: Shot[] = [
  {
    file: 'overview.png',
    open: async (page) => {
      await nav(page, 'Overview');
      await page.getByRole('img', { name: 'Transactions created per minute' }).waitFor();
    },
  },
  {
    file: 'transactions.png',
    open: async (page) => {
      await nav(page, 'Transactions');
      await page
        .getByRole('table', { name: /Transactions/ })
        .getByRole('link')
        .first()
        .waitFor();
    },
  },
  {
    file: 'transaction.png',
    open: async (page, { depositId }) => {
      await page.getByLabel('Search').fill(depositId.slice(0, 8));
      await page.getByRole('button', { name: 'Find' }).click();
      await page.getByRole('link', { name: `Deposit ${depositId.slice(0, 8)}…` }).click();
      await page.getByRole('list', { name: 'Timeline, oldest first' }).waitFor();
    },
  },
  {
    file: 'losses.png',
    open: async (page) => {
      await nav(page, 'Losses');
      await page.getByRole('table', { name: 'Exposure by user, largest first' }).waitFor();
    },
  },
];

/** A card deposit the sandbox pays, part of it withdrawn (an exposure), and a transfer: something to show. */
async function makeActivity(system: TestSystem): Promise<string> {
  const payer: Customer = await signUpWithAccount(system.gatewayUrl);
  const settled = (id: string) =>
    eventually(
      () => payer.client.transactions.get(id),
      (t) => t.status !== 'pending',
      { timeoutMs: 30_000 },
    );
  const deposit = await payer.client.money.deposit(payer.accountId, {
    amount: 120,
    currency: 'USD',
    reference: 'order-8812',
    metadata: { order: '8812' },
  });
  await settled(deposit.id);
  await settled((await payer.client.money.withdraw(payer.accountId, { amount: 70, currency: 'USD' })).id);
  const { id: savings } = await payer.client.accounts.open({ currency: 'USD' });
  const transfer = await payer.client.money.transfer(payer.accountId, {
    to_account_id: savings,
    amount: 15,
    currency: 'USD',
  });
  await settled(transfer.id);
  // The admin client sees the deposit's timeline complete before the screenshots are taken.
  const admin = createPaymentsClient({
    baseUrl: system.gatewayUrl,
    credentials: { username: ADMIN.username, password: ADMIN.password },
  });
  await eventually(
    () => admin.admin.transactions.timeline(deposit.id),
    (timeline) => timeline.entries.some((entry) => entry.kind === 'posting'),
  );
  return deposit.id;
}

async function main(): Promise<void> {
  await buildConsoleIfStale();
  const system = await startSystem({
    serviceEnv: {
      identity: { ADMIN_USERNAME: ADMIN.username, ADMIN_EMAIL: ADMIN.email, ADMIN_PASSWORD: ADMIN.password },
    },
  });
  const browser = await launchTestBrowser();
  try {
    const context: Shots = { gatewayUrl: system.gatewayUrl, depositId: await makeActivity(system) };
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    await page.goto(`${system.gatewayUrl}/console`);
    await page.getByLabel('Username').fill(ADMIN.username);
    await page.getByLabel('Password').fill(ADMIN.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('navigation').waitFor();
    await mkdir(OUT, { recursive: true });
    for (const shot of SHOTS) {
      await shot.open(page, context);
      await page.screenshot({ path: path.join(OUT, shot.file), fullPage: true });
      console.log(`wrote docs/console/${shot.file}`);
    }
  } finally {
    await browser.close();
    await system.stop();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
