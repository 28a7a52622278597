import Stripe from 'stripe';
import { ProviderRefusal, type PaymentProvider } from './payment-provider.js';

export interface StripeProviderOptions {
  secretKey: string;
  /** Where Stripe's API answers; unset, Stripe itself. The development sandbox serves the same API. */
  apiUrl?: string;
  /** The library's own retries (network errors, 409, 429, 5xx), with its exponential backoff. */
  maxNetworkRetries?: number;
  timeoutMs?: number;
  /** Where Stripe sends a user back after (or to restart) the onboarding of their connected account. */
  onboardingReturnUrl: string;
}

/** Where the library should send its requests, from a URL (the sandbox: http://127.0.0.1:3005). */
function endpointOf(apiUrl: string | undefined): Pick<Stripe.StripeConfig, 'host' | 'port' | 'protocol'> {
  if (!apiUrl) return {};
  const url = new URL(apiUrl);
  const protocol = url.protocol === 'http:' ? 'http' : 'https';
  return { host: url.hostname, port: Number(url.port || (protocol === 'http' ? 80 : 443)), protocol };
}

/**
 * Refused for good: Stripe refused the request itself, with a 400 or 402 that retrying would only repeat (a card
 * error, parameters it does not accept). Everything else passes: its idempotency errors (a repeated call differed
 * from the first, a fault here), 401 and 403 (a key to fix), a 404 for the endpoint (STRIPE_API_URL to fix), 409,
 * 429 and 5xx. None of those may fail a customer's transaction.
 */
function refusalOf(error: unknown): ProviderRefusal | null {
  const refused =
    (error instanceof Stripe.errors.StripeCardError ||
      error instanceof Stripe.errors.StripeInvalidRequestError) &&
    (error.statusCode === 400 || error.statusCode === 402);
  return refused ? new ProviderRefusal(error.message, error.code) : null;
}

/** Calls Stripe; a refusal comes back as ProviderRefusal, anything else as it was thrown (tried again later). */
async function calling<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    throw refusalOf(error) ?? error;
  }
}

/** The payment provider port on Stripe's API, through the official library. */
export function createStripeProvider(options: StripeProviderOptions): PaymentProvider {
  const stripe = new Stripe(options.secretKey, {
    maxNetworkRetries: options.maxNetworkRetries ?? 2,
    timeout: options.timeoutMs ?? 10_000,
    telemetry: false,
    appInfo: { name: 'payments-ledger' },
    ...endpointOf(options.apiUrl),
  });

  /** Takes a transfer back whole; one already taken back (by an earlier attempt) is left as it is. */
  const reverse = async (transfer: string, transactionId: string) => {
    try {
      await stripe.transfers.createReversal(
        transfer,
        { metadata: { transaction_id: transactionId } },
        { idempotencyKey: `${transactionId}:reversal` },
      );
    } catch (error) {
      const reversed = await stripe.transfers.retrieve(transfer).then(
        (found) => found.reversed,
        () => false,
      );
      if (!reversed) throw refusalOf(error) ?? error;
    }
  };

  return {
    name: 'stripe',

    async createPayment({ transactionId, amount, currency }) {
      const intent = await calling(() =>
        stripe.paymentIntents.create(
          {
            amount: Number(amount),
            currency: currency.toLowerCase(),
            metadata: { transaction_id: transactionId },
            description: `Deposit ${transactionId}`,
          },
          { idempotencyKey: transactionId },
        ),
      );
      return { reference: intent.id, clientSecret: intent.client_secret };
    },

    async cancelPayment(reference, transactionId) {
      try {
        await stripe.paymentIntents.cancel(
          reference,
          { cancellation_reason: 'abandoned' },
          { idempotencyKey: `${transactionId}:cancel` },
        );
      } catch (error) {
        // Already succeeded or canceled, or unknown to this account: nothing is left to cancel (a late success is
        // credited when it arrives).
        if (
          error instanceof Stripe.errors.StripeInvalidRequestError &&
          (error.code === 'payment_intent_unexpected_state' || error.code === 'resource_missing')
        )
          return;
        throw refusalOf(error) ?? error;
      }
    },

    async createPayout({ transactionId, amount, currency, destination }) {
      const money = { amount: Number(amount), currency: currency.toLowerCase() };
      const metadata = { transaction_id: transactionId };
      const transfer = await calling(() =>
        stripe.transfers.create(
          { ...money, destination, metadata, transfer_group: transactionId },
          { idempotencyKey: `${transactionId}:transfer` },
        ),
      );
      try {
        const payout = await stripe.payouts.create(
          { ...money, metadata },
          { stripeAccount: destination, idempotencyKey: transactionId },
        );
        return { reference: payout.id, transfer: transfer.id };
      } catch (error) {
        const refusal = refusalOf(error);
        if (!refusal) throw error;
        // Refused for good: the money goes back to the platform before the withdrawal fails.
        await reverse(transfer.id, transactionId);
        throw refusal;
      }
    },

    reversePayout: (transfer, transactionId) => reverse(transfer, transactionId),

    async createPayoutAccount({ userId }) {
      const account = await calling(() =>
        stripe.accounts.create(
          {
            type: 'express',
            metadata: { user_id: userId },
            capabilities: { transfers: { requested: true } },
            // The ledger pays each withdrawal out itself; Stripe's automatic payouts would sweep the balance.
            settings: { payouts: { schedule: { interval: 'manual' } } },
          },
          { idempotencyKey: `payout-account:${userId}` },
        ),
      );
      return account.id;
    },

    async onboardingLink(account) {
      const link = await calling(() =>
        stripe.accountLinks.create({
          account,
          type: 'account_onboarding',
          refresh_url: options.onboardingReturnUrl,
          return_url: options.onboardingReturnUrl,
        }),
      );
      return link.url;
    },
  };
}
