import { expect } from 'chai';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { useSystem } from '@payments/testkit';
import { expectNoSeriousViolations, launchTestBrowser } from '@payments/testkit/browser';
import { rawApi, signUp } from '@payments/test-support';

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

/** A fresh browser context (no storage shared with another test) and what its pages did. */
interface Visit {
  context: BrowserContext;
  page: Page;
  /** Console errors and uncaught page errors. */
  problems: string[];
  /** Every URL the page requested. */
  requested: string[];
}

describe('the operator console in a browser, through the real system', function () {
  this.timeout(180_000);
  const system = useSystem({}, { admin: true });
  const api = rawApi(system);
  let browser: Browser;
  const visits: Visit[] = [];

  before(async () => {
    browser = await launchTestBrowser();
  });
  afterEach(async () => {
    for (const visit of visits.splice(0)) await visit.context.close();
  });
  after(async () => {
    await browser?.close();
  });

  async function visit(path = '/console'): Promise<Visit> {
    const context = await browser.newContext();
    const page = await context.newPage();
    const opened: Visit = { context, page, problems: [], requested: [] };
    page.on('console', (message) => {
      if (message.type() === 'error') opened.problems.push(message.text());
    });
    page.on('pageerror', (error) => opened.problems.push(error.message));
    page.on('request', (request) => opened.requested.push(request.url()));
    visits.push(opened);
    const response = await page.goto(`${system.gatewayUrl}${path}`);
    expect(response?.status()).to.equal(200);
    return opened;
  }

  async function signIn(page: Page, username: string, password: string): Promise<void> {
    await page.getByLabel('Username').fill(username);
    await page.getByLabel('Password').fill(password);
    await page.getByRole('button', { name: 'Sign in' }).click();
  }

  const signInAsAdmin = async (path?: string) => {
    const opened = await visit(path);
    await signIn(opened.page, system.admin.username, system.admin.password);
    await opened.page.getByRole('navigation').waitFor();
    return opened;
  };

  it('signs an admin in and shows every page by its nav link, each with its name as h1 and no serious axe violation', async () => {
    const { page, problems, requested } = await visit();
    await expectNoSeriousViolations(page, 'the sign-in form');
    await signIn(page, system.admin.username, system.admin.password);
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
    await signIn(page, system.admin.username, system.admin.password);
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
    await signIn(page, user.username, user.password);
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
    await signIn(page, system.admin.username, system.admin.password);
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
});
