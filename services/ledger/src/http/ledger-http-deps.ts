import type { Accounts } from '../use-cases/accounts.js';
import type { AdminActions } from '../use-cases/admin-actions.js';
import type { ChargebackExposure } from '../use-cases/chargeback-exposure.js';
import type { AdminTransactions } from '../use-cases/admin-transactions.js';
import type { CurrencyDirectory } from '../use-cases/currencies.js';
import type { Maintenance } from '../use-cases/maintenance.js';
import type { MoneyRequests } from '../use-cases/money-requests.js';
import type { PayoutAccounts } from '../use-cases/payout-accounts.js';
import type { Reconciliation } from '../use-cases/reconciliation.js';
import type { Overviews } from '../use-cases/overview.js';
import type { Refunds } from '../use-cases/refunds.js';
import type { Reversals } from '../use-cases/reversals.js';
import type { Statements } from '../use-cases/statements.js';
import type { Transactions } from '../use-cases/transactions.js';

export interface LedgerHttpDeps {
  accounts: Accounts;
  transactions: Transactions;
  statements: Statements;
  moneyRequests: MoneyRequests;
  /** Refunds of completed deposits asked for through the API. */
  refunds: Pick<Refunds, 'request'>;
  /** For rendering amounts in their currencies' units. */
  currencies: CurrencyDirectory;
  /** Where each user's withdrawals are paid out through the provider. */
  payoutAccounts: PayoutAccounts;
  adminActions: AdminActions;
  reversals: Pick<Reversals, 'overdrawn'>;
  maintenance: Pick<Maintenance, 'audit'>;
  reconciliation: Reconciliation;
  /** The admin overview: activity for charts and the platform's gauges (ADR 0127). */
  overviews: Overviews;
  chargebackExposure: ChargebackExposure;
  /** Operators' search of every user's transactions, and each one's timeline. */
  adminTransactions: AdminTransactions;
  /** Where the gateway serves the payment page (`{base}/pay/{id}`), or null where none is shown (ADR 0128). */
  paymentPageBase: string | null;
}
