// Type imports only: the factory runs nothing of the ledger.
import type {
  ProviderPaymentRecord,
  ProviderPayoutRecord,
} from '../../../../services/ledger/src/provider/payment-provider.js';
import { minor } from './minor-units.js';

const compact = (id: string) => id.replaceAll('-', '');

/** What every record of a transaction holds: made a minute ago, in USD, for `amount` minor units. */
const madeFor = (transactionId: string, amount: number | bigint) => ({
  transactionId,
  created: new Date(Date.now() - 60_000),
  currency: 'USD',
  amount: minor(amount),
});

/**
 * The provider's record of a deposit's PaymentIntent (`pi_<id>`), made a minute ago and paid in full: `amount` in
 * minor units of USD.
 */
export const aPaymentRecord = (
  transactionId: string,
  amount: number | bigint,
  over: Partial<ProviderPaymentRecord> = {},
): ProviderPaymentRecord => ({
  kind: 'payment',
  reference: `pi_${compact(transactionId)}`,
  ...madeFor(transactionId, amount),
  captured: minor(amount),
  refunded: minor(0),
  disputes: [],
  settled: true,
  ...over,
});

/**
 * The provider's record of a withdrawal's transfer (`tr_<id>`) and its payout (`po_<id>`), made a minute ago and
 * paid: `amount` in minor units of USD; `payout: null` for a transfer that was never paid out.
 */
export function aPayoutRecord(
  transactionId: string,
  amount: number | bigint,
  over: Partial<ProviderPayoutRecord> = {},
): ProviderPayoutRecord {
  const paidOut = over.payout !== null;
  return {
    kind: 'payout',
    reference: `tr_${compact(transactionId)}`,
    payout: paidOut ? `po_${compact(transactionId)}` : null,
    payoutAmount: paidOut ? minor(amount) : null,
    ...madeFor(transactionId, amount),
    reversed: minor(0),
    status: 'paid',
    failureReason: null,
    ...over,
  };
}
