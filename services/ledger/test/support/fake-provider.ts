import type { CreatedPayment, PaymentProvider, PaymentRequest } from '../../src/provider/payment-provider.js';

/** A call the ledger made to the provider, in the order made. */
export type ProviderCall =
  | { call: 'createPayment'; request: PaymentRequest }
  | { call: 'cancelPayment'; reference: string; transactionId: string };

/**
 * Stands in for the payment provider (outside the system): records every call and answers as Stripe would, one
 * payment per transaction however often it is asked (the idempotency key). `behave` decides a call's fate first:
 * throw to fail it (a ProviderRefusal, or any other error for a provider that is down).
 */
export interface FakeProvider extends PaymentProvider {
  calls: ProviderCall[];
  behave: (call: ProviderCall) => void;
  paymentsOf(transactionId: string): ProviderCall[];
}

export function createFakeProvider(): FakeProvider {
  const payments = new Map<string, CreatedPayment>();
  const fake: FakeProvider = {
    name: 'stripe',
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
      const created = {
        reference: `pi_${request.transactionId.replaceAll('-', '')}`,
        clientSecret: `pi_${request.transactionId.replaceAll('-', '')}_secret_test`,
      };
      payments.set(request.transactionId, created);
      return created;
    },
    async cancelPayment(reference, transactionId) {
      const call: ProviderCall = { call: 'cancelPayment', reference, transactionId };
      fake.calls.push(call);
      fake.behave(call);
    },
  };
  return fake;
}
