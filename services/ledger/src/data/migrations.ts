import { inboxByAgeMigration, inboxMigration, outboxMigration, type Migration } from '@payments/service-kit';
import { accounts } from './migrations/001_accounts.js';
import { transactions } from './migrations/002_transactions.js';
import { entries } from './migrations/003_entries.js';
import { idempotencyKeys } from './migrations/004_idempotency_keys.js';
import { historyCounts } from './migrations/005_history_counts.js';
import { reconciliationAndRemovals } from './migrations/006_reconciliation_and_removals.js';
import { statementEntriesIndex } from './migrations/007_statement_entries_index.js';
import { reversals } from './migrations/008_reversals.js';
import { acceptRequestsFunction } from './migrations/009_accept_requests_function.js';
import { overdrawnByShortfall } from './migrations/010_overdrawn_index_by_shortfall.js';
import { refundReports } from './migrations/011_refund_reports.js';
import { returnedMoney } from './migrations/012_returned_money_reversals.js';
import { providerPayments } from './migrations/013_provider_payments.js';
import { payoutAccounts } from './migrations/014_payout_accounts.js';
import { providerReferenceIndex } from './migrations/015_provider_reference_index.js';
import { providerReconciliation } from './migrations/016_provider_reconciliation.js';
import { removedTransactions } from './migrations/017_removed_transactions.js';
import { platformLosses } from './migrations/018_platform_losses.js';
import { reconciliationGivesBack } from './migrations/019_reconciliation_gives_back.js';
import { adminActionOwner } from './migrations/020_admin_action_owner.js';
import { acceptRequestsPayoutAccount } from './migrations/021_accept_requests_payout_account.js';
import { providerRequestAges } from './migrations/022_provider_request_ages.js';
import { outboxTraceContext } from './migrations/023_outbox_trace_context.js';
import { providerPaymentTraceContext } from './migrations/024_provider_payment_trace_context.js';
import { acceptRequestsTraceContext } from './migrations/025_accept_requests_trace_context.js';
import { transactionReferences } from './migrations/026_transaction_references.js';
import { acceptRequestsReferences } from './migrations/027_accept_requests_references.js';
import { providerPaymentMethod } from './migrations/031_provider_payment_method.js';
import { refundRequests } from './migrations/028_refund_requests.js';
import { payoutAccountReadiness } from './migrations/029_payout_account_readiness.js';
import { transactionTimeline } from './migrations/032_transaction_timeline.js';
import { overviewAndExposure } from './migrations/035_overview_and_exposure.js';

/**
 * The ledger's schema, in the order it is built: one migration per file in migrations/, each file named as knex
 * records it. A migration that ran is never changed (e2e/migrations-forward pins its SQL): a change is a new one.
 */
export const migrations: Migration[] = [
  inboxMigration,
  inboxByAgeMigration,
  outboxMigration,
  accounts,
  transactions,
  // The journal: append-only, and balanced per transaction and currency at commit.
  entries,
  idempotencyKeys,
  historyCounts,
  reconciliationAndRemovals,
  statementEntriesIndex,
  // The balance guard as it stands (accounts_user_balances): below zero only by a reversal's shortfall.
  reversals,
  acceptRequestsFunction,
  overdrawnByShortfall,
  refundReports,
  returnedMoney,
  providerPayments,
  payoutAccounts,
  providerReferenceIndex,
  providerReconciliation,
  removedTransactions,
  platformLosses,
  reconciliationGivesBack,
  adminActionOwner,
  // The insufficient-funds and payout-account refusals in ledger_accept_requests.
  acceptRequestsPayoutAccount,
  providerRequestAges,
  // The trace context with each outbox row and provider request.
  outboxTraceContext,
  providerPaymentTraceContext,
  // 021's rules, each request's trace context with its outbox row.
  acceptRequestsTraceContext,
  // A transaction's metadata and reference, unique per user, and the reference's claim.
  transactionReferences,
  // ledger_accept_requests as it stands: 025's, and the reference claimed with the transaction.
  acceptRequestsReferences,
  // The payment method a deposit is paid with at once.
  providerPaymentMethod,
  refundRequests,
  // Each payout account's readiness at the provider (account.updated), and its replacement.
  payoutAccountReadiness,
  // Each provider request's steps and each status change, logged; the indexes of operators' search.
  transactionTimeline,
  // The admin overview's and the chargeback exposure's indexes, and each declined payment attempt.
  overviewAndExposure,
];
