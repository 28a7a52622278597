import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { buildConsoleIfStale, startSystem } from '@payments/testkit';
import { launchTestBrowser, payByCard, signIn } from '@payments/testkit/browser';
import { depositToPay, signUpWithAccount } from '@payments/test-support';

// `node --conditions=development --import tsx scripts/payment-page-screenshots.ts`: starts a system (PostgreSQL and
// RabbitMQ must answer, as for the tests) whose sandbox waits for the payer, makes a deposit, and writes screenshots
// of its payment page to docs/images/console/.

const OUT = path.resolve(import.meta.dirname, '..', 'docs', 'images', 'console');

async function main() {
  await buildConsoleIfStale();
  await mkdir(OUT, { recursive: true });
  const system = await startSystem({ serviceEnv: { 'provider-sandbox': { SANDBOX_AUTO_CONFIRM: 'false' } } });
  const browser = await launchTestBrowser();
  try {
    const payer = await signUpWithAccount(system.gatewayUrl);
    const { paymentUrl } = await depositToPay(payer, 49.9);

    const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    const shot = async (name: string) => {
      await page.screenshot({ path: path.join(OUT, `${name}.png`), fullPage: true });
      console.log(`docs/images/console/${name}.png`);
    };
    await page.goto(paymentUrl);
    await signIn(page, payer);
    await payByCard(page, '4000 0000 0000 0002');
    await page.getByText('Your card was declined.').waitFor();
    await shot('pay-declined');
    await payByCard(page, '4242 4242 4242 4242');
    await page.getByText('The deposit is completed.').waitFor({ timeout: 20_000 });
    await shot('pay-completed');
  } finally {
    await browser.close();
    await system.stop();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
