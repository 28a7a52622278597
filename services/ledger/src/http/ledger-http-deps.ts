import type { OutboxRelay } from '@payments/service-kit';
import type { LedgerStore } from '../data/ledger-store.js';
import type { FeeSchedule } from '../domain/fees.js';
import type { ProviderReconciliation } from '../events/provider-reconciliation.js';
import type { TransferSettler } from '../events/transfer-settler.js';
import type { PaymentProvider } from '../provider/payment-provider.js';
import type { Accounts } from '../use-cases/accounts.js';
import type { CurrencyDirectory } from '../use-cases/currencies.js';
import type { PayoutAccounts } from '../use-cases/payout-accounts.js';
import type { Statements } from '../use-cases/statements.js';
import type { Transactions } from '../use-cases/transactions.js';

export interface LedgerHttpDeps {
  store: LedgerStore;
  accounts: Accounts;
  transactions: Transactions;
  statements: Statements;
  currencies: CurrencyDirectory;
  outbox: Pick<OutboxRelay, 'wake'>;
  /** Settles the transfers this process accepts. */
  transfers: Pick<TransferSettler, 'submit'>;
  fees: FeeSchedule;
  /** Largest amount per operation, in major units. */
  maxAmount: number;
  /** The payment provider deposits and payouts are asked of; null: none (confirmations come from outside). */
  provider: PaymentProvider | null;
  /** Where each user's withdrawals are paid out through the provider. */
  payoutAccounts: PayoutAccounts;
  /** Reconciliation with the provider's records; null without a provider. */
  reconciliation: Pick<ProviderReconciliation, 'run' | 'resolve'> | null;
}
