import type { PaymentPageClientSettings } from '@payments/contracts/payment-page';

/**
 * What the payment page (`GET /pay/{transaction_id}`) talks to, and the Content-Security-Policy it is served with
 * (ADR 0128). Everything here is public by design: a publishable key and an API address a browser calls.
 */

export const PAYMENT_PAGE_PROVIDERS = ['none', 'sandbox', 'stripe'] as const;
export type PaymentPageProvider = (typeof PAYMENT_PAGE_PROVIDERS)[number];

export type PaymentPageSettings =
  | { provider: 'none' }
  /** The provider sandbox: the page's own card form confirms at `sandboxApiUrl` (an origin a browser reaches). */
  | { provider: 'sandbox'; publishableKey: string; sandboxApiUrl: string }
  /** Stripe: Stripe.js's Payment Element, from https://js.stripe.com. */
  | { provider: 'stripe'; publishableKey: string };

const STRIPE_JS = 'https://js.stripe.com';
const STRIPE_API = 'https://api.stripe.com';
const STRIPE_HOOKS = 'https://hooks.stripe.com';

/**
 * The page's policy: its own scripts and styles only (no inline script or style, no eval), calls to the gateway and
 * to the provider's API alone, Stripe's frames only with Stripe, never framed itself, no base or form elsewhere.
 */
export function paymentPageContentSecurityPolicy(settings: PaymentPageSettings): string {
  const stripe = settings.provider === 'stripe';
  const providerApi =
    settings.provider === 'sandbox' ? [new URL(settings.sandboxApiUrl).origin] : stripe ? [STRIPE_API] : [];
  const directives: [string, ...string[]][] = [
    ['default-src', "'none'"],
    ['script-src', "'self'", ...(stripe ? [STRIPE_JS] : [])],
    ['style-src', "'self'"],
    ['img-src', "'self'"],
    ['font-src', "'self'"],
    ['connect-src', "'self'", ...providerApi],
    ...(stripe ? [['frame-src', STRIPE_JS, STRIPE_HOOKS] as [string, ...string[]]] : []),
    ['base-uri', "'none'"],
    ['form-action', "'self'"],
    ['frame-ancestors', "'none'"],
  ];
  return directives.map((directive) => directive.join(' ')).join('; ');
}

/** What the page itself is told (as JSON, never as inline script): which provider, and how to reach it. */
export function paymentPageClientSettings(settings: PaymentPageSettings): PaymentPageClientSettings {
  switch (settings.provider) {
    case 'none':
      return { provider: 'none' };
    case 'sandbox':
      return {
        provider: 'sandbox',
        publishable_key: settings.publishableKey,
        api_url: new URL(settings.sandboxApiUrl).origin,
      };
    case 'stripe':
      return { provider: 'stripe', publishable_key: settings.publishableKey };
  }
}
