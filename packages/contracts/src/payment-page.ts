/**
 * What the gateway tells the payment page (`/pay/{transaction_id}`) about its provider, ADR 0131: JSON in a
 * `<meta name="payment-page-settings">`, so no inline script is needed to pass it. Public by design: a publishable
 * key and an address a payer's browser calls. The gateway writes it; the page reads it.
 */
export const PAYMENT_PAGE_SETTINGS_META = 'payment-page-settings';

export type PaymentPageClientSettings =
  | { provider: 'none' }
  | { provider: 'sandbox'; publishable_key: string; api_url: string }
  | { provider: 'stripe'; publishable_key: string };
