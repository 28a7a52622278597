import { expect } from 'chai';
import type { Page } from 'playwright-core';
import { eventually, useSystem } from '@payments/testkit';
import { expectNoSeriousViolations, payByCard, signIn, useTestBrowser } from '@payments/testkit/browser';
import { depositToPay, sandboxStripe, signUpWithAccount, type Customer } from '@payments/test-support';

/**
 * The payment page (`/pay/{transaction_id}`, ADR 0128) in a real browser, through the real system, with the
 * sandbox as the provider: the payer signs in, a declined card can be retried, the paid deposit completes once.
 */
describe('the payment page in a browser, through the real system', function () {
  this.timeout(180_000);
  // Nobody pays on their own here: only the payer, on the page.
  const system = useSystem(
    { serviceEnv: { 'provider-sandbox': { SANDBOX_AUTO_CONFIRM: 'false' } } },
    { admin: true, booksBalance: true },
  );
  // Console errors but the browser's own line for each 4xx answer it received.
  const browser = useTestBrowser({
    ignoreConsoleError: (text) => text.startsWith('Failed to load resource'),
  });

  const gatewayOrigin = () => new URL(system.gatewayUrl).origin;
  const sandboxOrigin = () => new URL(system.urls['provider-sandbox']).origin;

  /** A deposit's payment page in a fresh browser context, with the policy it was served with. */
  async function visit(url: string) {
    const opened = await browser.visit(url);
    return { ...opened, policy: opened.response.headers()['content-security-policy'] };
  }

  /** The text of the element that has the focus (a string: this program's types have no DOM). */
  const focused = (page: Page) =>
    page.evaluate('document.activeElement?.textContent ?? ""') as Promise<string>;

  const balanceOf = async (who: Customer) => (await who.client.balances.get(who.accountId)).balance;

  it('declines 4000 0000 0000 0002 with its message, then takes 4242 4242 4242 4242 and completes the deposit once', async () => {
    const payer = await signUpWithAccount(system.gatewayUrl);
    const { id, paymentUrl } = await depositToPay(payer, 25);
    expect(new URL(paymentUrl).origin).to.equal(gatewayOrigin());
    const { page, context, problems, requested, policy } = await visit(paymentUrl);

    // Served under the page's own policy: nothing inline, calls to the gateway and the sandbox alone.
    expect(policy).to.be.a('string');
    expect(policy).not.to.match(/unsafe-inline|unsafe-eval|\*/);
    const connect = (policy as string).split('; ').find((directive) => directive.startsWith('connect-src '));
    expect(connect).to.equal(`connect-src 'self' ${sandboxOrigin()}`);

    await expectNoSeriousViolations(page, 'the sign-in form');
    await signIn(page, payer);
    await page.getByLabel('Card number').waitFor();
    const figures = page.locator('dl');
    expect(await figures.innerText()).to.match(/Amount\s+25\.00\s+Currency\s+USD\s+Status\s+pending/);
    await expectNoSeriousViolations(page, 'the card form');

    await payByCard(page, '4000 0000 0000 0002');
    await page.getByText('Your card was declined.').waitFor();
    expect(await focused(page), 'the outcome has the focus').to.include('Your card was declined.');
    expect(await page.locator('[aria-live]').innerText()).to.include('Your card was declined.');
    await expectNoSeriousViolations(page, 'a declined card');
    expect(await balanceOf(payer)).to.equal(0);

    // The form stays for another card.
    await payByCard(page, '4242 4242 4242 4242');
    await page.getByText('Payment received').waitFor();
    expect(await focused(page)).to.include('Payment received');
    // The webhook lands and the page, reading the deposit again, shows it completed.
    await page.getByText('The deposit is completed.').waitFor({ timeout: 20_000 });
    expect(await figures.innerText()).to.match(/Status\s+completed/);
    expect(await page.getByLabel('Card number').count(), 'no form once paid').to.equal(0);
    await expectNoSeriousViolations(page, 'a paid deposit');

    expect(await balanceOf(payer)).to.equal(25);
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(await balanceOf(payer)).to.equal(25);
    const deposits = await payer.client.transactions.list({ type: 'deposit' }).toArray();
    expect(deposits.map((deposit) => [deposit.id, deposit.status])).to.deep.equal([[id, 'completed']]);

    // The card went to the sandbox, the rest to the gateway; nowhere else, and nothing kept in the browser.
    const origins = new Set(requested.map((url) => new URL(url).origin));
    expect([...origins].sort()).to.deep.equal([gatewayOrigin(), sandboxOrigin()].sort());
    const stored = await page.evaluate(
      '({ local: localStorage.length, session: sessionStorage.length, cookie: document.cookie })',
    );
    expect(stored).to.deep.equal({ local: 0, session: 0, cookie: '' });
    expect(await context.cookies()).to.deep.equal([]);
    expect(problems, problems.join('\n')).to.deep.equal([]);
  });

  it('shows another user on the deposit\'s page "Deposit not found", no card form and no secret', async () => {
    const owner = await signUpWithAccount(system.gatewayUrl);
    const { id, paymentUrl } = await depositToPay(owner, 40);
    const secret = (await owner.client.transactions.get(id)).provider_payment?.client_secret;
    expect(secret).to.be.a('string');

    const stranger = await signUpWithAccount(system.gatewayUrl);
    const { page, requested } = await visit(paymentUrl);
    // Nothing is read before someone signs in.
    expect(requested.filter((url) => url.includes('/transaction/'))).to.deep.equal([]);
    const answers: { url: string; status: number; body: string }[] = [];
    page.on('response', (response) => {
      if (response.url().includes('/transaction/'))
        void response
          .text()
          .then((body) => answers.push({ url: response.url(), status: response.status(), body }));
    });
    await signIn(page, stranger);
    await page.getByText('Deposit not found').waitFor();
    expect(await page.getByLabel('Card number').count()).to.equal(0);
    expect(await page.getByRole('button', { name: 'Pay' }).count()).to.equal(0);
    expect(await page.content()).not.to.include(secret as string);
    await eventually(
      () => Promise.resolve(answers.length),
      (count) => count > 0,
    );
    for (const answer of answers) {
      expect(answer.status, answer.url).to.equal(403);
      expect(answer.body).not.to.include(secret as string);
    }
    await expectNoSeriousViolations(page, 'a deposit not found');
    expect((await owner.client.transactions.get(id)).status).to.equal('pending');
  });

  it('shows an admin the deposit and never the means to pay it as its owner', async () => {
    const owner = await signUpWithAccount(system.gatewayUrl);
    const { id, paymentUrl } = await depositToPay(owner, 30);
    const secret = (await owner.client.transactions.get(id)).provider_payment?.client_secret;
    const { page } = await visit(paymentUrl);
    await signIn(page, system.admin);
    await page.getByText('Only the person who made this deposit can pay it.').waitFor();
    expect(await page.locator('dl').innerText()).to.match(/Status\s+pending/);
    expect(await page.getByLabel('Card number').count()).to.equal(0);
    expect(await page.content()).not.to.include(secret as string);
    expect((await owner.client.transactions.get(id)).status).to.equal('pending');
  });

  it('tells the payer a deposit already paid is paid, with no form', async () => {
    const payer = await signUpWithAccount(system.gatewayUrl);
    const { id, paymentUrl } = await depositToPay(payer, 12);
    const shown = await payer.client.transactions.get(id);
    await sandboxStripe(system).paymentIntents.confirm(shown.provider_payment?.reference as string, {
      payment_method: 'pm_card_visa',
    });
    await eventually(
      () => payer.client.transactions.get(id),
      (transaction) => transaction.status === 'completed',
    );
    const { page } = await visit(paymentUrl);
    await signIn(page, payer);
    await page.getByText('This deposit has been paid.').waitFor();
    expect(await page.getByLabel('Card number').count()).to.equal(0);
    expect(await balanceOf(payer)).to.equal(12);
  });
});
