import { expect } from 'chai';
import { useSystem } from '@payments/testkit';
import { expectNoSeriousViolations, payByCard, signIn, useTestBrowser } from '@payments/testkit/browser';
import { depositToPay, signUpWithAccount } from '@payments/test-support';
import { routeStripe, type StripeStandInRecord } from './support/stripe-js-stand-in.js';

/**
 * The payment page as it is served against Stripe (PAYMENT_PAGE_PROVIDER=stripe, ADR 0128), in a real browser
 * through the real system: Stripe.js's Payment Element, here a stand-in at Stripe.js's address (this machine has
 * no way out to Stripe) confirming at Stripe's API address, which the browser sends on to the provider sandbox.
 * What is tested is the page: the policy it is served with, what it gives Stripe.js, and what it makes of each
 * answer, a request that never arrives included.
 */
describe('the payment page with Stripe.js, in a browser, through the real system', function () {
  this.timeout(180_000);
  const publishableKey = 'pk_test_payment_page_with_stripe_js';
  const system = useSystem(
    {
      serviceEnv: {
        'provider-sandbox': { SANDBOX_AUTO_CONFIRM: 'false', SANDBOX_PUBLISHABLE_KEY: publishableKey },
        gateway: { PAYMENT_PAGE_PROVIDER: 'stripe', STRIPE_PUBLISHABLE_KEY: publishableKey },
      },
    },
    { booksBalance: true },
  );
  // Console errors but the browser's own line for a request that failed or was answered 4xx.
  const browser = useTestBrowser({
    ignoreConsoleError: (text) => text.startsWith('Failed to load resource'),
  });

  it('gives Stripe.js the key and the secret, says an unreachable provider paid nothing, takes a card after a decline', async () => {
    const payer = await signUpWithAccount(system.gatewayUrl);
    const { id, paymentUrl, clientSecret } = await depositToPay(payer, 25);
    let reachable = true;
    const { page, problems, requested, response } = await browser.visit(paymentUrl, (context) =>
      routeStripe(context, new URL(system.urls['provider-sandbox']).origin, () => reachable),
    );

    // Stripe's script, API and frames are the only origins besides the gateway's own; still nothing inline.
    const policy = response.headers()['content-security-policy'] ?? '';
    const directives = new Map(policy.split('; ').map((directive) => [directive.split(' ')[0], directive]));
    expect(directives.get('script-src')).to.equal("script-src 'self' https://js.stripe.com");
    expect(directives.get('connect-src')).to.equal("connect-src 'self' https://api.stripe.com");
    expect(directives.get('frame-src')).to.equal('frame-src https://js.stripe.com https://hooks.stripe.com');
    expect(policy).not.to.match(/unsafe-inline|unsafe-eval|\*/);

    await signIn(page, payer);
    await page.getByLabel('Card number').waitFor();
    await expectNoSeriousViolations(page, 'the Payment Element');
    const given = () => page.evaluate('window.stripeStandIn') as Promise<StripeStandInRecord>;
    expect(await given()).to.deep.include({ keys: [publishableKey], clientSecrets: [clientSecret] });

    // The request never reaches the provider: the payer is told so, nothing is paid, and the form stays.
    reachable = false;
    await payByCard(page, '4242 4242 4242 4242');
    await page
      .getByText('The payment provider could not be reached. Try again or use another card.')
      .waitFor();
    expect((await payer.client.transactions.get(id)).status).to.equal('pending');
    reachable = true;

    await payByCard(page, '4000 0000 0000 0002');
    await page.getByText('Your card was declined. Try again or use another card.').waitFor();
    expect((await payer.client.balances.get(payer.accountId)).balance).to.equal(0);

    await payByCard(page, '4242 4242 4242 4242');
    await page.getByText('The deposit is completed.').waitFor({ timeout: 20_000 });
    expect(await page.getByLabel('Card number').count(), 'no form once paid').to.equal(0);
    expect((await payer.client.balances.get(payer.accountId)).balance).to.equal(25);

    // Each confirmation stayed on the page unless a redirect was needed, and came back to it if one was.
    const { confirmations } = await given();
    expect(confirmations).to.have.length(3);
    for (const confirmation of confirmations)
      expect(confirmation).to.deep.equal({ redirect: 'if_required', returnUrl: paymentUrl });
    // The page itself reached the gateway and Stripe alone, never the sandbox.
    const origins = new Set(requested.map((url) => new URL(url).origin));
    expect([...origins].sort()).to.deep.equal(
      [new URL(system.gatewayUrl).origin, 'https://api.stripe.com', 'https://js.stripe.com'].sort(),
    );
    expect(problems, problems.join('\n')).to.deep.equal([]);
  });
});
