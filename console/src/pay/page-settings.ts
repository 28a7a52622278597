import { PAYMENT_PAGE_SETTINGS_META, type PaymentPageClientSettings } from '@payments/contracts/payment-page';

/** What the gateway tells the page about its provider (ADR 0128), as the contract between the two has it. */
export type PaymentPageSettings = PaymentPageClientSettings;

export function readPageSettings(document: Document): PaymentPageSettings {
  const content = document
    .querySelector(`meta[name="${PAYMENT_PAGE_SETTINGS_META}"]`)
    ?.getAttribute('content');
  if (!content) return { provider: 'none' };
  const parsed = JSON.parse(content) as Partial<Record<string, unknown>>;
  const key = typeof parsed.publishable_key === 'string' ? parsed.publishable_key : '';
  if (parsed.provider === 'sandbox' && typeof parsed.api_url === 'string' && key)
    return { provider: 'sandbox', publishable_key: key, api_url: parsed.api_url };
  if (parsed.provider === 'stripe' && key) return { provider: 'stripe', publishable_key: key };
  return { provider: 'none' };
}

/** The transaction id in `/pay/{transaction_id}`, as the gateway served the page. */
export function transactionIdOf(pathname: string): string {
  const [, segment = ''] = /^\/pay\/([^/]+)\/?$/.exec(pathname) ?? [];
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}
