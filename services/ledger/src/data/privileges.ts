import { inboxPrivileges, outboxPrivileges, type RuntimePrivileges } from '@payments/service-kit';

/**
 * What the ledger's runtime role may do, table by table (docs/security.md, "Database and broker logins"). The journal and the
 * trail of admin actions are only ever appended to: the role may not update, delete or truncate them, on top of
 * the triggers that refuse it, and owns no table, so it can disable no trigger.
 */
export const privileges: RuntimePrivileges = {
  ...inboxPrivileges,
  ...outboxPrivileges,
  // Balances move under row locks (FOR NO KEY UPDATE, FOR KEY SHARE need UPDATE); a removed user's go.
  accounts: ['SELECT', 'INSERT', 'UPDATE', 'DELETE'],
  transactions: ['SELECT', 'INSERT', 'UPDATE', 'DELETE'],
  entries: ['SELECT', 'INSERT'],
  admin_actions: ['SELECT', 'INSERT'],
  idempotency_keys: ['SELECT', 'INSERT', 'DELETE'],
  transaction_references: ['SELECT', 'INSERT', 'DELETE'],
  history_counts: ['SELECT', 'INSERT', 'UPDATE', 'DELETE'],
  history_count_deltas: ['SELECT', 'INSERT', 'DELETE'],
  payout_accounts: ['SELECT', 'INSERT', 'UPDATE', 'DELETE'],
  provider_payments: ['SELECT', 'INSERT', 'UPDATE'],
  refund_reports: ['SELECT', 'INSERT', 'UPDATE'],
  refund_requests: ['SELECT', 'INSERT', 'UPDATE', 'DELETE'],
  reconciliation_cases: ['SELECT', 'INSERT', 'UPDATE'],
  reconciliation_state: ['SELECT', 'UPDATE'],
  removed_users: ['SELECT', 'INSERT'],
  removed_transactions: ['SELECT', 'INSERT'],
  removed_deposits: ['SELECT', 'INSERT'],
  platform_losses: ['SELECT', 'INSERT'],
  payment_attempt_failures: ['SELECT', 'INSERT', 'DELETE'],
  // Written by triggers on provider_payments and transactions, as the role that changes those.
  provider_request_log: ['SELECT', 'INSERT'],
  transaction_status_log: ['SELECT', 'INSERT'],
};
