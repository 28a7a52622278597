import { expect } from 'chai';
import type { Browser } from 'playwright-core';
import { startGatewayUnderTest, type GatewayUnderTest } from './harness.js';
import { launchTestBrowser } from '@payments/testkit/browser';

describe('the /docs page in a browser', function () {
  this.timeout(60_000);
  let gw: GatewayUnderTest;
  let browser: Browser;

  before(async () => {
    gw = await startGatewayUnderTest();
    browser = await launchTestBrowser();
  });
  after(async () => {
    await browser?.close();
    await gw?.stop();
  });

  it('renders the document and shows the deposit operation, loading nothing from elsewhere', async () => {
    const page = await browser.newPage();
    const problems: string[] = [];
    const requested: string[] = [];
    page.on('console', (message) => {
      if (message.type() === 'error') problems.push(message.text());
    });
    page.on('pageerror', (error) => problems.push(error.message));
    page.on('request', (request) => requested.push(request.url()));

    const response = await page.goto(`${gw.url}/docs`);
    expect(response?.status()).to.equal(200);
    expect(response?.headers()['content-security-policy']).to.include("script-src 'self'");

    const deposit = page.locator('.opblock-summary', { hasText: '/account/{id}/deposit' });
    await deposit.first().waitFor({ timeout: 20_000 });
    expect(await deposit.first().locator('.opblock-summary-method').innerText()).to.equal('POST');
    await deposit.first().click();
    await page.getByText('Idempotency-Key').first().waitFor({ timeout: 10_000 });

    expect(problems, problems.join('\n')).to.deep.equal([]);
    expect(requested.filter((url) => !url.startsWith(gw.url))).to.deep.equal([]);
    await page.close();
  });
});
