import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import type { Page } from 'playwright-core';
import {
  buildConsoleIfStale,
  eventually,
  findInfrastructure,
  startSystem,
  tapEvents,
} from '@payments/testkit';
import { launchTestBrowser } from '@payments/testkit/browser';
import { aPaymentConfirmation, rawApi, sandboxStripe, signUpWithAccount } from '@payments/test-support';

// `pnpm console:screenshots`: starts a system (PostgreSQL and RabbitMQ must answer, as for the tests), makes some
// data, and writes a screenshot of each console page to docs/images/console/.

const OUT = path.resolve(import.meta.dirname, '..', 'docs', 'images', 'console');
const admin = {
  username: `admin_${randomBytes(3).toString('hex')}`,
  email: `ops-${randomBytes(3).toString('hex')}@example.com`,
  password: `pw-${randomBytes(8).toString('hex')}`,
};

async function main() {
  await buildConsoleIfStale();
  await mkdir(OUT, { recursive: true });
  const system = await startSystem({
    serviceEnv: {
      identity: { ADMIN_USERNAME: admin.username, ADMIN_EMAIL: admin.email, ADMIN_PASSWORD: admin.password },
      'provider-sandbox': {
        SANDBOX_AUTO_CONFIRM: 'false',
        SANDBOX_FORGET_EVENTS: '1',
        SANDBOX_FORGET_EVENT_TYPES: 'payment_intent.succeeded',
      },
      ledger: { RECONCILIATION_INTERVAL_SECONDS: '0', RECONCILIATION_GRACE_SECONDS: '0' },
      'webhook-delivery': { WEBHOOK_ALLOW_PRIVATE_URLS: 'true', DELIVERY_TIMEOUT_MS: '500' },
    },
  });
  const tap = await tapEvents(
    (await findInfrastructure()).amqpUrl,
    system.environment('ledger').AMQP_NAMESPACE as string,
  );
  const browser = await launchTestBrowser();
  try {
    const stripe = sandboxStripe(system);
    const customers = [];
    for (let i = 0; i < 4; i++) customers.push(await signUpWithAccount(system.gatewayUrl));
    const [first, second, third] = customers as [
      (typeof customers)[0],
      (typeof customers)[0],
      (typeof customers)[0],
    ];
    await first.client.accounts.open({ currency: 'EUR' });
    // Paid at the provider, whose events the sandbox "loses": reconciliation finds each.
    for (const [customer, amount] of [
      [first, 120],
      [second, 45.5],
    ] as const) {
      const deposit = await customer.client.money.deposit(customer.accountId, { amount, currency: 'USD' });
      const shown = await eventually(
        () => customer.client.transactions.get(deposit.id),
        (transaction) => transaction.provider_payment !== undefined,
      );
      await stripe.paymentIntents.confirm(shown.provider_payment?.reference as string, {
        payment_method: 'pm_card_visa',
      });
    }
    // A confirmation stranded in the ledger's dead-letter queue, and a message that is not JSON.
    const stranded = await third.client.money.deposit(third.accountId, { amount: 9, currency: 'USD' });
    await tap.sendToQueue('ledger.events.dlq', JSON.stringify(aPaymentConfirmation(stranded.id, 900)));
    await tap.sendToQueue('ledger.events.dlq', '{"id": "not-an-event", ');
    // An endpoint nobody listens on: its deliveries fail and are retried.
    await second.client.webhookEndpoints.create({
      url: 'http://127.0.0.1:9/hooks/payments',
      events: ['account.created', 'transaction.completed'],
    });
    await second.client.accounts.open({ currency: 'GBP' });
    const api = rawApi(system);
    const token = (await api.post('/auth/login', { username: admin.username, password: admin.password })).body
      .token as string;
    await api.post('/admin/reconciliation/runs', {}, token);
    await api.request('PATCH', `/admin/users/${customers[3]?.userId}/status`, {
      token,
      body: { status: 'disabled', reason: 'Asked to close the account' },
    });

    const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    const shot = async (name: string) => {
      await page.screenshot({ path: path.join(OUT, `${name}.png`), fullPage: true });
      console.log(`docs/images/console/${name}.png`);
    };
    await page.goto(`${system.gatewayUrl}/console`);
    await page.getByLabel('Username').fill(admin.username);
    await shot('sign-in');
    await page.getByLabel('Password').fill(admin.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('navigation').waitFor();

    await open(page, 'Users');
    await page
      .getByRole('row', { name: new RegExp(first.username) })
      .getByRole('button', { name: /^Accounts/ })
      .click();
    await page
      .getByRole('table', { name: `Accounts of ${first.username}` })
      .getByRole('cell')
      .first()
      .waitFor();
    await shot('users');

    await open(page, 'Reconciliation');
    await page
      .getByRole('row', { name: /captured not credited/ })
      .first()
      .waitFor();
    await shot('reconciliation');
    await page
      .getByRole('row', { name: /captured not credited/ })
      .first()
      .getByRole('link')
      .click();
    await page.getByRole('button', { name: 'Decide this case' }).click();
    await page.getByRole('dialog').getByLabel('Reason').fill("The provider's records show the capture");
    await shot('reconciliation-case');
    await page.getByRole('dialog').getByRole('button', { name: 'Resolve' }).click();
    await page.locator('dl dt', { hasText: 'Decision' }).waitFor();

    await open(page, 'Dead letters');
    await page.getByRole('cell', { name: 'PaymentProcessed' }).waitFor();
    await shot('dead-letters');

    await open(page, 'Webhooks');
    await page
      .getByRole('row', { name: /hooks\/payments/ })
      .getByRole('button', { name: /^Deliveries/ })
      .click();
    await page
      .getByRole('row', { name: /account\.created/ })
      .first()
      .waitFor();
    await shot('webhooks');

    await open(page, 'Audit trail');
    await page.getByRole('cell', { name: 'Asked to close the account' }).waitFor();
    await shot('audit-trail');

    // The deposit the case above booked is completed by now; moving most of it to another account of its owner
    // leaves a card deposit whose money has left: a chargeback exposure on Losses.
    const completed = await eventually(
      () => api.get('/admin/transactions?type=deposit&status=completed', token),
      (response) => (response.body.data as unknown[]).length > 0,
      { timeoutMs: 10_000 },
    ).catch(() => null);
    const booked = (
      completed?.body.data as { id: string; user_id: string; amount: number }[] | undefined
    )?.[0];
    const owner = customers.find((customer) => customer.userId === booked?.user_id);
    if (booked && owner) {
      const { id: savings } = await owner.client.accounts.open({ currency: 'USD' });
      await owner.client.money.transfer(owner.accountId, {
        to_account_id: savings,
        amount: Math.floor(booked.amount * 0.8),
        currency: 'USD',
      });
    }

    await open(page, 'Overview');
    await page.getByRole('img', { name: 'Transactions created per minute' }).waitFor();
    await shot('overview');

    await open(page, 'Transactions');
    const results = page.getByRole('table', { name: /^Transactions/ });
    await results.getByRole('link').first().waitFor();
    await shot('transactions');
    const deposit = booked?.id ?? stranded.id;
    await page.getByLabel('Search').fill(deposit.slice(0, 8));
    await page.getByRole('button', { name: 'Find' }).click();
    await results.getByRole('link', { name: `Deposit ${deposit.slice(0, 8)}…` }).click();
    await page.getByRole('list', { name: 'Timeline, oldest first' }).waitFor();
    await shot('transaction');

    await open(page, 'Losses');
    await page.getByRole('table', { name: 'Exposure by user, largest first' }).waitFor();
    await shot('losses');
  } finally {
    await browser.close();
    await tap.close();
    await system.stop();
  }
}

async function open(page: Page, name: string): Promise<void> {
  await page.getByRole('navigation').getByRole('link', { name, exact: true }).click();
  await page.getByRole('heading', { level: 1, name }).waitFor();
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
