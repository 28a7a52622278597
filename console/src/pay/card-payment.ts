/** A card as the payer typed it into the sandbox's form. */
export interface CardDetails {
  number: string;
  /** As typed: "MM / YY" (also "MM/YY", "MMYY", "MM/YYYY"). */
  expiry: string;
  cvc: string;
}

/** What confirming a payment came to, whichever provider the page confirms with. */
export type ConfirmOutcome =
  | { kind: 'succeeded' }
  /** Accepted, not yet captured (Stripe's `processing`, `requires_capture`): the webhook will tell. */
  | { kind: 'processing' }
  /** The card was refused; another may be tried. */
  | { kind: 'declined'; message: string }
  /** The payment can no longer be confirmed: already paid, or canceled. */
  | { kind: 'ended'; message: string }
  | { kind: 'failed'; message: string };

/** The provider could not be reached from this page (offline, blocked, refused): nothing is known to be paid. */
export const UNREACHABLE: ConfirmOutcome = {
  kind: 'failed',
  message: 'The payment provider could not be reached.',
};

/** The expiry as Stripe's API takes it, or null when it is not a month and a year. */
export function expiryOf(typed: string): { month: string; year: string } | null {
  const match = /^\s*(\d{1,2})\s*\/?\s*(\d{2}|\d{4})\s*$/.exec(typed);
  if (!match) return null;
  const [, month = '', year = ''] = match;
  if (Number(month) < 1 || Number(month) > 12) return null;
  return { month: String(Number(month)), year: year.length === 2 ? `20${year}` : year };
}

/** The PaymentIntent a client secret belongs to (`pi_…_secret_…`), as Stripe.js finds it. */
export function paymentIntentOf(clientSecret: string): string | null {
  const index = clientSecret.indexOf('_secret_');
  return index > 0 ? clientSecret.slice(0, index) : null;
}

interface StripeErrorBody {
  error?: { type?: string; code?: string; message?: string };
  status?: string;
}

/**
 * Confirms the PaymentIntent at the sandbox exactly as Stripe.js confirms at Stripe: a form-encoded POST with the
 * publishable key as the bearer and the client secret in the body, the card as `payment_method_data`.
 */
export async function confirmAtSandbox(
  target: { apiUrl: string; publishableKey: string; clientSecret: string },
  card: CardDetails,
): Promise<ConfirmOutcome> {
  const expiry = expiryOf(card.expiry);
  if (!expiry) return { kind: 'declined', message: 'Enter the expiry as MM / YY.' };
  const intent = paymentIntentOf(target.clientSecret);
  if (!intent) return { kind: 'failed', message: 'This payment cannot be confirmed from this page.' };
  let response: Response;
  try {
    response = await fetch(`${target.apiUrl}/v1/payment_intents/${encodeURIComponent(intent)}/confirm`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${target.publishableKey}`,
        'content-type': 'application/x-www-form-urlencoded',
      },
      body: new URLSearchParams({
        client_secret: target.clientSecret,
        'payment_method_data[type]': 'card',
        'payment_method_data[card][number]': card.number.replace(/[\s-]/g, ''),
        'payment_method_data[card][exp_month]': expiry.month,
        'payment_method_data[card][exp_year]': expiry.year,
        'payment_method_data[card][cvc]': card.cvc.trim(),
      }),
      credentials: 'omit',
    });
  } catch {
    return UNREACHABLE;
  }
  const body = (await response.json().catch(() => ({}))) as StripeErrorBody;
  if (response.ok) return outcomeOfStatus(body.status);
  const message = body.error?.message ?? 'The payment could not be made.';
  if (body.error?.type === 'card_error') return { kind: 'declined', message };
  if (body.error?.code === 'payment_intent_unexpected_state') {
    return { kind: 'ended', message: 'This payment has already been made or canceled.' };
  }
  return { kind: 'failed', message };
}

/** A PaymentIntent's status after confirmation, as the page tells the payer. */
export function outcomeOfStatus(status: string | undefined): ConfirmOutcome {
  switch (status) {
    case 'succeeded':
      return { kind: 'succeeded' };
    case 'processing':
    case 'requires_capture':
      return { kind: 'processing' };
    case 'canceled':
      return { kind: 'ended', message: 'This payment was canceled.' };
    default:
      return { kind: 'failed', message: 'The payment needs a step this page cannot take. Try another card.' };
  }
}
