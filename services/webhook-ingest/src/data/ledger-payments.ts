import { createServiceClient } from '@payments/service-kit';

/** What the ledger says a deposit or withdrawal is for. */
export interface PaymentTerms {
  type: 'deposit' | 'withdrawal';
  /** Minor units. */
  amount: number;
  currency: string;
}

export interface LedgerPayments {
  /** The terms of a payment the ledger knows; null when it knows none by that id. Throws when it cannot say. */
  termsOf(transactionId: string, requestId: string): Promise<PaymentTerms | null>;
}

function isPaymentTerms(body: unknown): body is PaymentTerms {
  const candidate = body as Partial<PaymentTerms> | null;
  return (
    (candidate?.type === 'deposit' || candidate?.type === 'withdrawal') &&
    Number.isSafeInteger(candidate.amount) &&
    typeof candidate.currency === 'string' &&
    /^[A-Z]{3}$/.test(candidate.currency)
  );
}

/** The ledger's internal `GET /internal/payments/:id`. */
export function createLedgerPayments(ledgerUrl: string, serviceToken: string): LedgerPayments {
  const client = createServiceClient(ledgerUrl, { serviceToken });
  return {
    async termsOf(transactionId, requestId) {
      const response = await client
        .get<unknown>(`/internal/payments/${encodeURIComponent(transactionId)}`, {
          'x-request-id': requestId,
        })
        .catch(() => {
          throw ledgerCannotSay(transactionId);
        });
      if (response.status === 404) return null;
      if (response.status !== 200 || !isPaymentTerms(response.body)) throw ledgerCannotSay(transactionId);
      return response.body;
    },
  };
}

// A 500: the provider retries later, and nothing is recorded that would confirm the payment without its terms.
const ledgerCannotSay = (transactionId: string) =>
  new Error(`the ledger could not say what payment ${transactionId} is for`);
