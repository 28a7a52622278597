import { randomBytes, randomUUID } from 'node:crypto';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { buildConsoleIfStale, eventually, startSystem } from '@payments/testkit';
import { launchTestBrowser, signIn } from '@payments/testkit/browser';

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
    const call = async (method: string, route: string, body?: object, token?: string) => {
      const response = await fetch(`${system.gatewayUrl}${route}`, {
        method,
        headers: {
          'content-type': 'application/json',
          'idempotency-key': randomUUID(),
          ...(token ? { authorization: `Bearer ${token}` } : {}),
        },
        ...(body ? { body: JSON.stringify(body) } : {}),
      });
      if (!response.ok) throw new Error(`${method} ${route}: ${response.status} ${await response.text()}`);
      return (await response.json()) as Record<string, unknown>;
    };
    const username = `payer_${randomBytes(3).toString('hex')}`;
    const password = `pw-${randomBytes(8).toString('hex')}`;
    await call('POST', '/user', { username, email: `${username}@example.com`, password });
    const { token } = (await call('POST', '/auth/login', { username, password })) as { token: string };
    const { id: accountId } = (await call('POST', '/account', { currency: 'USD' }, token)) as { id: string };
    const { id } = (await call(
      'POST',
      `/account/${accountId}/deposit`,
      { amount: 49.9, currency: 'USD' },
      token,
    )) as {
      id: string;
    };
    const shown = await eventually(
      () => call('GET', `/transaction/${id}`, undefined, token),
      (deposit) =>
        (deposit.provider_payment as { payment_url?: string } | undefined)?.payment_url !== undefined,
    );
    const paymentUrl = (shown.provider_payment as { payment_url: string }).payment_url;

    const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    const shot = async (name: string) => {
      await page.screenshot({ path: path.join(OUT, `${name}.png`), fullPage: true });
      console.log(`docs/images/console/${name}.png`);
    };
    await page.goto(paymentUrl);
    await signIn(page, { username, password });
    await page.getByLabel('Card number').fill('4000 0000 0000 0002');
    await page.getByLabel('Expiry').fill('12 / 34');
    await page.getByLabel('CVC').fill('123');
    await page.getByRole('button', { name: 'Pay' }).click();
    await page.getByText('Your card was declined.').waitFor();
    await shot('pay-declined');
    await page.getByLabel('Card number').fill('4242 4242 4242 4242');
    await page.getByRole('button', { name: 'Pay' }).click();
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
