import { expect } from 'chai';
import { eventually, useSystem } from '@payments/testkit';
import { rawApi, signUp, type TestUser } from '@payments/test-support';

interface Payer extends TestUser {
  accountId: string;
}

interface ProviderPaymentView {
  provider: string;
  reference: string;
  client_secret?: string;
  payment_url?: string;
}

/** The sandbox's publishable key: what the payment page confirms with, beside the client secret. */
const PUBLISHABLE_KEY = 'pk_test_sandbox_development_only';

/**
 * The payment page's link and what it does, through the real system (ADR 0128): a pending deposit shows its owner
 * alone `provider_payment.payment_url`; a browser on that page confirms the deposit's PaymentIntent at the sandbox
 * with the publishable key, the client secret and a card typed in, exactly as the page will (plain fetch); a
 * declined card leaves the deposit pending and credits nothing, the next card completes it, once.
 */
describe("a deposit's payment page link, and paying it by card as the page does, end to end", function () {
  this.timeout(120_000);

  // Nobody pays on their own here: only the payer, at the page.
  const system = useSystem(
    { serviceEnv: { 'provider-sandbox': { SANDBOX_AUTO_CONFIRM: 'false' } } },
    { admin: true, booksBalance: true },
  );
  const api = rawApi(system);

  const payer = async (): Promise<Payer> => {
    const user = await signUp(system.gatewayUrl);
    const { id } = await user.client.accounts.open({ currency: 'USD' });
    return { ...user, accountId: id };
  };

  const depositOf = async (who: Payer, amount: number) => {
    const accepted = await who.client.money.deposit(who.accountId, { amount, currency: 'USD' });
    expect(accepted.status).to.equal('pending');
    return accepted.id;
  };

  /** The deposit as its owner reads it once the provider made its payment. */
  const payable = async (who: Payer, id: string) => {
    const shown = await eventually(
      () => api.get(`/transaction/${id}`, who.token),
      (response) => response.body.provider_payment?.client_secret !== undefined,
      { timeoutMs: 15_000 },
    );
    return shown.body.provider_payment as ProviderPaymentView;
  };

  /** What the page sends when the payer presses "Pay": the card, to the sandbox, from the page's origin. */
  const payByCard = async (payment: ProviderPaymentView, number: string) => {
    const response = await fetch(
      `${system.urls['provider-sandbox']}/v1/payment_intents/${payment.reference}/confirm`,
      {
        method: 'POST',
        headers: {
          authorization: `Bearer ${PUBLISHABLE_KEY}`,
          'content-type': 'application/x-www-form-urlencoded',
          origin: new URL(system.gatewayUrl).origin,
        },
        body: new URLSearchParams({
          client_secret: payment.client_secret as string,
          'payment_method_data[type]': 'card',
          'payment_method_data[card][number]': number,
          'payment_method_data[card][exp_month]': '12',
          'payment_method_data[card][exp_year]': '2034',
          'payment_method_data[card][cvc]': '123',
        }),
      },
    );
    const body = (await response.json()) as {
      status?: string;
      error?: { code?: string; decline_code?: string };
    };
    expect(response.headers.get('access-control-allow-origin'), 'readable by the page').to.equal('*');
    return { status: response.status, body };
  };

  const balanceOf = async (who: Payer) => (await who.client.balances.get(who.accountId)).balance;

  it("links the deposit's owner to its payment page at the gateway, and nobody else", async () => {
    const alice = await payer();
    const id = await depositOf(alice, 12.5);
    const payment = await payable(alice, id);
    const link = new URL(payment.payment_url as string);
    expect(link.origin).to.equal(new URL(system.gatewayUrl).origin);
    expect(link.pathname).to.equal(`/pay/${id}`);

    const mallory = await payer();
    const stranger = await api.get(`/transaction/${id}`, mallory.token);
    expect(stranger.status).to.equal(403);
    expect(stranger.text).not.to.include('/pay/');
    const anonymous = await api.get(`/transaction/${id}`);
    expect(anonymous.status).to.equal(401);

    // An admin reads the deposit, and is never handed the means to pay it as its owner.
    const admin = await api.get(`/transaction/${id}`, system.admin.token);
    expect(admin.status).to.equal(200);
    expect(admin.body.provider_payment).to.deep.equal({ provider: 'stripe', reference: payment.reference });

    const history = await api.get('/transactions', alice.token);
    expect(history.status).to.equal(200);
    expect(history.text).not.to.include('/pay/');

    // Without the client secret the page has nothing to pay with: the sandbox knows no such payment.
    const guessed = await payByCard(
      { ...payment, client_secret: `${payment.reference}_secret_guess` },
      '4242424242424242',
    );
    expect(guessed.status).to.equal(404);
    expect((await alice.client.transactions.get(id)).status).to.equal('pending');
  });

  it('declines 4000 0000 0000 0002 and keeps the deposit pending, then 4242 4242 4242 4242 completes it, once', async () => {
    const bob = await payer();
    const id = await depositOf(bob, 25);
    const payment = await payable(bob, id);

    const declined = await payByCard(payment, '4000000000000002');
    expect(declined.status).to.equal(402);
    expect(declined.body.error).to.include({ code: 'card_declined', decline_code: 'generic_decline' });
    const afterDecline = await eventually(
      () => api.get(`/transaction/${id}`, bob.token),
      (response) => response.body.failure_reason !== null,
    );
    expect(afterDecline.body.status).to.equal('pending');
    expect(afterDecline.body.provider_payment.payment_url, 'the payer may try again').to.be.a('string');
    expect(await balanceOf(bob)).to.equal(0);

    const paid = await payByCard(payment, '4242424242424242');
    expect(paid.status).to.equal(200);
    expect(paid.body.status).to.equal('succeeded');
    const completed = await eventually(
      () => api.get(`/transaction/${id}`, bob.token),
      (response) => response.body.status === 'completed',
    );
    expect(completed.body.provider_payment).to.deep.equal({
      provider: 'stripe',
      reference: payment.reference,
    });
    expect(await balanceOf(bob)).to.equal(25);

    const again = await payByCard(payment, '4242424242424242');
    expect(again.status).to.equal(400);
    expect(again.body.error).to.include({ code: 'payment_intent_unexpected_state' });
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(await balanceOf(bob)).to.equal(25);
    const deposits = await bob.client.transactions.list({ type: 'deposit' }).toArray();
    expect(deposits.map((t) => t.status)).to.deep.equal(['completed']);
  });
});
