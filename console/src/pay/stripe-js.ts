import { outcomeOfStatus, UNREACHABLE, type ConfirmOutcome } from './card-payment.js';

/** The part of Stripe.js this page uses (https://docs.stripe.com/js): the Payment Element and confirmPayment. */
interface StripeElement {
  mount(target: HTMLElement): void;
  destroy(): void;
}
interface StripeElements {
  create(type: 'payment'): StripeElement;
}
interface StripeInstance {
  elements(options: { clientSecret: string }): StripeElements;
  confirmPayment(options: {
    elements: StripeElements;
    redirect: 'if_required';
    confirmParams: { return_url: string };
  }): Promise<{
    error?: { type?: string; code?: string; message?: string };
    paymentIntent?: { status: string };
  }>;
}
type StripeConstructor = (publishableKey: string) => StripeInstance;

/** Stripe.js is only ever loaded from Stripe (their terms, and the page's CSP allows this origin alone). */
export const STRIPE_JS_URL = 'https://js.stripe.com/v3';

const stripeOnWindow = () => (window as unknown as { Stripe?: StripeConstructor }).Stripe;

/** Adds Stripe.js's script tag once (an external file, which the policy allows; never inline). */
export function loadStripeJs(): Promise<StripeConstructor> {
  const loaded = stripeOnWindow();
  if (loaded) return Promise.resolve(loaded);
  return new Promise<StripeConstructor>((resolve, reject) => {
    // A second caller (React's double effect in development) waits for the tag the first one added.
    let script = document.querySelector<HTMLScriptElement>(`script[src="${STRIPE_JS_URL}"]`);
    if (!script) {
      script = document.createElement('script');
      script.src = STRIPE_JS_URL;
      script.async = true;
      document.head.appendChild(script);
    }
    script.addEventListener('load', () => {
      const stripe = stripeOnWindow();
      if (stripe) resolve(stripe);
      else reject(new Error('Stripe.js loaded without defining Stripe'));
    });
    script.addEventListener('error', () => reject(new Error('Stripe.js could not be loaded')));
  });
}

export interface MountedPaymentElement {
  confirm(): Promise<ConfirmOutcome>;
  unmount(): void;
}

/** The Payment Element for this PaymentIntent, mounted in `target`; confirming stays on this page when it can. */
export async function mountPaymentElement(
  target: HTMLElement,
  { publishableKey, clientSecret }: { publishableKey: string; clientSecret: string },
): Promise<MountedPaymentElement> {
  const stripe = (await loadStripeJs())(publishableKey);
  const elements = stripe.elements({ clientSecret });
  const element = elements.create('payment');
  element.mount(target);
  return {
    async confirm() {
      let result: Awaited<ReturnType<StripeInstance['confirmPayment']>>;
      try {
        result = await stripe.confirmPayment({
          elements,
          redirect: 'if_required',
          confirmParams: { return_url: window.location.href },
        });
      } catch {
        // Stripe.js answers most failures as `error`; one that throws (a network failure on its way) is no payment.
        return UNREACHABLE;
      }
      if (result.error) {
        const message = result.error.message ?? 'The payment could not be made.';
        if (result.error.code === 'payment_intent_unexpected_state')
          return { kind: 'ended', message: 'This payment has already been made or canceled.' };
        return result.error.type === 'card_error' || result.error.type === 'validation_error'
          ? { kind: 'declined', message }
          : { kind: 'failed', message };
      }
      return outcomeOfStatus(result.paymentIntent?.status);
    },
    unmount: () => element.destroy(),
  };
}
