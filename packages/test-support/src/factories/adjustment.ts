// Type imports only: the factory runs nothing of the ledger.
import type { Adjustment } from '../../../../services/ledger/src/domain/reversal.js';
import { minor } from './minor-units.js';

/** What the provider says it took back from a deposit in USD: `amount` in minor units, a dispute's id `dp_1`. */
export const anAdjustment = (
  kind: Adjustment['kind'],
  amount: number | bigint,
  reference = 'dp_1',
): Adjustment => ({ kind, amount: minor(amount), currency: 'usd', reference });
