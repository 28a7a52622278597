import type { MinorUnits } from '@payments/contracts';

/**
 * The ledger's port to a payment provider: what it asks for each movement of money. Every call is safe to repeat
 * (the transaction id is the provider's idempotency key), so a call whose answer was lost is simply made again.
 *
 * An adapter throws `ProviderRefusal` when the provider refused the request for good (a bad card number, an amount
 * it does not accept): the transaction fails with the provider's reason. Anything else it throws (the network, the
 * provider's 5xx or 429, a wrong key) is passing: the call is tried again later, with backoff.
 */
export interface PaymentProvider {
  /** Its name, recorded with every payment ('stripe'). */
  readonly name: string;
  /**
   * How long the provider remembers an idempotency key after its first use: past it, a call repeated with the key
   * may be made anew (Stripe: a second transfer). A request is not made again with keys older than that.
   */
  readonly idempotencyKeyLifetimeMs: number;
  /**
   * Creates the payment a payer pays a deposit with; the same transaction always gets the same payment. With a
   * payment method, the payment is confirmed with it as it is made (Stripe: `confirm=true`): a declined method
   * still makes the payment, left for another method (`declined` says why), and is not a refusal.
   */
  createPayment(request: NewPayment): Promise<CreatedPayment>;
  /** Cancels a payment nobody paid (the deposit expired). A payment already ended is left as it is. */
  cancelPayment(reference: string, transactionId: string): Promise<void>;
  /**
   * Pays a withdrawal out to the user's connected account and on to its bank (Stripe Connect: a transfer from the
   * platform's balance, then a payout on the connected account). The same transaction always gets the same payout.
   */
  createPayout(request: PayoutRequest, sequence?: CallSequence): Promise<CreatedPayout>;
  /** Takes back from the connected account what a payout that failed (or came back) had transferred to it. */
  reversePayout(transfer: string, transactionId: string): Promise<void>;
  /**
   * Gives back to the payer, in full, what a payment kept (an extra capture an operator decided to return); the same
   * key makes it once. Resolves with the provider's refund (Stripe: `re_…`).
   */
  refundPayment(reference: string, idempotencyKey: string): Promise<string>;
  /**
   * Refunds a paid payment, in whole or in part, as the ledger was asked to (POST /transaction/{id}/refund): the
   * same refund id always makes the same refund (Stripe: a Refund on the PaymentIntent, its idempotency key
   * `refund:<id>`, the id in its metadata so that its events name it). Resolves with where the refund stands.
   */
  createRefund(request: RefundRequest): Promise<CreatedRefund>;
  /** Takes back what a transfer left on a connected account (an extra transfer); the same key makes it once. */
  reverseTransfer(transfer: string, idempotencyKey: string): Promise<void>;
  /**
   * Makes the connected account a user is paid out to (Stripe: `acct_…`); the same user gets the same account, and
   * each replacement (`replacement`: 1 for the first) one of its own.
   */
  createPayoutAccount(request: { userId: string; replacement?: number }): Promise<string>;
  /** Whether the provider pays out to a connected account now, and what it still needs (Stripe: the account). */
  payoutAccountStatus(account: string): Promise<PayoutAccountStatus>;
  /** Where the user completes (or resumes) the provider's onboarding of their account (Stripe: an account link). */
  onboardingLink(account: string): Promise<string>;
  /**
   * The provider's own records of the payments and payouts made since `since`, and of the older ones a refund or
   * dispute made since then touched: what reconciliation compares with the books. Paged through as it goes.
   */
  recordsSince(since: Date): AsyncIterable<ProviderRecord>;
  /** One record again, as it stands now (reconciliation resolving a case); null when the provider has none. */
  recordOf(reference: string, transactionId: string | null): Promise<ProviderRecord | null>;
}

/** A connected account's readiness (Stripe: `payouts_enabled`, `requirements.currently_due`, `disabled_reason`). */
export interface PayoutAccountStatus {
  payoutsEnabled: boolean;
  currentlyDue: string[];
  disabledReason: string | null;
}

/** A payment as the provider records it (Stripe: a PaymentIntent, with its refunds and disputes). */
export interface ProviderPaymentRecord {
  kind: 'payment';
  /** Stripe: `pi_…`. */
  reference: string;
  /** The transaction the ledger made it for (its metadata), null when it names none. */
  transactionId: string | null;
  created: Date;
  /** ISO 4217, upper case. */
  currency: string;
  /** What it asks the payer for. */
  amount: MinorUnits;
  /** What the payer paid (0 until it succeeded). */
  captured: MinorUnits;
  /** Refunded in total. */
  refunded: MinorUnits;
  /** Its disputes: a lost one took its amount back; an open one may still. */
  disputes: { id: string; amount: MinorUnits; outcome: 'open' | 'won' | 'lost' }[];
  /** Nothing more will change without someone acting: paid or canceled, and no dispute open. */
  settled: boolean;
}

/** A payout as the provider records it (Stripe Connect: the transfer to the connected account, and its payout). */
export interface ProviderPayoutRecord {
  kind: 'payout';
  /** Stripe: the transfer's `tr_…`, what moved the platform's money. */
  reference: string;
  /** Stripe: the payout's `po_…` on the connected account; null when none was made. */
  payout: string | null;
  /** What the payout paid to the bank; null when none was made. */
  payoutAmount: MinorUnits | null;
  transactionId: string | null;
  created: Date;
  currency: string;
  amount: MinorUnits;
  /** Taken back from the connected account (the transfer's reversals). */
  reversed: MinorUnits;
  /** The payout's end at the bank; open while it is on its way (or none was made). */
  status: 'paid' | 'failed' | 'open';
  failureReason: string | null;
}

export type ProviderRecord = ProviderPaymentRecord | ProviderPayoutRecord;

/** What a record leaves with the platform for it: captured less given back, or (a payout) what stayed paid out. */
export function providerNet(record: ProviderRecord): bigint {
  if (record.kind === 'payout') return record.amount - record.reversed;
  const lost = record.disputes.filter((dispute) => dispute.outcome === 'lost');
  return record.captured - record.refunded - lost.reduce((sum, dispute) => sum + dispute.amount, 0n);
}

/** What the caller of a method that makes several calls in a row asks of it. */
export interface CallSequence {
  /**
   * Awaited before each call but the first; a rejection stops the sequence there, with that error (the caller
   * no longer holds the request, and another worker makes its calls now).
   */
  betweenCalls?: () => Promise<void>;
}

export interface PayoutRequest extends PaymentRequest {
  /** The user's connected account (Stripe: `acct_…`). */
  destination: string;
}

export interface CreatedPayout {
  /** The provider's id for the payout (Stripe: `po_…`), which its payout.paid / payout.failed events name. */
  reference: string;
  /** What moved the money to the connected account (Stripe: `tr_…`), reversed should the payout fail. */
  transfer: string;
}

export interface PaymentRequest {
  transactionId: string;
  /** Minor units of `currency`, as the provider counts them. */
  amount: MinorUnits;
  /** ISO 4217, upper case. */
  currency: string;
}

export interface NewPayment extends PaymentRequest {
  /** The method to pay with at once (Stripe: `pm_…`); absent, the payer's client confirms the payment later. */
  paymentMethod?: string;
}

export interface RefundRequest {
  /** The ledger's refund: the reversal it holds the amount with. */
  refundId: string;
  /** The deposit refunded, and the provider's payment it was paid with (Stripe: `pi_…`). */
  transactionId: string;
  payment: string;
  amount: MinorUnits;
  currency: string;
  reason: 'duplicate' | 'fraudulent' | 'requested_by_customer' | null;
}

export interface CreatedRefund {
  /** The provider's id for the refund (Stripe: `re_…`). */
  reference: string;
  /** pending: its outcome comes later, in the provider's events. */
  status: 'pending' | 'succeeded' | 'failed' | 'canceled';
  failureReason: string | null;
}

export interface CreatedPayment {
  /** The provider's id for the payment (Stripe: the PaymentIntent's `pi_…`). */
  reference: string;
  /** What the payer's client confirms the payment with (Stripe: the PaymentIntent's `client_secret`). */
  clientSecret: string | null;
  /**
   * The provider declined the payment method the payment was confirmed with: its words. The payment stays open
   * for another method; the deposit learns of the decline from the provider's event, as of any other attempt.
   */
  declined?: string;
}

/** The provider refused a request for good: retrying it would be refused again. */
export class ProviderRefusal extends Error {
  override name = 'ProviderRefusal';
  constructor(
    /** The provider's reason, fit to show the transaction's owner. */
    readonly reason: string,
    /** The provider's code for it, when it gave one. */
    readonly code?: string,
  ) {
    super(reason);
  }
}
