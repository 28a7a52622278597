import type { BrowserContext } from 'playwright-core';

/**
 * A stand-in for Stripe.js (https://js.stripe.com/v3), for a browser with no way out to Stripe: the part of its
 * API the payment page uses (`Stripe(key)`, `elements({ clientSecret })`, `create('payment')`, `mount`, `destroy`,
 * `confirmPayment`), answering as Stripe.js does: `{ paymentIntent }`, or `{ error }` with Stripe's error object.
 * Its Payment Element is three labelled inputs in the page (Stripe's is an iframe). It confirms at
 * https://api.stripe.com with the publishable key and the client secret, which `routeStripe` sends on to the
 * provider sandbox, Stripe's API in this system. What the page gave it is kept in `window.stripeStandIn`.
 */
const STAND_IN = `(() => {
  const seen = (window.stripeStandIn = { keys: [], clientSecrets: [], confirmations: [] });
  window.Stripe = (publishableKey) => {
    seen.keys.push(publishableKey);
    return {
      elements({ clientSecret }) {
        seen.clientSecrets.push(clientSecret);
        const fields = {};
        return {
          clientSecret,
          fields,
          create(type) {
            if (type !== 'payment') throw new Error('the stand-in makes the payment element alone');
            let host = null;
            return {
              mount(target) {
                host = target;
                for (const [name, text] of [['number', 'Card number'], ['expiry', 'Expiry'], ['cvc', 'CVC']]) {
                  const label = document.createElement('label');
                  label.htmlFor = 'stand-in-' + name;
                  label.textContent = text;
                  const input = document.createElement('input');
                  input.id = 'stand-in-' + name;
                  fields[name] = input;
                  target.append(label, input);
                }
              },
              destroy() {
                if (host) host.replaceChildren();
              },
            };
          },
        };
      },
      async confirmPayment({ elements, redirect, confirmParams }) {
        seen.confirmations.push({ redirect, returnUrl: confirmParams.return_url });
        const secret = elements.clientSecret;
        const intent = secret.slice(0, secret.indexOf('_secret_'));
        const [month = '', year = ''] = elements.fields.expiry.value.split('/').map((part) => part.trim());
        // A network failure rejects, as fetch does; the page must not take it for a payment.
        const response = await fetch('https://api.stripe.com/v1/payment_intents/' + intent + '/confirm', {
          method: 'POST',
          headers: {
            authorization: 'Bearer ' + publishableKey,
            'content-type': 'application/x-www-form-urlencoded',
          },
          body: new URLSearchParams({
            client_secret: secret,
            'payment_method_data[type]': 'card',
            'payment_method_data[card][number]': elements.fields.number.value.replace(/\\s/g, ''),
            'payment_method_data[card][exp_month]': month,
            'payment_method_data[card][exp_year]': year.length === 2 ? '20' + year : year,
            'payment_method_data[card][cvc]': elements.fields.cvc.value,
          }),
          credentials: 'omit',
        });
        const body = await response.json();
        return response.ok ? { paymentIntent: body } : { error: body.error };
      },
    };
  };
})();
`;

/** What the page gave Stripe.js, as the stand-in kept it. */
export interface StripeStandInRecord {
  keys: string[];
  clientSecrets: string[];
  confirmations: { redirect: string; returnUrl: string }[];
}

/**
 * Serves the stand-in at Stripe.js's address and sends Stripe's API on to the sandbox at `sandboxOrigin`, in this
 * browser context alone; while `reachable()` is false, Stripe's API cannot be reached (the request fails).
 */
export async function routeStripe(
  context: BrowserContext,
  sandboxOrigin: string,
  reachable: () => boolean = () => true,
): Promise<void> {
  await context.route('https://js.stripe.com/v3', (route) =>
    route.fulfill({ status: 200, contentType: 'text/javascript', body: STAND_IN }),
  );
  await context.route('https://api.stripe.com/**', async (route) => {
    if (!reachable()) return route.abort('internetdisconnected');
    const url = new URL(route.request().url());
    return route.fulfill({
      response: await route.fetch({ url: `${sandboxOrigin}${url.pathname}${url.search}` }),
    });
  });
}
