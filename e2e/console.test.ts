import { expect } from 'chai';
import {
  DELIVERY_TO_RECEIVER,
  eventually,
  findInfrastructure,
  startTestReceiver,
  tapEvents,
  type EventTap,
  useStarted,
  useSystem,
} from '@payments/testkit';
import { expectNoSeriousViolations, signIn, useTestBrowser } from '@payments/testkit/browser';
import {
  aPaymentConfirmation,
  rawApi,
  sandboxStripe,
  signUp,
  signUpWithAccount,
} from '@payments/test-support';

const PAGES = [
  ['Overview', '/console/overview'],
  ['Users', '/console/users'],
  ['Transactions', '/console/transactions'],
  ['Reconciliation', '/console/reconciliation'],
  ['Losses', '/console/losses'],
  ['Dead letters', '/console/dead-letters'],
  ['Webhooks', '/console/webhooks'],
  ['Audit trail', '/console/audit-trail'],
] as const;

describe('the operator console in a browser, through the real system', function () {
  this.timeout(180_000);
  let tap: EventTap | undefined;
  const system = useSystem(
    {
      serviceEnv: {
        // Deposits wait for the test, and the sandbox "loses" the capture's event: reconciliation finds it.
        'provider-sandbox': {
          SANDBOX_AUTO_CONFIRM: 'false',
          SANDBOX_FORGET_EVENTS: '1',
          SANDBOX_FORGET_EVENT_TYPES: 'payment_intent.succeeded',
        },
        ledger: { RECONCILIATION_INTERVAL_SECONDS: '0', RECONCILIATION_GRACE_SECONDS: '0' },
        'webhook-delivery': DELIVERY_TO_RECEIVER,
      },
    },
    { admin: true, beforeStop: () => tap?.close() },
  );
  const api = rawApi(system);
  const receiver = useStarted(startTestReceiver);
  const browser = useTestBrowser();
  const visit = (path = '/console') => browser.visit(`${system.gatewayUrl}${path}`);

  const signInAsAdmin = async (path?: string) => {
    const opened = await visit(path);
    await signIn(opened.page, system.admin);
    await opened.page.getByRole('navigation').waitFor();
    return opened;
  };

  it('signs an admin in and shows every page by its nav link, each with its name as h1 and no serious axe violation', async () => {
    const { page, problems, requested } = await visit();
    await expectNoSeriousViolations(page, 'the sign-in form');
    await signIn(page, system.admin);
    const nav = page.getByRole('navigation');
    await nav.waitFor();
    for (const [name, path] of PAGES) {
      await nav.getByRole('link', { name, exact: true }).click();
      await page.getByRole('heading', { level: 1, name, exact: true }).waitFor();
      expect(new URL(page.url()).pathname).to.equal(path);
      expect(await nav.getByRole('link', { name, exact: true }).getAttribute('aria-current')).to.equal(
        'page',
      );
      await expectNoSeriousViolations(page, name);
    }
    // A route opened directly (a bookmark, a reload) is the same page; a reload ends the session.
    await page.goto(`${system.gatewayUrl}/console/webhooks`);
    await page.getByRole('button', { name: 'Sign in' }).waitFor();
    await signIn(page, system.admin);
    await page.getByRole('heading', { level: 1, name: 'Webhooks' }).waitFor();

    expect(problems, problems.join('\n')).to.deep.equal([]);
    expect(requested.filter((url) => !url.startsWith(system.gatewayUrl))).to.deep.equal([]);
  });

  it('keeps the token in memory only: nothing in localStorage, sessionStorage or cookies', async () => {
    const { page, context } = await signInAsAdmin();
    await page.getByRole('link', { name: 'Users', exact: true }).click();
    await page.getByRole('heading', { level: 1, name: 'Users' }).waitFor();
    // A string: this program's types have no DOM.
    const stored = await page.evaluate(
      '({ local: localStorage.length, session: sessionStorage.length, cookie: document.cookie })',
    );
    expect(stored).to.deep.equal({ local: 0, session: 0, cookie: '' });
    expect(await context.cookies()).to.deep.equal([]);
  });

  it('shows a non-admin "Administrators only" and nothing else, and revokes their token', async () => {
    const user = await signUp(system.gatewayUrl);
    const { page } = await visit('/console/users');
    let sent: string | undefined;
    page.on('request', (request) => {
      if (request.url().endsWith('/auth/logout')) sent = request.headers().authorization;
    });
    await signIn(page, user);
    await page.getByRole('heading', { level: 1, name: 'Administrators only' }).waitFor();
    expect(await page.getByRole('navigation').count()).to.equal(0);
    expect(await page.getByRole('table').count()).to.equal(0);
    await expectNoSeriousViolations(page, 'Administrators only');
    // The token the page was given no longer works anywhere.
    expect(sent).to.match(/^Bearer /);
    const refused = await api.get(`/user/${user.userId}`, (sent as string).slice('Bearer '.length));
    expect(refused.status).to.equal(401);
  });

  it('signs out, and goes back to the sign-in form when the API refuses the token', async () => {
    const { page } = await signInAsAdmin();
    let token: string | undefined;
    page.on('request', (request) => {
      const authorization = request.headers().authorization;
      if (authorization) token = authorization.slice('Bearer '.length);
    });
    await page.getByRole('link', { name: 'Audit trail', exact: true }).click();
    await page.getByRole('heading', { level: 1, name: 'Audit trail' }).waitFor();
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('button', { name: 'Sign in' }).waitFor();
    expect(token).to.be.a('string');
    expect((await api.get('/admin/actions', token)).status).to.equal(401);

    // Revoked behind the page's back (another tab's sign-out): the next call is refused, and the page signs out.
    await signIn(page, system.admin);
    await page.getByRole('navigation').waitFor();
    await page.getByRole('link', { name: 'Users', exact: true }).click();
    await page.getByRole('heading', { level: 1, name: 'Users' }).waitFor();
    const current = token as string;
    expect((await api.post('/auth/logout', undefined, current)).status).to.equal(204);
    await page.getByRole('link', { name: 'Audit trail', exact: true }).click();
    await page.getByRole('button', { name: 'Sign in' }).waitFor();
    await page.getByText('Your session has ended').waitFor();
  });

  it('serves every console response under the strict policy', async () => {
    const { page } = await visit('/console/users');
    const response = await page.goto(`${system.gatewayUrl}/console/users`);
    expect(response?.headers()['content-security-policy']).to.equal(
      "default-src 'none';script-src 'self';style-src 'self';img-src 'self' data:;connect-src 'self';" +
        "font-src 'self';base-uri 'none';form-action 'self';frame-ancestors 'none'",
    );
  });
  it('finds a user by the start of their username, shows their accounts, and disables and enables them', async () => {
    const customer = await signUpWithAccount(system.gatewayUrl);
    const { page } = await signInAsAdmin('/console/users');
    await page.getByRole('heading', { level: 1, name: 'Users' }).waitFor();
    await page.getByLabel('Search').fill(customer.username.slice(0, 9));
    await page.getByRole('button', { name: 'Find' }).click();
    const row = page.getByRole('row', { name: new RegExp(customer.username) });
    await row.waitFor();
    expect(await row.getByRole('cell', { name: 'active', exact: true }).count()).to.equal(1);

    await row.getByRole('button', { name: /^Accounts/ }).click();
    const accounts = page.getByRole('table', { name: `Accounts of ${customer.username}` });
    await accounts.getByRole('cell', { name: customer.accountId }).waitFor();
    await expectNoSeriousViolations(page, 'Users with accounts');

    await row.getByRole('button', { name: /^Disable/ }).click();
    const dialog = page.getByRole('dialog');
    await dialog.getByLabel('Reason').fill('Chargebacks on three deposits');
    await expectNoSeriousViolations(page, 'the disable dialog');
    await dialog.getByRole('button', { name: 'Disable' }).click();
    await row.getByRole('cell', { name: 'disabled', exact: true }).waitFor();
    const refused = await api.get(`/user/${customer.userId}`, customer.token);
    expect(refused.status).to.be.oneOf([401, 403]);
    const trail = await api.get(`/admin/actions?owner=${customer.userId}`, system.admin.token);
    expect(trail.body.data.map((action: { reason: string }) => action.reason)).to.include(
      'Chargebacks on three deposits',
    );

    await row.getByRole('button', { name: /^Enable/ }).click();
    await page.getByRole('dialog').getByLabel('Reason').fill('Cleared by the risk team');
    await page.getByRole('dialog').getByRole('button', { name: 'Enable' }).click();
    await row.getByRole('cell', { name: 'active', exact: true }).waitFor();
  });

  it('resolves a reconciliation case the sandbox made, with a decision and a reason, after starting a run', async () => {
    const { client } = await signUp(system.gatewayUrl);
    const account = (await client.accounts.open({ currency: 'USD' })).id;
    const deposit = await client.money.deposit(account, { amount: 25, currency: 'USD' });
    const shown = await eventually(
      () => client.transactions.get(deposit.id),
      (transaction) => transaction.provider_payment !== undefined,
    );
    const reference = shown.provider_payment?.reference as string;
    // Paid at the provider, whose payment_intent.succeeded the sandbox then "loses".
    await sandboxStripe(system).paymentIntents.confirm(reference, { payment_method: 'pm_card_visa' });
    await eventually(
      async () =>
        (await rawApi(system.urls['provider-sandbox']).get('/sandbox/forgotten-events', system.sandboxApiKey))
          .body as { data: { transaction_id: string }[] },
      (forgotten) => forgotten.data.some((event) => event.transaction_id === deposit.id),
    );

    const { page } = await signInAsAdmin('/console/reconciliation');
    await page.getByRole('heading', { level: 1, name: 'Reconciliation' }).waitFor();
    await page.getByRole('button', { name: 'Start a run' }).click();
    await page.getByRole('status').filter({ hasText: 'Run finished' }).waitFor();
    const row = page.getByRole('row', { name: new RegExp(reference) });
    await row.waitFor();
    expect(await row.innerText())
      .to.match(/captured not credited/)
      .and.to.match(/25 USD/);
    await expectNoSeriousViolations(page, 'Reconciliation');

    await row.getByRole('link', { name: reference }).click();
    await page.getByRole('heading', { level: 2, name: /^Case / }).waitFor();
    await page.getByRole('button', { name: 'Decide this case' }).click();
    const dialog = page.getByRole('dialog');
    await dialog.getByLabel('Decision').selectOption('book');
    await dialog.getByLabel('Reason').fill("The provider's records show the capture");
    await expectNoSeriousViolations(page, 'the resolve dialog');
    await dialog.getByRole('button', { name: 'Resolve' }).click();
    await page.locator('dl dt', { hasText: 'Decision' }).waitFor();
    expect(await page.getByRole('dialog').count()).to.equal(0);
    const figures = await page.locator('dl').innerText();
    expect(figures).to.match(/Decision\s+book/);
    expect(figures).to.include("The provider's records show the capture");
    expect(await page.getByRole('button', { name: 'Decide this case' }).count()).to.equal(0);
    expect((await client.transactions.get(deposit.id)).status).to.equal('completed');
  });

  it('shows the dead letters of a queue and replays them, which the consumer then takes', async () => {
    tap ??= await tapEvents(
      (await findInfrastructure()).amqpUrl,
      system.environment('ledger').AMQP_NAMESPACE as string,
    );
    const customer = await signUpWithAccount(system.gatewayUrl);
    const deposit = await customer.client.money.deposit(customer.accountId, { amount: 7, currency: 'USD' });
    const stranded = aPaymentConfirmation(deposit.id, 700);
    await tap.sendToQueue('ledger.events.dlq', JSON.stringify(stranded));

    const { page } = await signInAsAdmin('/console/dead-letters');
    await page.getByRole('heading', { level: 1, name: 'Dead letters' }).waitFor();
    const queue = page.getByRole('row', { name: /^ledger/ });
    await queue.getByRole('cell', { name: '1', exact: true }).waitFor();
    await page.getByLabel('Search').fill(stranded.id);
    await page.getByRole('button', { name: 'Find' }).click();
    await page.getByRole('cell', { name: 'PaymentProcessed' }).waitFor();
    await expectNoSeriousViolations(page, 'Dead letters');

    await queue.getByRole('button', { name: /^Replay/ }).click();
    await page.getByRole('dialog').getByLabel('Reason').fill('The ledger bug is fixed');
    await page.getByRole('dialog').getByRole('button', { name: 'Replay' }).click();
    await page.getByRole('status').filter({ hasText: 'Replayed 1 dead letter of ledger' }).waitFor();
    const settled = await eventually(
      () => customer.client.transactions.get(deposit.id),
      (transaction) => transaction.status !== 'pending',
    );
    expect(settled.status).to.equal('completed');
  });

  it("lists a user's webhook endpoint and its deliveries, and sends a delivery again", async () => {
    const customer = await signUp(system.gatewayUrl);
    const created = await customer.client.webhookEndpoints.create({
      url: `${receiver.url}/console-hook`,
      events: ['account.created'],
    });
    await customer.client.accounts.open({ currency: 'USD' });
    await receiver.waitForCalls('/console-hook');

    const { page } = await signInAsAdmin('/console/webhooks');
    await page.getByRole('heading', { level: 1, name: 'Webhooks' }).waitFor();
    await page.getByLabel('Search').fill(customer.userId);
    await page.getByRole('button', { name: 'Find' }).click();
    const endpoint = page.getByRole('row', { name: new RegExp(created.url) });
    await endpoint.getByRole('button', { name: /^Deliveries/ }).click();
    const delivery = page.getByRole('row', { name: /account\.created/ });
    await delivery.getByRole('cell', { name: 'succeeded' }).waitFor();
    await expectNoSeriousViolations(page, 'Webhooks with deliveries');

    await delivery.getByRole('button', { name: /^Redeliver/ }).click();
    await page.getByRole('dialog').getByLabel('Reason').fill('The receiver lost it');
    await page.getByRole('dialog').getByRole('button', { name: 'Send again' }).click();
    await page.getByRole('status').filter({ hasText: 'Sent account.created again' }).waitFor();
    await receiver.waitForCalls('/console-hook', (calls) => calls.length >= 2);
  });
});
