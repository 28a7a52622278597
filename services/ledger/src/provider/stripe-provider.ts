import Stripe from 'stripe';
import { toMinorUnits } from '@payments/contracts';
import { currentTraceCarrier } from '@payments/service-kit';
import {
  ProviderRefusal,
  type PaymentProvider,
  type ProviderPaymentRecord,
  type ProviderPayoutRecord,
} from './payment-provider.js';

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

/**
 * Stripe removes an idempotency key once it is at least 24 hours old
 * (https://docs.stripe.com/api/idempotent_requests): a request repeated later with it may be made a second time.
 */
export const STRIPE_IDEMPOTENCY_KEY_LIFETIME_MS = 24 * 60 * 60 * 1000;

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

/** Dispute statuses that take nothing back for good, or not yet. */
const OPEN_DISPUTES: ReadonlySet<Stripe.Dispute.Status> = new Set([
  'warning_needs_response',
  'warning_under_review',
  'needs_response',
  'under_review',
]);

const PAGE = { limit: 100 } as const;
const idOf = (value: string | { id: string } | null | undefined) =>
  typeof value === 'string' ? value : (value?.id ?? null);
const dateOf = (created: number) => new Date(created * 1000);

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
  const reverse = async (transfer: string, transactionId: string | null, idempotencyKey: string) => {
    try {
      await stripe.transfers.createReversal(
        transfer,
        transactionId ? { metadata: { transaction_id: transactionId } } : {},
        { idempotencyKey },
      );
    } catch (error) {
      const reversed = await stripe.transfers.retrieve(transfer).then(
        (found) => found.reversed,
        () => false,
      );
      if (!reversed) throw refusalOf(error) ?? error;
    }
  };

  /** A PaymentIntent as reconciliation reads it, with its refunds and disputes (read only once it was paid). */
  const paymentRecord = async (intent: Stripe.PaymentIntent): Promise<ProviderPaymentRecord> => {
    const paid = intent.status === 'succeeded';
    const [refunds, disputes] = paid
      ? await Promise.all([
          stripe.refunds.list({ payment_intent: intent.id, ...PAGE }).autoPagingToArray({ limit: 10_000 }),
          stripe.disputes.list({ payment_intent: intent.id, ...PAGE }).autoPagingToArray({ limit: 10_000 }),
        ])
      : [[], []];
    return {
      kind: 'payment',
      reference: intent.id,
      transactionId: intent.metadata.transaction_id ?? null,
      created: dateOf(intent.created),
      currency: intent.currency.toUpperCase(),
      amount: toMinorUnits(intent.amount),
      captured: toMinorUnits(paid ? intent.amount_received : 0),
      // Stripe counts a pending refund as refunded (the charge's amount_refunded), and so does the ledger.
      refunded: toMinorUnits(
        refunds
          .filter((refund) => refund.status === 'succeeded' || refund.status === 'pending')
          .reduce((sum, refund) => sum + refund.amount, 0),
      ),
      disputes: disputes.map((dispute) => ({
        id: dispute.id,
        amount: toMinorUnits(dispute.amount),
        outcome: OPEN_DISPUTES.has(dispute.status) ? 'open' : dispute.status === 'lost' ? 'lost' : 'won',
      })),
      settled:
        (paid || intent.status === 'canceled') &&
        !disputes.some((dispute) => OPEN_DISPUTES.has(dispute.status)),
    };
  };

  /** A transfer to a connected account as reconciliation reads it, with the payout it paid for (if any). */
  const payoutRecord = (
    transfer: Stripe.Transfer,
    payout: Stripe.Payout | undefined,
  ): ProviderPayoutRecord => ({
    kind: 'payout',
    reference: transfer.id,
    payout: payout?.id ?? null,
    payoutAmount: payout ? toMinorUnits(payout.amount) : null,
    transactionId: transfer.metadata.transaction_id ?? null,
    created: dateOf(transfer.created),
    currency: transfer.currency.toUpperCase(),
    amount: toMinorUnits(transfer.amount),
    reversed: toMinorUnits(transfer.amount_reversed),
    status: payout?.status === 'paid' || payout?.status === 'failed' ? payout.status : 'open',
    failureReason: payout?.failure_message ?? null,
  });

  /** The payouts made on a connected account since `created`, by the transaction in their metadata. */
  const payoutsOn = async (account: string, created: Stripe.RangeQueryParam) => {
    const found = new Map<string, Stripe.Payout>();
    for await (const payout of stripe.payouts.list({ created, ...PAGE }, { stripeAccount: account })) {
      const transactionId = payout.metadata?.transaction_id;
      if (transactionId) found.set(transactionId, payout);
    }
    return found;
  };

  return {
    name: 'stripe',
    idempotencyKeyLifetimeMs: STRIPE_IDEMPOTENCY_KEY_LIFETIME_MS,

    async *recordsSince(since) {
      const created = { gte: Math.floor(since.getTime() / 1000) };
      const seen = new Set<string>();
      for await (const intent of stripe.paymentIntents.list({ created, ...PAGE })) {
        seen.add(intent.id);
        yield await paymentRecord(intent);
      }
      // A refund or dispute made since may be of an older payment: that one is read again as well.
      const older = new Set<string>();
      for await (const refund of stripe.refunds.list({ created, ...PAGE }))
        older.add(idOf(refund.payment_intent) ?? '');
      for await (const dispute of stripe.disputes.list({ created, ...PAGE }))
        older.add(idOf(dispute.payment_intent) ?? '');
      for (const id of older) {
        if (id && !seen.has(id)) yield await paymentRecord(await stripe.paymentIntents.retrieve(id));
      }
      const accounts = new Map<string, Promise<Map<string, Stripe.Payout>>>();
      for await (const transfer of stripe.transfers.list({ created, ...PAGE })) {
        const account = idOf(transfer.destination);
        const transactionId = transfer.metadata.transaction_id;
        if (account && !accounts.has(account)) accounts.set(account, payoutsOn(account, created));
        const payouts = account ? await accounts.get(account) : undefined;
        yield payoutRecord(transfer, transactionId ? payouts?.get(transactionId) : undefined);
      }
    },

    async recordOf(reference, transactionId) {
      const missing = (error: unknown) => {
        if (error instanceof Stripe.errors.StripeInvalidRequestError && error.code === 'resource_missing')
          return null;
        throw error;
      };
      if (reference.startsWith('pi_')) {
        const intent = await stripe.paymentIntents.retrieve(reference).catch(missing);
        return intent && paymentRecord(intent);
      }
      const transfer = await stripe.transfers.retrieve(reference).catch(missing);
      if (!transfer) return null;
      const account = idOf(transfer.destination);
      const payouts = account ? await payoutsOn(account, { gte: transfer.created }) : undefined;
      return payoutRecord(transfer, transactionId ? payouts?.get(transactionId) : undefined);
    },

    async createPayment({ transactionId, amount, currency, paymentMethod }) {
      // Paid at once with the method the deposit named, as Stripe's confirm=true does: a card (no redirect to
      // follow, there being no payer's browser to send back).
      const paying: Partial<Stripe.PaymentIntentCreateParams> = paymentMethod
        ? {
            payment_method: paymentMethod,
            confirm: true,
            automatic_payment_methods: { enabled: true, allow_redirects: 'never' },
          }
        : {};
      try {
        const intent = await stripe.paymentIntents.create(
          {
            amount: Number(amount),
            currency: currency.toLowerCase(),
            // Stripe returns the metadata with the payment's events: its webhook joins the deposit's trace.
            metadata: { transaction_id: transactionId, ...currentTraceCarrier() },
            description: `Deposit ${transactionId}`,
            ...paying,
          },
          { idempotencyKey: transactionId },
        );
        return { reference: intent.id, clientSecret: intent.client_secret };
      } catch (error) {
        // A declined card made the PaymentIntent all the same, waiting for another method (requires_payment_method):
        // the deposit stays pending, and Stripe's payment_intent.payment_failed tells it why.
        const declined = error instanceof Stripe.errors.StripeCardError ? error : null;
        const intent = declined?.payment_intent;
        if (declined && paymentMethod && intent?.id && intent.metadata?.transaction_id === transactionId) {
          return { reference: intent.id, clientSecret: intent.client_secret, declined: declined.message };
        }
        throw refusalOf(error) ?? error;
      }
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

    async createPayout({ transactionId, amount, currency, destination }, sequence = {}) {
      const next = sequence.betweenCalls ?? (async () => undefined);
      const money = { amount: Number(amount), currency: currency.toLowerCase() };
      const metadata = { transaction_id: transactionId };
      const transfer = await calling(() =>
        stripe.transfers.create(
          { ...money, destination, metadata, transfer_group: transactionId },
          { idempotencyKey: `${transactionId}:transfer` },
        ),
      );
      await next();
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
        await next();
        await reverse(transfer.id, transactionId, `${transactionId}:reversal`);
        throw refusal;
      }
    },

    reversePayout: (transfer, transactionId) => reverse(transfer, transactionId, `${transactionId}:reversal`),

    reverseTransfer: (transfer, idempotencyKey) => reverse(transfer, null, idempotencyKey),

    async refundPayment(reference, idempotencyKey) {
      const refund = await calling(() =>
        stripe.refunds.create({ payment_intent: reference }, { idempotencyKey }),
      );
      return refund.id;
    },

    async createRefund({ refundId, transactionId, payment, amount, currency, reason }) {
      const refund = await calling(() =>
        stripe.refunds.create(
          {
            payment_intent: payment,
            amount: Number(amount),
            ...(reason && { reason }),
            metadata: { transaction_id: transactionId, refund_id: refundId },
          },
          { idempotencyKey: `refund:${refundId}` },
        ),
      );
      if (refund.currency.toUpperCase() !== currency) {
        throw new Error(`refund ${refund.id} is in ${refund.currency}; the deposit is in ${currency}`);
      }
      const status =
        refund.status === 'succeeded' || refund.status === 'failed' || refund.status === 'canceled'
          ? refund.status
          : 'pending';
      return { reference: refund.id, status, failureReason: refund.failure_reason ?? null };
    },

    async createPayoutAccount({ userId, replacement = 0 }) {
      const account = await calling(() =>
        stripe.accounts.create(
          {
            type: 'express',
            metadata: { user_id: userId },
            capabilities: { transfers: { requested: true } },
            // The ledger pays each withdrawal out itself; Stripe's automatic payouts would sweep the balance.
            settings: { payouts: { schedule: { interval: 'manual' } } },
          },
          // A replacement is another account: a key of its own (the first keeps the key it always had).
          { idempotencyKey: `payout-account:${userId}${replacement > 0 ? `:${replacement}` : ''}` },
        ),
      );
      return account.id;
    },

    async payoutAccountStatus(account) {
      const found = await calling(() => stripe.accounts.retrieve(account));
      return {
        payoutsEnabled: found.payouts_enabled === true,
        currentlyDue: found.requirements?.currently_due ?? [],
        disabledReason: found.requirements?.disabled_reason ?? null,
      };
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
