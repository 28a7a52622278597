import { expect } from 'chai';
import { ConfigError, loadConfig } from '@payments/service-kit';
import { GatewayConfigSchema, paymentPageSettingsOf } from '../src/config.js';
import {
  paymentPageClientSettings,
  paymentPageContentSecurityPolicy,
  type PaymentPageSettings,
} from '../src/domain/payment-page.js';

/** The policy as directive name → its sources. */
const directivesOf = (policy: string) =>
  Object.fromEntries(
    policy.split('; ').map((directive) => {
      const [name, ...sources] = directive.split(' ');
      return [name, sources];
    }),
  );

const settingsFrom = (env: Record<string, string>) =>
  paymentPageSettingsOf(loadConfig(GatewayConfigSchema, { NODE_ENV: 'test', ...env }));

describe("gateway: the payment page's provider and Content-Security-Policy", () => {
  const sandbox: PaymentPageSettings = {
    provider: 'sandbox',
    publishableKey: 'pk_test_sandbox_development_only',
    sandboxApiUrl: 'http://127.0.0.1:3005/',
  };
  const stripe: PaymentPageSettings = { provider: 'stripe', publishableKey: 'pk_live_51Abc' };

  it("lets a sandbox page load only its own files and call only the gateway and the sandbox's origin", () => {
    expect(directivesOf(paymentPageContentSecurityPolicy(sandbox))).to.deep.equal({
      'default-src': ["'none'"],
      'script-src': ["'self'"],
      'style-src': ["'self'"],
      'img-src': ["'self'"],
      'font-src': ["'self'"],
      'connect-src': ["'self'", 'http://127.0.0.1:3005'],
      'base-uri': ["'none'"],
      'form-action': ["'self'"],
      'frame-ancestors': ["'none'"],
    });
  });

  it('adds Stripe.js, its API and its frames for Stripe, and nothing else', () => {
    expect(directivesOf(paymentPageContentSecurityPolicy(stripe))).to.deep.equal({
      'default-src': ["'none'"],
      'script-src': ["'self'", 'https://js.stripe.com'],
      'style-src': ["'self'"],
      'img-src': ["'self'"],
      'font-src': ["'self'"],
      'connect-src': ["'self'", 'https://api.stripe.com'],
      'frame-src': ['https://js.stripe.com', 'https://hooks.stripe.com'],
      'base-uri': ["'none'"],
      'form-action': ["'self'"],
      'frame-ancestors': ["'none'"],
    });
  });

  it('never allows inline script or style, eval, or any origin for a page with no provider', () => {
    for (const settings of [sandbox, stripe, { provider: 'none' } as const]) {
      const policy = paymentPageContentSecurityPolicy(settings);
      expect(policy).not.to.match(/unsafe-|\*|data:|blob:/);
    }
    expect(directivesOf(paymentPageContentSecurityPolicy({ provider: 'none' }))['connect-src']).to.deep.equal(
      ["'self'"],
    );
  });

  it('tells the page its provider, publishable key and API origin, and never a secret', () => {
    expect(paymentPageClientSettings(sandbox)).to.deep.equal({
      provider: 'sandbox',
      publishable_key: 'pk_test_sandbox_development_only',
      api_url: 'http://127.0.0.1:3005',
    });
    expect(paymentPageClientSettings(stripe)).to.deep.equal({
      provider: 'stripe',
      publishable_key: 'pk_live_51Abc',
    });
  });

  describe('configuration', () => {
    it('uses the sandbox outside production, at its published address, with its development key', () => {
      expect(settingsFrom({})).to.deep.equal({
        provider: 'sandbox',
        publishableKey: 'pk_test_sandbox_development_only',
        sandboxApiUrl: 'http://127.0.0.1:3005',
      });
      expect(settingsFrom({ PAYMENT_PAGE_SANDBOX_URL: 'http://localhost:13005' })).to.include({
        sandboxApiUrl: 'http://localhost:13005',
      });
    });

    it('in production, follows PROVIDER: Stripe needs its publishable key, no provider is no page', () => {
      const production = { NODE_ENV: 'production' };
      expect(settingsFrom(production)).to.deep.equal({ provider: 'none' });
      expect(() => settingsFrom({ ...production, PROVIDER: 'stripe' }))
        .to.throw(ConfigError)
        .with.property('message')
        .that.includes('STRIPE_PUBLISHABLE_KEY');
      expect(
        settingsFrom({ ...production, PROVIDER: 'stripe', STRIPE_PUBLISHABLE_KEY: 'pk_live_51Abc' }),
      ).to.deep.equal(stripe);
      expect(
        settingsFrom({ ...production, PROVIDER: 'stripe', PAYMENT_PAGE_PROVIDER: 'sandbox' }),
      ).to.include({
        provider: 'sandbox',
      });
    });

    it('refuses Stripe without its key, a secret key in its place, and a sandbox address a browser cannot use', () => {
      expect(() => settingsFrom({ PAYMENT_PAGE_PROVIDER: 'stripe' })).to.throw(ConfigError);
      expect(() =>
        settingsFrom({ PAYMENT_PAGE_PROVIDER: 'stripe', STRIPE_PUBLISHABLE_KEY: 'sk_live_51Abc' }),
      ).to.throw(ConfigError, /STRIPE_PUBLISHABLE_KEY/);
      expect(() => settingsFrom({ PAYMENT_PAGE_SANDBOX_URL: 'ftp://127.0.0.1:3005' })).to.throw(ConfigError);
    });
  });
});
