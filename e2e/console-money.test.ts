import { expect } from 'chai';
import type { Page } from 'playwright-core';
import {
  DELIVERY_TO_RECEIVER,
  eventually,
  startTestReceiver,
  useStarted,
  useSystem,
} from '@payments/testkit';
import { expectNoSeriousViolations, signIn, useTestBrowser } from '@payments/testkit/browser';
import { rawApi, signUp, signUpWithAccount, type Customer } from '@payments/test-support';

/**
 * The console's money pages in a browser, through the real system: a card deposit the sandbox pays, a withdrawal
 * and a transfer, then what the Overview counts, the deposit's timeline in order, and the payer's chargeback
 * exposure on Losses.
 */
describe('the console money pages in a browser: Overview, Transactions, Losses', function () {
  this.timeout(240_000);
  const system = useSystem(
    {
      serviceEnv: {
        'provider-sandbox': { SANDBOX_DELAY_MS: '200' },
        'webhook-delivery': DELIVERY_TO_RECEIVER,
      },
    },
    { admin: true },
  );
  const api = rawApi(system);
  const receiver = useStarted(startTestReceiver);
  // Each page: no console error (a refused script or style among them), no request beyond the gateway.
  const browser = useTestBrowser({
    checkVisit: (visit) => {
      expect(visit.problems, visit.problems.join('\n')).to.deep.equal([]);
      expect(visit.requested.filter((url) => !url.startsWith(system.gatewayUrl))).to.deep.equal([]);
    },
  });
  let payer: Customer;
  let depositId: string;

  const settled = (id: string) =>
    eventually(
      () => payer.client.transactions.get(id),
      (t) => t.status !== 'pending',
      { timeoutMs: 30_000 },
    );

  before(async () => {
    payer = await signUpWithAccount(system.gatewayUrl);
    await payer.client.webhookEndpoints.create({
      url: `${receiver.url}/console-money`,
      events: ['transaction.completed'],
    });
    const deposit = await api.post(
      `/account/${payer.accountId}/deposit`,
      { amount: 100, currency: 'USD', payment_method: 'pm_card_visa' },
      payer.token,
    );
    expect(deposit.status, deposit.text).to.equal(202);
    depositId = deposit.body.id as string;
    expect((await settled(depositId)).status).to.equal('completed');
    const withdrawal = await payer.client.money.withdraw(payer.accountId, { amount: 60, currency: 'USD' });
    expect((await settled(withdrawal.id)).status).to.equal('completed');
    const { id: savings } = await payer.client.accounts.open({ currency: 'USD' });
    const transfer = await payer.client.money.transfer(payer.accountId, {
      to_account_id: savings,
      amount: 5,
      currency: 'USD',
    });
    expect((await settled(transfer.id)).status).to.equal('completed');
    // The deposit's completion reached the payer's endpoint, so its timeline has the delivery.
    await receiver.waitForCalls('/console-money', (calls) =>
      calls.some((call) => call.body.includes(depositId)),
    );
  });

  async function visit(path: string, who: { username: string; password: string }): Promise<Page> {
    const { page } = await browser.visit(`${system.gatewayUrl}${path}`);
    await signIn(page, who);
    return page;
  }
  const asAdmin = (path: string) => visit(path, system.admin);

  /** The cells of a table's row named by its header cell, as text. */
  const rowOf = async (page: Page, table: string, row: string) => {
    const found = page.getByRole('table', { name: table }).getByRole('row', { name: row });
    return found.getByRole('cell').allInnerTexts();
  };

  it('charts the hour on the Overview, with the deposit, withdrawal and transfer in its figures', async () => {
    const page = await asAdmin('/console/overview');
    await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor();
    await page.getByRole('img', { name: 'Transactions created per minute' }).waitFor();
    await page.getByRole('img', { name: 'Failure and decline rates per minute' }).waitFor();
    expect(await rowOf(page, 'Transactions in the window', 'Deposits')).to.deep.equal(['1', '1', '0']);
    expect(await rowOf(page, 'Transactions in the window', 'Withdrawals')).to.deep.equal(['1', '1', '0']);
    expect(await rowOf(page, 'Transactions in the window', 'Transfers')).to.deep.equal(['1', '1', '0']);
    await page.getByText('Deposits: 1, Withdrawals: 1, Transfers: 1').waitFor();
    // The current figures: every gauge answered, none shown as unavailable.
    expect(await page.getByText('Unavailable').count()).to.equal(0);
    expect(await rowOf(page, 'Queues', 'ledger')).to.have.length(2);
    await expectNoSeriousViolations(page, 'the Overview');

    // The charts' figures as text, per minute: one bucket holds the deposit.
    await page.getByText('Figures per minute').click();
    const perMinute = page.getByRole('table', { name: /per minute, newest first/ });
    expect(await perMinute.getByRole('row').count()).to.equal(61);
    await expectNoSeriousViolations(page, 'the Overview with its figures open');

    await page.getByRole('button', { name: 'Last day' }).click();
    await page.getByRole('img', { name: 'Transactions created per 15 minutes' }).waitFor();
    expect(await page.getByRole('button', { name: 'Last day' }).getAttribute('aria-pressed')).to.equal(
      'true',
    );
    expect(await rowOf(page, 'Transactions in the window', 'Deposits')).to.deep.equal(['1', '1', '0']);
  });

  it('finds the deposit by the start of its id and shows its timeline in order', async () => {
    const page = await asAdmin('/console/overview');
    await page.getByRole('navigation').getByRole('link', { name: 'Transactions', exact: true }).click();
    await page.getByRole('heading', { level: 1, name: 'Transactions' }).waitFor();
    await page.getByLabel('Search').fill(depositId.slice(0, 8));
    await page.getByRole('button', { name: 'Find' }).click();
    const name = `Deposit ${depositId.slice(0, 8)}…`;
    const link = page.getByRole('table', { name: /Transactions/ }).getByRole('link', { name });
    await link.waitFor();
    expect(
      await page
        .getByRole('table', { name: /Transactions/ })
        .getByRole('link')
        .count(),
    ).to.equal(1);
    await expectNoSeriousViolations(page, 'Transactions');
    await link.click();

    await page.getByRole('heading', { level: 1, name }).waitFor();
    expect(new URL(page.url()).pathname).to.equal(`/console/transactions/${depositId}`);
    const timeline = page.getByRole('list', { name: 'Timeline, oldest first' });
    await timeline.waitFor();
    const kinds = await timeline.locator('.timeline-kind').allInnerTexts();
    const expected = ['Created', 'Provider request', 'Provider event', 'Posting', 'Webhook delivery'];
    const firsts = expected.map((kind) => kinds.indexOf(kind));
    expect(firsts, kinds.join(', ')).to.not.include(-1);
    expect(firsts).to.deep.equal([...firsts].sort((a, b) => a - b));
    const times = await timeline
      .locator('time')
      .evaluateAll((nodes) => nodes.map((node) => node.getAttribute('datetime') ?? ''));
    expect(times).to.deep.equal([...times].sort());
    expect(await page.getByText(/^Unavailable:/).count()).to.equal(0);
    await expectNoSeriousViolations(page, 'the transaction page');

    // The owner links to the owner's transactions: the three of them and the transfer's credit.
    await page.getByRole('link', { name: payer.userId }).click();
    await page.getByRole('heading', { level: 1, name: 'Transactions' }).waitFor();
    expect(await page.getByLabel('User').inputValue()).to.equal(payer.userId);
    await page.getByRole('link', { name }).waitFor();
  });

  it('lists the payer under chargeback exposure on Losses, linking to them', async () => {
    const page = await asAdmin('/console/losses');
    await page.getByRole('heading', { level: 1, name: 'Losses' }).waitFor();
    const byUser = page.getByRole('table', { name: 'Exposure by user, largest first' });
    await byUser.waitFor();
    const row = byUser.getByRole('row', { name: new RegExp(payer.userId) });
    expect(await row.getByRole('cell').allInnerTexts()).to.deep.equal([
      payer.userId,
      '65 USD',
      '100 USD',
      '35 USD',
    ]);
    expect(await rowOf(page, 'Exposure by currency', 'USD')).to.deep.equal(['65 USD', '1', '100 USD']);
    const losses = page.getByRole('table', { name: 'Losses and overdrawn accounts by currency' });
    await losses.getByText('No loss and no overdrawn account.').waitFor();
    await page
      .getByRole('table', { name: 'Overdrawn accounts' })
      .getByText('No account is overdrawn.')
      .waitFor();
    await expectNoSeriousViolations(page, 'Losses');
    await row.getByRole('link', { name: payer.userId }).click();
    await page.getByRole('heading', { level: 1, name: 'Transactions' }).waitFor();
    expect(new URL(page.url()).searchParams.get('user_id')).to.equal(payer.userId);
  });

  it('marks what a stopped service could not answer as unavailable, on the Overview and the timeline', async () => {
    await system.kill('webhook-delivery');
    try {
      const page = await asAdmin('/console/overview');
      await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor();
      await page.getByText('Some figures are unavailable').waitFor();
      const figures = page.getByRole('region', { name: 'Now' });
      // The pending deliveries are not zero but unknown; the activity, from the ledger's books, is all there.
      expect(await figures.getByRole('definition').allInnerTexts()).to.include('Unavailable');
      expect(await rowOf(page, 'Transactions in the window', 'Deposits')).to.deep.equal(['1', '1', '0']);
      await expectNoSeriousViolations(page, 'the Overview with a part missing');

      await page.goto(`${system.gatewayUrl}/console/transactions/${depositId}`);
      await signIn(page, system.admin);
      await page.getByText(/^Unavailable: the outgoing webhook events and deliveries/).waitFor();
      const kinds = await page
        .getByRole('list', { name: 'Timeline, oldest first' })
        .locator('.timeline-kind')
        .allInnerTexts();
      expect(kinds).to.include('Provider event');
      expect(kinds).not.to.include('Webhook delivery');
      await expectNoSeriousViolations(page, 'a timeline with a part missing');
    } finally {
      await system.restart('webhook-delivery');
    }
  });

  it('shows a user who opens a transaction page "Administrators only", asking the API for nothing of it', async () => {
    const user = await signUp(system.gatewayUrl);
    const page = await visit(`/console/transactions/${depositId}`, user);
    await page.getByRole('heading', { level: 1, name: 'Administrators only' }).waitFor();
    const visited = browser.visits[browser.visits.length - 1];
    expect(visited?.requested.filter((url) => url.includes('/admin/'))).to.deep.equal([]);
    expect(await page.getByText(depositId.slice(0, 8)).count()).to.equal(0);
    // The API is the judge: the user's own token asking for the timeline is refused.
    const refused = await api.get(`/admin/transactions/${depositId}/timeline`, user.token);
    expect(refused.status).to.equal(403);
    expect(refused.text).not.to.contain(payer.userId);
  });
});
