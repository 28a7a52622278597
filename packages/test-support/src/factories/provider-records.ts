// Type imports only: the factory runs nothing of the ledger.
import type {
  ProviderPaymentRecord,
  ProviderPayoutRecord,
} from '../../../../services/ledger/src/provider/payment-provider.js';
import { minor } from './minor-units.js';

const compact = (id: string) => id.replaceAll('-', '');
const aMinuteAgo = () => new Date(Date.now() - 60_000);

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
  transactionId,
  created: aMinuteAgo(),
  currency: 'USD',
  amount: minor(amount),
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
export const aPayoutRecord = (
  transactionId: string,
  amount: number | bigint,
  over: Partial<ProviderPayoutRecord> = {},
): ProviderPayoutRecord => ({
  kind: 'payout',
  reference: `tr_${compact(transactionId)}`,
  payout: `po_${compact(transactionId)}`,
  payoutAmount: over.payout === null ? null : minor(amount),
  transactionId,
  created: aMinuteAgo(),
  currency: 'USD',
  amount: minor(amount),
  reversed: minor(0),
  status: 'paid',
  failureReason: null,
  ...over,
});
