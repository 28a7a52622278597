import { expect } from 'chai';
import { buildConsoleIfStale } from '@payments/testkit';
import type { GatewayConfig } from '../src/config.js';
import { withPageSettings } from '../src/http/payment-page.js';
import { startGatewayUnderTest, type GatewayUnderTest } from './harness.js';

/** The policy as directive name → its sources. */
const directivesOf = (policy: string | null) =>
  Object.fromEntries(
    (policy ?? '').split('; ').map((directive) => {
      const [name, ...sources] = directive.split(' ');
      return [name, sources];
    }),
  );

/** The settings the gateway wrote into the page, as the page reads them. */
const settingsIn = (html: string) => {
  const match = /<meta name="payment-page-settings" content="([^"]*)" \/>/.exec(html);
  if (!match) throw new Error(`No settings in the page:\n${html}`);
  const content = (match[1] as string).replace(/&#(\d+);/g, (_, code: string) =>
    String.fromCharCode(Number(code)),
  );
  return JSON.parse(content) as Record<string, string>;
};

describe('the payment page at /pay/{transaction_id}', function () {
  this.timeout(60_000);
  const started: GatewayUnderTest[] = [];
  const gatewayWith = async (overrides: Partial<GatewayConfig>) => {
    const gateway = await startGatewayUnderTest(overrides);
    started.push(gateway);
    return gateway;
  };

  before(async () => {
    await buildConsoleIfStale();
  });
  after(async () => {
    await Promise.all(started.map((gateway) => gateway.stop()));
  });

  it("with Stripe, allows Stripe.js's origin, tells the page the publishable key, and no network is needed", async () => {
    const gw = await gatewayWith({
      PAYMENT_PAGE_PROVIDER: 'stripe',
      STRIPE_PUBLISHABLE_KEY: 'pk_test_51Page',
    });
    const response = await gw.fetch('/pay/0b6f3d4e-4c1a-4f7e-9a55-2d1c9e0f7a10');
    expect(response.status).to.equal(200);
    expect(response.headers.get('content-type')).to.match(/^text\/html/);
    expect(response.headers.get('cache-control')).to.equal('no-cache');
    const policy = response.headers.get('content-security-policy');
    expect(policy).not.to.match(/unsafe-|\*/);
    const directives = directivesOf(policy);
    expect(directives['script-src']).to.deep.equal(["'self'", 'https://js.stripe.com']);
    expect(directives['frame-src']).to.deep.equal(['https://js.stripe.com', 'https://hooks.stripe.com']);
    expect(directives['connect-src']).to.deep.equal(["'self'", 'https://api.stripe.com']);
    expect(directives['frame-ancestors']).to.deep.equal(["'none'"]);

    const html = await response.text();
    expect(settingsIn(html)).to.deep.equal({ provider: 'stripe', publishable_key: 'pk_test_51Page' });
    // Nothing inline: the page's scripts and styles are the build's files; Stripe.js is added by the page itself.
    expect(html).not.to.match(/<script(?![^>]*\bsrc=)[^>]*>/);
    expect(html).not.to.match(/<style|style=/);
    const scripts = [...html.matchAll(/<script[^>]*\bsrc="([^"]+)"/g)].map((match) => match[1]);
    expect(scripts).to.have.length.greaterThan(0);
    for (const script of scripts) expect(script).to.match(/^\/console\/assets\/pay-[\w-]+\.js$/);
  });

  it("with the sandbox, lets the page call only the gateway and the sandbox's origin", async () => {
    const gw = await gatewayWith({
      PAYMENT_PAGE_PROVIDER: 'sandbox',
      PAYMENT_PAGE_SANDBOX_URL: 'http://127.0.0.1:13005/',
    });
    const response = await gw.fetch('/pay/0b6f3d4e-4c1a-4f7e-9a55-2d1c9e0f7a10');
    expect(response.status).to.equal(200);
    const directives = directivesOf(response.headers.get('content-security-policy'));
    expect(directives['connect-src']).to.deep.equal(["'self'", 'http://127.0.0.1:13005']);
    expect(directives['script-src']).to.deep.equal(["'self'"]);
    expect(directives['frame-src']).to.equal(undefined);
    expect(settingsIn(await response.text())).to.deep.equal({
      provider: 'sandbox',
      publishable_key: 'pk_test_sandbox_development_only',
      api_url: 'http://127.0.0.1:13005',
    });
  });

  it('answers the same page for any id shape, since the page reads the deposit through the API', async () => {
    const gw = await gatewayWith({ PAYMENT_PAGE_PROVIDER: 'sandbox' });
    for (const id of ['not-a-uuid', '%3Cscript%3Ealert(1)%3C%2Fscript%3E', '123']) {
      const response = await gw.fetch(`/pay/${id}`);
      expect(response.status, id).to.equal(200);
      const html = await response.text();
      expect(html, id).not.to.include('<script>');
      expect(html, id).not.to.include(decodeURIComponent(id));
    }
    // Nothing else under /pay: no page without an id, no path below one.
    expect((await gw.fetch('/pay/')).status).to.equal(404);
    expect((await gw.fetch('/pay/x/y')).status).to.equal(404);
    const forwarded = Object.values(gw.upstreams).flatMap((upstream) => upstream.received);
    expect(forwarded.filter((request) => request.url.startsWith('/pay'))).to.deep.equal([]);
  });

  it('writes the settings as an attribute no value can break out of', () => {
    const key = `pk_test_"><script>alert('x')</script>&`;
    const html = withPageSettings('<html><head><title>Pay</title></head><body></body></html>', {
      provider: 'stripe',
      publishableKey: key,
    });
    expect(html).not.to.include('<script>');
    expect(settingsIn(html)).to.deep.equal({ provider: 'stripe', publishable_key: key });
    expect(html.indexOf('payment-page-settings')).to.be.lessThan(html.indexOf('</head>'));
  });

  it('serves no page when the deployment has no provider for it', async () => {
    const gw = await gatewayWith({ PAYMENT_PAGE_PROVIDER: 'none' });
    const response = await gw.fetch('/pay/0b6f3d4e-4c1a-4f7e-9a55-2d1c9e0f7a10');
    expect(response.status).to.equal(404);
    expect(response.headers.get('content-type')).to.match(/^application\/problem\+json/);
  });
});
