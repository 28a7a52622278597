import type {
  CreatedPayment,
  NewPayment,
  PaymentProvider,
  PayoutAccountStatus,
  PayoutRequest,
  ProviderRecord,
  RefundRequest,
} from '../../src/provider/payment-provider.js';
import { STRIPE_IDEMPOTENCY_KEY_LIFETIME_MS } from '../../src/provider/stripe-provider.js';

/** A call the ledger made to the provider, in the order made. */
export type ProviderCall =
  | { call: 'createPayment'; request: NewPayment }
  | { call: 'cancelPayment'; reference: string; transactionId: string }
  | { call: 'createPayout'; request: PayoutRequest }
  | { call: 'reversePayout'; transfer: string; transactionId: string }
  | { call: 'refundPayment'; reference: string; idempotencyKey: string }
  | { call: 'reverseTransfer'; transfer: string; idempotencyKey: string }
  | { call: 'createRefund'; request: RefundRequest }
  | { call: 'createPayoutAccount'; userId: string };

/**
 * Stands in for the payment provider (outside the system): records every call and answers as Stripe would, one
 * payment per transaction however often it is asked (the idempotency key). `behave` decides a call's fate first:
 * throw to fail it (a ProviderRefusal, or any other error for a provider that is down). A payment confirmed with
 * `pm_card_chargeDeclined` is made and declined, as Stripe makes it.
 */
export interface FakeProvider extends PaymentProvider {
  calls: ProviderCall[];
  behave: (call: ProviderCall) => void;
  paymentsOf(transactionId: string): ProviderCall[];
  /** Every call about one transaction, in order. */
  callsAbout(transactionId: string): ProviderCall[];
  /** What the provider's own records say (reconciliation reads them); set by the test. */
  records: ProviderRecord[];
  /** What the provider says of each connected account; one not set pays out (set by the test). */
  accountStatuses: Map<string, PayoutAccountStatus>;
}

const compact = (id: string) => id.replaceAll('-', '');

export function createFakeProvider(): FakeProvider {
  const payments = new Map<string, CreatedPayment>();
  const fake: FakeProvider = {
    name: 'stripe',
    idempotencyKeyLifetimeMs: STRIPE_IDEMPOTENCY_KEY_LIFETIME_MS,
    calls: [],
    behave: () => undefined,
    paymentsOf: (transactionId) =>
      fake.calls.filter((c) => c.call === 'createPayment' && c.request.transactionId === transactionId),
    async createPayment(request) {
      const call: ProviderCall = { call: 'createPayment', request };
      fake.calls.push(call);
      fake.behave(call);
      const existing = payments.get(request.transactionId);
      if (existing) return existing;
      const created: CreatedPayment = {
        reference: `pi_${compact(request.transactionId)}`,
        clientSecret: `pi_${compact(request.transactionId)}_secret_test`,
        ...(request.paymentMethod === 'pm_card_chargeDeclined'
          ? { declined: 'Your card was declined.' }
          : {}),
      };
      payments.set(request.transactionId, created);
      return created;
    },
    async cancelPayment(reference, transactionId) {
      const call: ProviderCall = { call: 'cancelPayment', reference, transactionId };
      fake.calls.push(call);
      fake.behave(call);
    },
    callsAbout: (transactionId) =>
      fake.calls.filter((c) =>
        'request' in c
          ? c.request.transactionId === transactionId
          : 'transactionId' in c && c.transactionId === transactionId,
      ),
    async createPayout(request) {
      const call: ProviderCall = { call: 'createPayout', request };
      fake.calls.push(call);
      fake.behave(call);
      return {
        reference: `po_${compact(request.transactionId)}`,
        transfer: `tr_${compact(request.transactionId)}`,
      };
    },
    async reversePayout(transfer, transactionId) {
      const call: ProviderCall = { call: 'reversePayout', transfer, transactionId };
      fake.calls.push(call);
      fake.behave(call);
    },
    async refundPayment(reference, idempotencyKey) {
      const call: ProviderCall = { call: 'refundPayment', reference, idempotencyKey };
      fake.calls.push(call);
      fake.behave(call);
      return `re_${idempotencyKey}`;
    },
    async createRefund(request) {
      const call: ProviderCall = { call: 'createRefund', request };
      fake.calls.push(call);
      fake.behave(call);
      return { reference: `re_${compact(request.refundId)}`, status: 'succeeded', failureReason: null };
    },
    async reverseTransfer(transfer, idempotencyKey) {
      const call: ProviderCall = { call: 'reverseTransfer', transfer, idempotencyKey };
      fake.calls.push(call);
      fake.behave(call);
    },
    async createPayoutAccount({ userId, replacement = 0 }) {
      const call: ProviderCall = { call: 'createPayoutAccount', userId };
      fake.calls.push(call);
      fake.behave(call);
      return `acct_${compact(userId).slice(0, 16)}${replacement > 0 ? `r${replacement}` : ''}`;
    },
    async payoutAccountStatus(account) {
      return (
        fake.accountStatuses.get(account) ?? { payoutsEnabled: true, currentlyDue: [], disabledReason: null }
      );
    },
    accountStatuses: new Map(),
    async onboardingLink(account) {
      return `https://connect.example/${account}`;
    },
    records: [],
    async *recordsSince(since) {
      for (const record of fake.records) if (record.created >= since) yield record;
    },
    async recordOf(reference) {
      return fake.records.find((record) => record.reference === reference) ?? null;
    },
  };
  return fake;
}
